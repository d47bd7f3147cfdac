#!/usr/bin/python3
"""Writes the LSTM example's weights and two input sequences, and NumPy's results.

    /usr/bin/python3 examples/make_lstm_data.py

examples/lstm_params.npz holds @main's weights by parameter name,
examples/lstm_input.npy a sequence of 7 steps and examples/lstm_input_short.npy
one of 3 steps (8 values a step), and tests/fixtures/examples/lstm_expected.npy
and lstm_short_expected.npy the class probabilities NumPy computes for them in
float64 (the oracles tests/tools/examples_test.cc compares with). The weights
are random (fixed seed), initialised as PyTorch initialises nn.LSTM (uniform in
+-1/sqrt(hidden size)), with the gates in PyTorch's order (input, forget, cell
candidate, output) and one bias standing for PyTorch's bias_ih + bias_hh.
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT_SIZE = 8
HIDDEN_SIZE = 16
CLASSES = 4


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def classify(sequence, params):
    p = {name: value.astype(np.float64) for name, value in params.items()}
    hidden = np.zeros(HIDDEN_SIZE)
    cell = np.zeros(HIDDEN_SIZE)
    for step in sequence.astype(np.float64):
        gates = p["input_weight"] @ step + p["hidden_weight"] @ hidden + p["bias"]
        input_gate, forget_gate, candidate, output_gate = np.split(gates, 4)
        cell = sigmoid(forget_gate) * cell + sigmoid(input_gate) * np.tanh(candidate)
        hidden = sigmoid(output_gate) * np.tanh(cell)
    logits = p["output_weight"] @ hidden + p["output_bias"]
    logits -= logits.max()
    return (np.exp(logits) / np.exp(logits).sum())[None, :].astype(np.float32)


def main():
    rng = np.random.default_rng(20261124)

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    params = {
        "input_weight": uniform((4 * HIDDEN_SIZE, INPUT_SIZE), HIDDEN_SIZE),
        "hidden_weight": uniform((4 * HIDDEN_SIZE, HIDDEN_SIZE), HIDDEN_SIZE),
        "bias": uniform((4 * HIDDEN_SIZE,), HIDDEN_SIZE),
        "output_weight": uniform((CLASSES, HIDDEN_SIZE), HIDDEN_SIZE),
        "output_bias": uniform((CLASSES,), HIDDEN_SIZE),
    }
    sequence = rng.normal(0.0, 1.0, (7, INPUT_SIZE)).astype(np.float32)
    short_sequence = rng.normal(0.0, 1.0, (3, INPUT_SIZE)).astype(np.float32)

    np.savez(os.path.join(ROOT, "examples", "lstm_params.npz"), **params)
    np.save(os.path.join(ROOT, "examples", "lstm_input.npy"), sequence)
    np.save(os.path.join(ROOT, "examples", "lstm_input_short.npy"), short_sequence)
    fixtures = os.path.join(ROOT, "tests", "fixtures", "examples")
    os.makedirs(fixtures, exist_ok=True)
    np.save(os.path.join(fixtures, "lstm_expected.npy"), classify(sequence, params))
    np.save(os.path.join(fixtures, "lstm_short_expected.npy"), classify(short_sequence, params))


if __name__ == "__main__":
    main()
