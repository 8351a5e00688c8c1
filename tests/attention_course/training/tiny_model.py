"""A model small enough to train in a test, for the tests of the model cache and packaged runs."""

import numpy as np


def build():
    import keras
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])


def fit(model):
    model.compile(optimizer="sgd", loss="mse")
    x = np.linspace(-1, 1, 24, dtype="float32").reshape(8, 3)
    history = model.fit(x, x[:, :2] * 2, epochs=3, verbose=0).history
    return {"loss": history["loss"], "predictions": model.predict(x, verbose=0)}
