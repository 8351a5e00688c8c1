"""keras_weights.to_numpy: the one Keras-variable-to-NumPy helper of every from_keras."""

import keras
import numpy as np

from attention_course.weights.keras_weights import to_numpy


def test_a_variable_becomes_an_array_with_its_values_and_none_stays_none():
    layer = keras.layers.Dense(3, use_bias=False)
    layer.build((None, 2))
    kernel = to_numpy(layer.kernel)
    assert isinstance(kernel, np.ndarray) and kernel.shape == (2, 3) and kernel.dtype == np.float32
    np.testing.assert_array_equal(kernel, layer.get_weights()[0])
    assert to_numpy(layer.bias) is None      # built without a bias


def test_only_the_weights_package_reads_keras_models():
    """The NumPy reference modules know no Keras attribute path: every mapping is in weights/from_keras/."""
    from pathlib import Path

    import attention_course

    for path in Path(attention_course.__file__).parent.glob("*.py"):
        source = path.read_text()
        assert "to_numpy" not in source and "import keras" not in source, path.name
