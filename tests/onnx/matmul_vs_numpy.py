#!/usr/bin/env python3
"""ONNX MatMul of every rank pairing (vectors, matrices, stacks of them
with equal or broadcast batch axes), on operands with static and `?`
dimensions, run by `relay-vm run MODEL.onnx` against numpy.matmul.

    /usr/bin/python3 tests/onnx/matmul_vs_numpy.py [BUILD/relay-vm]

Needs python3-numpy and python3-onnx.
"""
import sys
import tempfile

import numpy as np

from single_node import DEFAULT_BINARY, check_node

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
    binary = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINARY
    rng = np.random.default_rng(11)
    folder = tempfile.mkdtemp(prefix="relay-matmul-")
    bad = 0
    for shapes in CASES:
        for dynamic in (False, True):
            arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
            bad += not check_node(binary, folder, "MatMul", ["a", "b"], arrays,
                                  np.matmul(*arrays), dynamic, f"{shapes[0]} x {shapes[1]}")
    print(f"{2 * len(CASES)} cases, {bad} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
