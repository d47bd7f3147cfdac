#!/usr/bin/python3
"""Writes the sequence task examples/train_lstm.relay learns.

    /usr/bin/python3 examples/make_sequence_data.py

Each sequence has 4 to 12 steps of 8 values. A step shows one of 4 symbols:
its value at position `symbol` is 1, the other three of the first four are
0, and all eight carry Gaussian noise (standard deviation 0.3). A sequence's
label is the symbol it shows most often (sequences with a tie are redrawn),
so the LSTM must count along the whole sequence, whatever its length.

The sequences of a set are stored end to end, with their lengths:

    examples/sequences_train_steps.npy    (N, 8) float32, all steps in order
    examples/sequences_train_lengths.npy  (300,) int32
    examples/sequences_train_labels.npy   (300,) int32
    examples/sequences_test_*.npy         the same for 100 held-out sequences

The initial weights of train_lstm.relay are examples/lstm_params.npz, the
LSTM example's own (examples/make_lstm_data.py). Fixed seed; the files are
committed, so run this only to regenerate them.
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
SYMBOLS = 4
FEATURES = 8


def draw_sequence(rng):
    while True:
        length = int(rng.integers(4, 13))
        symbols = rng.integers(0, SYMBOLS, length)
        counts = np.bincount(symbols, minlength=SYMBOLS)
        if (counts == counts.max()).sum() == 1:
            break
    steps = rng.normal(0.0, 0.3, (length, FEATURES))
    steps[np.arange(length), symbols] += 1.0
    return steps.astype(np.float32), int(counts.argmax())


def write_set(rng, name, count):
    sequences = [draw_sequence(rng) for _ in range(count)]
    steps = np.concatenate([steps for steps, _ in sequences])
    lengths = np.array([len(steps) for steps, _ in sequences], dtype=np.int32)
    labels = np.array([label for _, label in sequences], dtype=np.int32)
    np.save(os.path.join(EXAMPLES, f"sequences_{name}_steps.npy"), steps)
    np.save(os.path.join(EXAMPLES, f"sequences_{name}_lengths.npy"), lengths)
    np.save(os.path.join(EXAMPLES, f"sequences_{name}_labels.npy"), labels)


def main():
    rng = np.random.default_rng(20261127)
    write_set(rng, "train", 300)
    write_set(rng, "test", 100)


if __name__ == "__main__":
    main()
