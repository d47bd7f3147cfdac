#!/usr/bin/env python3
"""Runs models exported from PyTorch/torchvision through relay-vm's ONNX
importer and ONNX Runtime on several input shapes, and checks that their
outputs agree (and agree with PyTorch's).

    /usr/bin/python3 tests/onnx/compare_ort.py [--relay-vm BUILD/relay-vm]
        [--models resnet18,...] [--keep DIR]

Each model is exported once by torch.onnx.export (opset 17, its dynamic axes
named), then run on each of its input shapes by `relay-vm run MODEL.onnx`
and by ONNX Runtime (bench/models/ort_runner.js, onnxruntime-node from
bench/models/install-peers.sh). Outputs must agree within an absolute and
relative tolerance of 1e-4 (ImageNet models, whose sums run over thousands of
terms, 1e-3). Needs python3-torch, python3-torchvision and python3-onnx
(Debian) and Node.js with onnxruntime-node; exits non-zero on any mismatch.
"""
import argparse
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import torch
import torch.nn as nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Recurrent(nn.Module):
    """An LSTM or GRU over (length, batch, features), its last state out."""

    def __init__(self, kind):
        super().__init__()
        self.layer = getattr(nn, kind)(16, 32)

    def forward(self, sequence):
        output = self.layer(sequence)[1]
        return output[0] if isinstance(output, tuple) else output


class Sequences(nn.Module):
    """Every step's output of a recurrent layer (ONNX's Y): a two-layer
    bidirectional LSTM batch first, a bidirectional GRU, a ReLU RNN."""

    def __init__(self, kind):
        super().__init__()
        if kind == "LSTM":
            self.layer = nn.LSTM(16, 24, num_layers=2, bidirectional=True, batch_first=True)
        elif kind == "GRU":
            self.layer = nn.GRU(16, 24, bidirectional=True)
        else:
            self.layer = nn.RNN(16, 24, nonlinearity="relu")

    def forward(self, sequence):
        return self.layer(sequence)[0]


class Encoder(nn.Module):
    """A transformer encoder layer over (length, batch, width)."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=32, nhead=4, dim_feedforward=64, dropout=0.0)

    def forward(self, x):
        return self.layer(x)


@torch.jit.script
def branch(x):
    # Data-dependent control flow: export keeps it as an ONNX If.
    if bool(x.sum() > 0):
        y = torch.tanh(x) * 2.0
    else:
        y = torch.sigmoid(x) - x
    return y


class Branching(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x):
        return branch(self.linear(x))


@torch.jit.script
def iterate(x, steps):
    # A loop whose trip count is an input: export keeps it as an ONNX Loop.
    for _ in range(int(steps)):
        x = torch.tanh(x) * 0.9 + 0.1
    return x


class Looping(nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(8, 8)

    def forward(self, x, steps):
        return iterate(self.linear(x), steps)


class Cumulative(nn.Module):
    """Running sums along an axis whose length is dynamic (an ONNX CumSum)."""

    def forward(self, x):
        return torch.cumsum(x, dim=1) - torch.flip(torch.cumsum(torch.flip(x, [1]), dim=1), [1])


class Largest(nn.Module):
    """The 5 largest of each row and where they were (an ONNX TopK), both
    in the one output ORT's runner compares."""

    def forward(self, x):
        values, indices = torch.topk(x, 5, dim=1)
        return values + indices.to(torch.float32) * 1000


def image_model(name):
    import torchvision

    model = getattr(torchvision.models, name)(weights=None)
    # Batch-norm statistics as a trained model has them, not 0 and 1.
    generator = torch.Generator().manual_seed(0)
    for module in model.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.running_mean.copy_(torch.randn(module.num_features, generator=generator) * 0.1)
            module.running_var.copy_(torch.rand(module.num_features, generator=generator) + 0.5)
    return model


def image(batch, size):
    return [("image", np.random.rand(batch, 3, size, size).astype(np.float32))]


def sequence(length, batch, width):
    return [("sequence", np.random.randn(length, batch, width).astype(np.float32))]


