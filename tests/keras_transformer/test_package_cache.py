"""The package's one cache folder and the variable that moves or disables it."""

import os

from keras_transformer.package_cache import CACHE_ENV, package_cache_folder


def test_the_folder_follows_the_environment(tmp_path):
    assert package_cache_folder({CACHE_ENV: str(tmp_path)}) == str(tmp_path)
    assert package_cache_folder({CACHE_ENV: ""}) is None
    xdg = {"XDG_CACHE_HOME": "/c"}
    assert package_cache_folder(xdg) == "/c/keras-transformer"
    assert package_cache_folder({**xdg, CACHE_ENV: "/d"}) == "/d"
    home = os.path.expanduser("~")
    expected = os.path.join(home, ".cache", "keras-transformer")
    assert package_cache_folder({}) == expected
