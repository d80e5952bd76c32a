import numpy as np

from keras_transformer.decoding import length_penalty


def test_gnmt_formula():
    lengths = np.array([1, 7, 50])
    np.testing.assert_allclose(
        np.array(length_penalty(lengths, 0.6)), ((5 + lengths) / 6) ** 0.6, rtol=1e-6
    )
    np.testing.assert_allclose(np.array(length_penalty(lengths, 0.0)), 1.0)
