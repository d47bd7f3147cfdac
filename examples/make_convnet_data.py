#!/usr/bin/python3
"""Writes the conv net example's weights and input, and NumPy's result for them.

    /usr/bin/python3 examples/make_convnet_data.py

examples/convnet_params.npz holds @main's weights by parameter name,
examples/convnet_input.npy a batch of two 12x12 single-channel "images", and
tests/fixtures/examples/convnet_expected.npy the softmax probabilities NumPy
computes for them in float64 (the oracle tests/tools/examples_test.cc compares
with). The weights are random (fixed seed), scaled like a trained layer's
(uniform in +-1/sqrt(fan_in)).
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def conv2d_same_3x3(images, weight, bias):
    """NCHW convolution, 3x3 kernel, stride 1, zero padding 1 (cross-correlation as in Relay)."""
    batch, _, height, width = images.shape
    padded = np.pad(images, ((0, 0), (0, 0), (1, 1), (1, 1)))
    out = np.zeros((batch, weight.shape[0], height, width))
    for dy in range(3):
        for dx in range(3):
            window = padded[:, :, dy:dy + height, dx:dx + width]
            out += np.einsum("bihw,oi->bohw", window, weight[:, :, dy, dx])
    return out + bias[None, :, None, None]


def max_pool_2x2(images):
    batch, channels, height, width = images.shape
    return images.reshape(batch, channels, height // 2, 2, width // 2, 2).max(axis=(3, 5))


def main():
    rng = np.random.default_rng(20261123)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    params = {
        "conv1_weight": uniform((4, 1, 3, 3), 9),
        "conv1_bias": uniform((4,), 9),
        "conv2_weight": uniform((8, 4, 3, 3), 36),
        "conv2_bias": uniform((8,), 36),
        "dense_weight": uniform((10, 72), 72),
        "dense_bias": uniform((10,), 72),
    }
    images = rng.integers(0, 17, (2, 1, 12, 12)).astype(np.float32) / 16.0

    p = {name: value.astype(np.float64) for name, value in params.items()}
    hidden = max_pool_2x2(np.maximum(conv2d_same_3x3(images.astype(np.float64), p["conv1_weight"],
                                                     p["conv1_bias"]), 0))
    hidden = max_pool_2x2(np.maximum(conv2d_same_3x3(hidden, p["conv2_weight"], p["conv2_bias"]), 0))
    logits = hidden.reshape(hidden.shape[0], -1) @ p["dense_weight"].T + p["dense_bias"]
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)

    np.savez(os.path.join(ROOT, "examples", "convnet_params.npz"), **params)
    np.save(os.path.join(ROOT, "examples", "convnet_input.npy"), images)
    os.makedirs(os.path.join(ROOT, "tests", "fixtures", "examples"), exist_ok=True)
    np.save(os.path.join(ROOT, "tests", "fixtures", "examples", "convnet_expected.npy"),
            probabilities.astype(np.float32))


if __name__ == "__main__":
    main()
