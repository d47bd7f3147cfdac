#!/usr/bin/python3
"""Writes what PyTorch computes for the training examples' first epochs.

    /usr/bin/python3 examples/make_training_reference.py

examples/train_mlp.relay and examples/train_lstm.relay train by stochastic
gradient descent written in Relay, with gradients relay-vm derives. PyTorch
runs the same training here (the same weights, data, batch order, learning
rate and loss, its own autograd), and the mean loss of each of the first two
epochs goes to tests/fixtures/examples/train_mlp_losses.npy and
train_lstm_losses.npy: the oracle tests/tools/examples_test.cc compares the
Relay programs' losses with.
"""

import os

import numpy as np
import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "examples")
EPOCHS = 2


def load(name):
    return np.load(os.path.join(EXAMPLES, name))


def train_mlp():
    init = np.load(os.path.join(EXAMPLES, "train_mlp_init.npz"))
    weights = [torch.tensor(init[name], requires_grad=True)
               for name in ("hidden_weight", "hidden_bias", "output_weight", "output_bias")]
    images = torch.tensor(load("digits_train_images.npy").astype(np.float32) / 16.0)
    labels = torch.tensor(load("digits_train_labels.npy").astype(np.int64))
    batch, rate = 32, 0.1
    losses = []
    for _ in range(EPOCHS):
        total = 0.0
        for start in range(0, len(labels), batch):
            rows = slice(start, start + batch)
            hidden = torch.relu(images[rows] @ weights[0].T + weights[1])
            logits = hidden @ weights[2].T + weights[3]
            loss = torch.nn.functional.cross_entropy(logits, labels[rows])
            gradients = torch.autograd.grad(loss, weights)
            with torch.no_grad():
                for weight, gradient in zip(weights, gradients):
                    weight -= rate * gradient
            total += loss.item() * len(labels[rows])
        losses.append(total / len(labels))
    return losses


def train_lstm():
    init = np.load(os.path.join(EXAMPLES, "lstm_params.npz"))
    weights = [torch.tensor(init[name], requires_grad=True)
               for name in ("input_weight", "hidden_weight", "bias", "output_weight",
                            "output_bias")]
    steps = torch.tensor(load("sequences_train_steps.npy"))
    lengths = load("sequences_train_lengths.npy")
    labels = torch.tensor(load("sequences_train_labels.npy").astype(np.int64))
    rate = 0.1
    losses = []
    for _ in range(EPOCHS):
        total, offset = 0.0, 0
        for index, length in enumerate(lengths):
            hidden = torch.zeros(1, 16)
            cell = torch.zeros(1, 16)
            for step in range(offset, offset + int(length)):
                gates = steps[step:step + 1] @ weights[0].T + hidden @ weights[1].T + weights[2]
                i, f, g, o = gates.split(16, dim=1)
                cell = torch.sigmoid(f) * cell + torch.sigmoid(i) * torch.tanh(g)
                hidden = torch.sigmoid(o) * torch.tanh(cell)
            logits = hidden @ weights[3].T + weights[4]
            loss = torch.nn.functional.cross_entropy(logits, labels[index:index + 1])
            gradients = torch.autograd.grad(loss, weights)
            with torch.no_grad():
                for weight, gradient in zip(weights, gradients):
                    weight -= rate * gradient
            total += loss.item()
            offset += int(length)
        losses.append(total / len(lengths))
    return losses


def main():
    torch.set_num_threads(1)
    os.makedirs(FIXTURES, exist_ok=True)
    np.save(os.path.join(FIXTURES, "train_mlp_losses.npy"), np.array(train_mlp(), np.float32))
    np.save(os.path.join(FIXTURES, "train_lstm_losses.npy"), np.array(train_lstm(), np.float32))


if __name__ == "__main__":
    main()
