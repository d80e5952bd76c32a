"""The documentation site builds in strict mode, and its API pages document
every public name (BUILD_NOTES, "Documentation").

The site is built once per test run into a temporary folder with
`mkdocs build --strict` (a broken link, a missing page or a docstring whose
`Args:` name a parameter the signature lacks fails the build); the tests
read the built HTML with the standard library's parser.
"""

import html.parser
import importlib
import inspect
import os
import pathlib
import re
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

# Each package whose `__all__` the API reference lists, and its page.
API_PAGES = {
    "keras_transformer": "api/keras_transformer",
    "keras_transformer.layers": "api/layers",
    "keras_transformer.decoding": "api/decoding",
    "keras_transformer.runs": "api/runs",
    "keras_transformer.workflows": "api/workflows",
    "pipelines": "api/pipelines",
    "savedmodels": "api/savedmodels",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    site_dir = tmp_path_factory.mktemp("site")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-d", str(site_dir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    return site_dir


class _Page(html.parser.HTMLParser):
    """The ids, headings (level, id, text) and tables (rows of cell texts) of
    one HTML page."""

    def __init__(self, text):
        super().__init__()
        self.ids, self.headings, self.tables = set(), [], []
        self._heading = None
        self._cell = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if re.fullmatch(r"h[1-6]", tag):
            self._heading = [int(tag[1]), attrs.get("id"), ""]
        elif tag == "table":
            self.tables.append([])
        elif tag == "tr" and self.tables:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.tables:
            self._cell = ""

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self._heading:
            self._heading[2] = " ".join(self._heading[2].replace("¶", "").split())
            self.headings.append(tuple(self._heading))
            self._heading = None
        elif tag in ("td", "th") and self._cell is not None:
            self.tables[-1][-1].append(" ".join(self._cell.split()))
            self._cell = None

    def handle_data(self, data):
        if self._heading is not None:
            self._heading[2] += data
        if self._cell is not None:
            self._cell += data


def read_page(site, page):
    return _Page((site / page / "index.html").read_text("utf-8"))


def documented_path(package, name):
    """The path the API page documents `package.name` under: where it is
    defined (the top-level packages import their names on first use, which
    the static docs reader cannot follow)."""
    value = getattr(package, name)
    if inspect.ismodule(value):
        return value.__name__
    if inspect.isclass(value) or inspect.isfunction(value):
        return f"{value.__module__}.{value.__qualname__}"
    folder = ROOT / package.__name__.replace(".", "/")
    for path in sorted(folder.rglob("*.py")):
        if re.search(rf"^{name}\s*(:[^=]+)?=", path.read_text("utf-8"), flags=re.M):
            return ".".join(path.relative_to(ROOT).with_suffix("").parts) + "." + name
    raise AssertionError(f"no definition of {package.__name__}.{name}")


@pytest.mark.parametrize("module_name", sorted(API_PAGES))
def test_api_pages_list_every_public_name(site, module_name):
    package = importlib.import_module(module_name)
    page = read_page(site, API_PAGES[module_name])
    missing, undocumented = [], []
    for name in package.__all__:
        path = documented_path(package, name)
        value = getattr(package, name)
        if inspect.ismodule(value) and path in API_PAGES:
            # A subpackage: its own page, linked from this one.
            assert (site / API_PAGES[path] / "index.html").is_file(), path
            continue
        if path not in page.ids:
            missing.append(path)
        if (inspect.isclass(value) or inspect.isfunction(value)) and not (
            inspect.getdoc(value) or ""
        ).strip():
            undocumented.append(name)
    assert not missing, f"no API entry for: {missing}"
    assert not undocumented, f"no docstring: {undocumented}"


def test_cached_attention_page_has_its_arguments(site):
    page = read_page(site, "api/layers")
    anchor = "keras_transformer.layers.cached_multi_head_attention."
    anchor += "CachedMultiHeadAttention"
    assert (2, anchor, "CachedMultiHeadAttention") in page.headings
    parameter_tables = [t for t in page.tables if t and t[0][:1] == ["Name"]]
    names = {row[0] for table in parameter_tables for row in table[1:] if row}
    # Its arguments (Keras' MultiHeadAttention's, d_k and d_v) and its call's,
    # the `Call arguments:` section as a table of its own
    # (docs/extensions/call_arguments.py).
    html_text = (site / "api" / "layers" / "index.html").read_text("utf-8")
    assert '<span class="doc-section-title">Call arguments</span>' in html_text
    assert {"num_heads", "key_dim", "value_dim"} <= names
    assert {"cache", "cache_update_index"} <= names


def test_results_page_has_headings_and_named_cpus(site):
    page = read_page(site, "results")
    assert page.headings[0][:1] == (1,) and "Results" in page.headings[0][2]
    assert len([h for h in page.headings if h[0] == 2]) >= 2
    rows = [row for table in page.tables for row in table[1:]]
    assert len(rows) >= 10
    # Every figure names the machine it was measured on (or says it was not
    # measured): a CPU column in each table, filled in each row.
    for table in page.tables:
        header = [cell.lower() for cell in table[0]]
        (column,) = [i for i, cell in enumerate(header) if cell in ("cpu", "machine")]
        for row in table[1:]:
            assert row[column], row


def test_design_page_is_the_build_notes(site):
    """BUILD_NOTES.md is rendered (not copied) into the site: its headings
    are the page's."""
    notes = (ROOT / "BUILD_NOTES.md").read_text("utf-8")
    page = read_page(site, "design")
    rendered = {text for _, _, text in page.headings}
    for heading in re.findall(r"^#{2,3} (.+)$", notes, flags=re.M):
        plain = re.sub(r"[`*]", "", heading).strip()
        assert plain in rendered, plain
