#!/usr/bin/env python3
"""ONNX Einsum nodes of many equations (matrix and batched products,
attention's bhqd,bhkd->bhqk, outer and inner products, diagonals, sums,
transposes, `...` broadcasting, implicit outputs), on operands with static
and `?` dimensions, run by `relay-vm run MODEL.onnx` against numpy.einsum.

    /usr/bin/python3 tests/onnx/einsum_vs_numpy.py [BUILD/relay-vm]

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

# equation, operand shapes
CASES = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
    ("bqhd,bkhd->bhqk", [(1, 5, 2, 4), (1, 7, 2, 4)]),
    ("i,i", [(6,), (6,)]),
    ("i,j->ij", [(3,), (4,)]),
    ("ij->ji", [(3, 4)]),
    ("ij->i", [(3, 4)]),
    ("ijk->", [(2, 3, 4)]),
    ("ii->i", [(4, 4)]),
    ("ii", [(4, 4)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 6)]),
    ("...ij,...jk", [(5, 3, 4), (2, 1, 4, 6)]),
    ("abc,cd->abd", [(2, 3, 4), (4, 5)]),
    ("ab,ab->", [(3, 4), (3, 4)]),
    ("ij,ij->ij", [(3, 4), (3, 4)]),
    ("ba,ca", [(3, 4), (5, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("bij,jk->bik", [(3, 2, 4), (4, 5)]),
]


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "release", "relay-vm")
    rng = np.random.default_rng(7)
    folder = tempfile.mkdtemp(prefix="relay-einsum-")
    bad = 0
    for equation, shapes in CASES:
        for dynamic in (False, True):
            arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
            expected = np.einsum(equation, *arrays)
            names = [f"x{index}" for index in range(len(shapes))]
            inputs = [h.make_tensor_value_info(
                name, TensorProto.FLOAT,
                [f"{name}_{axis}" if dynamic else dim for axis, dim in enumerate(shape)])
                for name, shape in zip(names, shapes)]
            graph = h.make_graph(
                [h.make_node("Einsum", names, ["y"], equation=equation)], "einsum", inputs,
                [h.make_tensor_value_info("y", TensorProto.FLOAT, [None] * expected.ndim)])
            path = os.path.join(folder, "einsum.onnx")
            onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)
            command = [binary, "run", path, "--output", os.path.join(folder, "y.npy")]
            for name, array in zip(names, arrays):
                np.save(os.path.join(folder, name + ".npy"), array)
                command += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
            result = subprocess.run(command, capture_output=True, text=True)
            label = f"{equation} {shapes}{' (? dimensions)' if dynamic else ''}"
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
