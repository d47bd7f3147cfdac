#!/usr/bin/python3
"""Writes the 8x8 digits that Debian's python3-sklearn ships as .npy files.

    /usr/bin/python3 examples/make_digits_data.py

scikit-learn's digits are 1,797 8x8 images of handwritten digits (pixel
values 0 to 16) with their labels, from the UCI optical recognition data
set. This script shuffles them with a fixed seed and splits them:

    examples/digits_train_images.npy  (1437, 64) uint8
    examples/digits_train_labels.npy  (1437,)    int32
    examples/digits_test_images.npy   (360, 64)  uint8
    examples/digits_test_labels.npy   (360,)     int32

and writes examples/train_mlp_init.npz, the initial weights of
examples/train_mlp.relay (uniform in +-1/sqrt(fan_in), fixed seed). The
files are committed; run this only to regenerate them.
"""

import os

import numpy as np
from sklearn.datasets import load_digits

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
TEST_IMAGES = 360


def main():
    digits = load_digits()
    images = digits.data.astype(np.uint8)
    labels = digits.target.astype(np.int32)
    rng = np.random.default_rng(20261126)
    order = rng.permutation(len(labels))
    images, labels = images[order], labels[order]
    train, test = slice(TEST_IMAGES, None), slice(0, TEST_IMAGES)
    np.save(os.path.join(EXAMPLES, "digits_train_images.npy"), images[train])
    np.save(os.path.join(EXAMPLES, "digits_train_labels.npy"), labels[train])
    np.save(os.path.join(EXAMPLES, "digits_test_images.npy"), images[test])
    np.save(os.path.join(EXAMPLES, "digits_test_labels.npy"), labels[test])

    def layer(outputs, inputs):
        bound = 1.0 / np.sqrt(inputs)
        weight = rng.uniform(-bound, bound, (outputs, inputs)).astype(np.float32)
        bias = rng.uniform(-bound, bound, (outputs,)).astype(np.float32)
        return weight, bias

    hidden_weight, hidden_bias = layer(32, 64)
    output_weight, output_bias = layer(10, 32)
    np.savez(os.path.join(EXAMPLES, "train_mlp_init.npz"), hidden_weight=hidden_weight,
             hidden_bias=hidden_bias, output_weight=output_weight, output_bias=output_bias)


if __name__ == "__main__":
    main()
