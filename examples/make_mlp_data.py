#!/usr/bin/python3
"""Writes the MLP example's weights and input, and NumPy's result for them.

    /usr/bin/python3 examples/make_mlp_data.py

examples/mlp_params.npz holds @main's weights by parameter name,
examples/mlp_input.npy a batch of three 8x8 "images" (flattened), and
tests/fixtures/examples/mlp_expected.npy the softmax probabilities NumPy
computes for them (the oracle tests/tools/examples_test.cc compares with).
The weights are random (fixed seed), scaled like a trained layer's
(uniform in +-1/sqrt(fan_in)).
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main():
    rng = np.random.default_rng(20261122)

    def layer(outputs, inputs):
        bound = 1.0 / np.sqrt(inputs)
        weight = rng.uniform(-bound, bound, (outputs, inputs)).astype(np.float32)
        bias = rng.uniform(-bound, bound, (outputs,)).astype(np.float32)
        return weight, bias

    hidden_weight, hidden_bias = layer(32, 64)
    output_weight, output_bias = layer(10, 32)
    images = rng.integers(0, 17, (3, 64)).astype(np.float32) / 16.0

    hidden = np.maximum(images.astype(np.float64) @ hidden_weight.T + hidden_bias, 0)
    logits = hidden @ output_weight.T + output_bias
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)

    np.savez(os.path.join(ROOT, "examples", "mlp_params.npz"), hidden_weight=hidden_weight,
             hidden_bias=hidden_bias, output_weight=output_weight, output_bias=output_bias)
    np.save(os.path.join(ROOT, "examples", "mlp_input.npy"), images)
    os.makedirs(os.path.join(ROOT, "tests", "fixtures", "examples"), exist_ok=True)
    np.save(os.path.join(ROOT, "tests", "fixtures", "examples", "mlp_expected.npy"),
            probabilities.astype(np.float32))


if __name__ == "__main__":
    main()
