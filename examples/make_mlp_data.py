#!/usr/bin/python3
"""Writes the MLP example's weights and input, and NumPy's result for them.

    build/release/relay-vm run examples/train_mlp.relay --params examples/train_mlp_init.npz \\
        --input train_images=examples/digits_train_images.npy \\
        --input train_labels=examples/digits_train_labels.npy \\
        --input test_images=examples/digits_test_images.npy \\
        --input test_labels=examples/digits_test_labels.npy \\
        --input epochs=20 --input batch=32 --input rate=0.1 --output build/train_mlp.npz
    /usr/bin/python3 examples/make_mlp_data.py build/train_mlp.npz

The weights are those examples/train_mlp.relay trained (its result's
fields 2 to 5: out2 ... out5 of the .npz); examples/mlp_params.npz holds
them by @main's parameter names. examples/mlp_input.npy is the first three
held-out test digits (pixels scaled to 0..1, as training scaled them), and
tests/fixtures/examples/mlp_expected.npy the softmax probabilities NumPy
computes for them in float64 (the oracle tests/tools/examples_test.cc
compares with). The script prints each digit's label and prediction.
"""

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMES = ("hidden_weight", "hidden_bias", "output_weight", "output_bias")


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_mlp_data.py TRAINED.npz (relay-vm run examples/train_mlp.relay "
                 "... --output TRAINED.npz)")
    trained = np.load(sys.argv[1])
    weights = {name: trained[f"out{index + 2}"].astype(np.float32)
               for index, name in enumerate(NAMES)}
    images = np.load(os.path.join(ROOT, "examples", "digits_test_images.npy"))[:3]
    labels = np.load(os.path.join(ROOT, "examples", "digits_test_labels.npy"))[:3]
    images = images.astype(np.float32) / 16.0

    hidden = np.maximum(images.astype(np.float64) @ weights["hidden_weight"].T
                        + weights["hidden_bias"], 0)
    logits = hidden @ weights["output_weight"].T + weights["output_bias"]
    logits -= logits.max(axis=1, keepdims=True)
    probabilities = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)

    np.savez(os.path.join(ROOT, "examples", "mlp_params.npz"), **weights)
    np.save(os.path.join(ROOT, "examples", "mlp_input.npy"), images)
    os.makedirs(os.path.join(ROOT, "tests", "fixtures", "examples"), exist_ok=True)
    np.save(os.path.join(ROOT, "tests", "fixtures", "examples", "mlp_expected.npy"),
            probabilities.astype(np.float32))
    for label, row in zip(labels, probabilities):
        print(f"label {label}: predicted {row.argmax()} (p = {row.max():.3f})")


if __name__ == "__main__":
    main()
