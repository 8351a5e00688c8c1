"""Keras models the chapters train (importing this package imports Keras)."""
