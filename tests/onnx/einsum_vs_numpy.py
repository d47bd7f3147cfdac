#!/usr/bin/env python3
"""ONNX Einsum nodes of many equations (matrix and batched products,
attention's bhqd,bhkd->bhqk, outer and inner products, diagonals, sums,
transposes, `...` broadcasting, implicit outputs), on operands with static
and `?` dimensions, run by `relay-vm run MODEL.onnx` against numpy.einsum.

    /usr/bin/python3 tests/onnx/einsum_vs_numpy.py [BUILD/relay-vm]

Needs python3-numpy and python3-onnx.
"""
import sys
import tempfile

import numpy as np

from single_node import DEFAULT_BINARY, check_node

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
    binary = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_BINARY
    rng = np.random.default_rng(7)
    folder = tempfile.mkdtemp(prefix="relay-einsum-")
    bad = 0
    for equation, shapes in CASES:
        for dynamic in (False, True):
            arrays = [rng.standard_normal(shape).astype(np.float32) for shape in shapes]
            names = [f"x{index}" for index in range(len(shapes))]
            bad += not check_node(binary, folder, "Einsum", names, arrays,
                                  np.einsum(equation, *arrays), dynamic,
                                  f"{equation} {shapes}", equation=equation)
    print(f"{2 * len(CASES)} cases, {bad} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
