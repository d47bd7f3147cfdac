#!/usr/bin/python3
"""Writes the Tree-LSTM example's weights and input, and NumPy's results for them.

    /usr/bin/python3 examples/make_tree_lstm_data.py

examples/tree_lstm_params.npz holds @main's weights by parameter name,
examples/tree_lstm_tokens.npy one random 16-value vector for each of the nine
words of "the quick brown fox jumps over the lazy dog", and
examples/tree_lstm_heads.npy each word's head in a dependency parse of it
(-1 for the root, "jumps"). tests/fixtures/examples/tree_lstm_expected.npy holds
the class probabilities NumPy computes for them in float64 (the oracle
tests/tools/examples_test.cc compares with); tree_lstm_chain_heads.npy and
tree_lstm_chain_expected.npy are a second tree over the same words (a chain,
each word the head of the next), so the tests cover two tree shapes. The
weights are random (fixed seed), uniform in +-1/sqrt(hidden size).
"""

import os

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INPUT_SIZE = 16
HIDDEN_SIZE = 8
CLASSES = 5

#        the quick brown fox jumps over the lazy dog
HEADS = [3, 3, 3, 4, -1, 8, 8, 8, 4]
CHAIN_HEADS = [-1, 0, 1, 2, 3, 4, 5, 6, 7]


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def classify(tokens, heads, params):
    """The child-sum Tree-LSTM's class probabilities, as a (1, CLASSES) array."""
    p = {name: value.astype(np.float64) for name, value in params.items()}
    tokens = tokens.astype(np.float64)

    def node_state(word):
        children = [child_state for child, head in enumerate(heads) if head == word
                    for child_state in [node_state(child)]]
        hidden_sum = sum((hidden for hidden, _ in children), np.zeros(HIDDEN_SIZE))
        iou = p["iou_input"] @ tokens[word] + p["iou_hidden"] @ hidden_sum + p["iou_bias"]
        input_gate, output_gate, candidate = np.split(iou, 3)
        forget_word = p["forget_input"] @ tokens[word] + p["forget_bias"]
        kept = sum((sigmoid(forget_word + p["forget_hidden"] @ hidden) * cell
                    for hidden, cell in children), np.zeros(HIDDEN_SIZE))
        cell = sigmoid(input_gate) * np.tanh(candidate) + kept
        return sigmoid(output_gate) * np.tanh(cell), cell

    root_hidden, _ = node_state(heads.index(-1))
    logits = p["output_weight"] @ root_hidden + p["output_bias"]
    logits -= logits.max()
    return (np.exp(logits) / np.exp(logits).sum())[None, :].astype(np.float32)


def main():
    rng = np.random.default_rng(20261125)

    def uniform(shape):
        bound = 1.0 / np.sqrt(HIDDEN_SIZE)
        return rng.uniform(-bound, bound, shape).astype(np.float32)

    params = {
        "iou_input": uniform((3 * HIDDEN_SIZE, INPUT_SIZE)),
        "iou_hidden": uniform((3 * HIDDEN_SIZE, HIDDEN_SIZE)),
        "iou_bias": uniform((3 * HIDDEN_SIZE,)),
        "forget_input": uniform((HIDDEN_SIZE, INPUT_SIZE)),
        "forget_hidden": uniform((HIDDEN_SIZE, HIDDEN_SIZE)),
        "forget_bias": uniform((HIDDEN_SIZE,)),
        "output_weight": uniform((CLASSES, HIDDEN_SIZE)),
        "output_bias": uniform((CLASSES,)),
    }
    tokens = rng.normal(0.0, 1.0, (len(HEADS), INPUT_SIZE)).astype(np.float32)

    np.savez(os.path.join(ROOT, "examples", "tree_lstm_params.npz"), **params)
    np.save(os.path.join(ROOT, "examples", "tree_lstm_tokens.npy"), tokens)
    np.save(os.path.join(ROOT, "examples", "tree_lstm_heads.npy"), np.array(HEADS, np.int32))
    fixtures = os.path.join(ROOT, "tests", "fixtures", "examples")
    os.makedirs(fixtures, exist_ok=True)
    np.save(os.path.join(fixtures, "tree_lstm_expected.npy"), classify(tokens, HEADS, params))
    np.save(os.path.join(fixtures, "tree_lstm_chain_heads.npy"), np.array(CHAIN_HEADS, np.int32))
    np.save(os.path.join(fixtures, "tree_lstm_chain_expected.npy"),
            classify(tokens, CHAIN_HEADS, params))


if __name__ == "__main__":
    main()