# name: (module factory, input names, dynamic axes, tolerance, input sets)
MODELS = {
    "resnet18": (lambda: image_model("resnet18"), {"image": {0: "batch", 2: "height", 3: "width"}},
                 1e-3, [image(1, 224), image(2, 160)]),
    "mobilenet_v2": (lambda: image_model("mobilenet_v2"),
                     {"image": {0: "batch", 2: "height", 3: "width"}}, 1e-3,
                     [image(1, 224), image(3, 128)]),
    "squeezenet": (lambda: image_model("squeezenet1_0"),
                   {"image": {0: "batch", 2: "height", 3: "width"}}, 1e-3,
                   [image(1, 224), image(2, 160)]),
    "lstm": (lambda: Recurrent("LSTM"), {"sequence": {0: "length"}}, 1e-4,
             [sequence(1, 1, 16), sequence(7, 1, 16), sequence(40, 1, 16)]),
    "gru": (lambda: Recurrent("GRU"), {"sequence": {0: "length"}}, 1e-4,
            [sequence(1, 1, 16), sequence(9, 1, 16), sequence(33, 1, 16)]),
    "bilstm": (lambda: Sequences("LSTM"), {"sequence": {0: "batch", 1: "length"}}, 1e-4,
               [sequence(1, 1, 16), sequence(2, 6, 16), sequence(3, 21, 16)]),
    "bigru": (lambda: Sequences("GRU"), {"sequence": {0: "length"}}, 1e-4,
              [sequence(1, 2, 16), sequence(8, 2, 16)]),
    "rnn": (lambda: Sequences("RNN"), {"sequence": {0: "length"}}, 1e-4,
            [sequence(1, 1, 16), sequence(12, 1, 16)]),
    "transformer": (Encoder, {"sequence": {0: "length", 1: "batch"}}, 1e-4,
                    [sequence(1, 1, 32), sequence(6, 2, 32), sequence(25, 3, 32)]),
    "cumsum": (Cumulative, {"x": {0: "rows", 1: "length"}}, 1e-4,
               [[("x", np.random.randn(rows, length).astype(np.float32))]
                for rows, length in [(1, 1), (3, 17), (2, 300)]]),
    "topk": (Largest, {"x": {0: "rows", 1: "length"}}, 1e-4,
             [[("x", np.random.randn(rows, length).astype(np.float32))]
              for rows, length in [(1, 5), (3, 40), (2, 500)]]),
    "if": (Branching, {"x": {0: "rows"}}, 1e-4,
           [[("x", np.random.randn(rows, 8).astype(np.float32) + shift)]
            for rows, shift in [(1, 3.0), (4, -3.0), (5, 3.0)]]),
    "loop": (Looping, {"x": {0: "rows"}}, 1e-4,
             [[("x", np.random.randn(rows, 8).astype(np.float32)),
               ("steps", np.array(steps, dtype=np.int64))]
              for rows, steps in [(1, 0), (3, 1), (2, 12)]]),
}


def export(name, folder):
    factory, dynamic_axes, _, input_sets = MODELS[name]
    torch.manual_seed(0)
    module = factory().eval()
    example = tuple(torch.from_numpy(array) for _, array in input_sets[-1])
    path = os.path.join(folder, name + ".onnx")
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=17,
                          input_names=[n for n, _ in input_sets[-1]], output_names=["output"],
                          dynamic_axes=dynamic_axes)
    return module, path


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(" ".join(command) + " failed:\n" + result.stderr[-2000:])
    return result


def compare(label, expected, actual, tolerance):
    if expected.shape != actual.shape:
        return f"{label}: shape {actual.shape}, expected {expected.shape}"
    error = np.abs(expected.astype(np.float64) - actual.astype(np.float64))
    bound = tolerance * (1 + np.abs(expected.astype(np.float64)))
    if not np.all(error <= bound):
        return f"{label}: max error {error.max():.3g} (tolerance {tolerance} relative above 1)"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relay-vm", default=os.path.join(ROOT, "build", "release", "relay-vm"))
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--keep", help="folder to keep the exports and arrays in")
    args = parser.parse_args()
    torch.set_num_threads(2)
    warnings.filterwarnings("ignore")  # the exporter's notes on scripted control flow
    np.random.seed(0)
    folder = args.keep or tempfile.mkdtemp(prefix="relay-onnx-")
    os.makedirs(folder, exist_ok=True)
    failures = 0
    for name in args.models.split(","):
        module, path = export(name, folder)
        for number, inputs in enumerate(MODELS[name][3]):
            tolerance = MODELS[name][2]
            label = name + " " + " ".join(f"{n}={a.item()}" if a.ndim == 0 else f"{n}{list(a.shape)}"
                                          for n, a in inputs)
            flags = []
            for input_name, array in inputs:
                file = os.path.join(folder, f"{name}_{number}_{input_name}.npy")
                np.save(file, array)
                flags += ["--input", f"{input_name}={file}"]
            ours = os.path.join(folder, f"{name}_{number}_relay.npy")
            theirs = os.path.join(folder, f"{name}_{number}_ort.npy")
            try:
                run([args.relay_vm, "run", path, "--output", ours] + flags)
                run(["node", os.path.join(ROOT, "bench", "models", "ort_runner.js"), path,
                     "--output", theirs, "--runs", "1", "--warmup", "0", "--warmup-seconds", "0"]
                    + flags)
            except RuntimeError as error:
                print(f"FAIL {label}: {error}")
                failures += 1
                continue
            with torch.no_grad():
                reference = module(*(torch.from_numpy(a) for _, a in inputs)).numpy()
            problems = [p for p in (compare("against ONNX Runtime", np.load(theirs), np.load(ours), tolerance),
                                    compare("against PyTorch", reference, np.load(ours), tolerance)) if p]
            print(("FAIL " if problems else "ok   ") + label + ("" if not problems else ": " + "; ".join(problems)))
            failures += bool(problems)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
