#!/usr/bin/env python3
"""ONNX MatMul of every rank pairing (vectors, matrices, stacks of them
with equal or broadcast batch axes), on operands with static and `?`
dimensions, run by `relay-vm run MODEL.onnx` against numpy.matmul.

    /usr/bin/python3 tests/onnx/matmul_vs_numpy.py [BUILD/relay-vm]

Needs python3-numpy and python3-onnx.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CASES = [
    ((3, 4), (4, 5)),
    ((4,), (4, 5)),
    ((3, 4), (4,)),
    ((4,), (4,)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 4), (2, 4, 5)),
    ((2, 3, 5, 4), (2, 3, 4, 6)),
    ((2, 1, 5, 4), (1, 3, 4, 6)),
    ((2, 3, 2, 5, 4), (2, 3, 2, 4, 6)),
    ((2, 3, 4), (4,)),
    ((4,), (2, 4, 5)),
    ((1, 3, 4), (2, 4, 5)),
]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "release", "relay-vm")
    rng = np.random.default_rng(11)
    folder = tempfile.mkdtemp(prefix="relay-matmul-")
    bad = 0
    for shapes in CASES:
        for dynamic in (False, True):
            arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
            expected = np.matmul(*arrays)
            inputs = [h.make_tensor_value_info(
                name, TensorProto.FLOAT,
                [f"{name}{axis}" if dynamic else dim for axis, dim in enumerate(shape)])
                for name, shape in zip(("a", "b"), shapes)]
            graph = h.make_graph([h.make_node("MatMul", ["a", "b"], ["y"])], "matmul", inputs,
                                 [h.make_tensor_value_info("y", TensorProto.FLOAT,
                                                           [None] * expected.ndim)])
            path = os.path.join(folder, "matmul.onnx")
            onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)
            command = [binary, "run", path, "--output", os.path.join(folder, "y.npy")]
            for name, array in zip(("a", "b"), arrays):
                np.save(os.path.join(folder, name + ".npy"), array)
                command += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
            result = subprocess.run(command, capture_output=True, text=True)
            label = f"{shapes[0]} x {shapes[1]}{' (? dimensions)' if dynamic else ''}"
            if result.returncode != 0:
                print(f"FAIL {label}: {result.stderr.strip()[:300]}")
                bad += 1
                continue
            got = np.load(os.path.join(folder, "y.npy"))
            if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-4):
                print(f"FAIL {label}: got shape {got.shape}, expected {expected.shape}")
                bad += 1
            else:
                print(f"ok   {label}")
    print(f"{2 * len(CASES)} cases, {bad} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
