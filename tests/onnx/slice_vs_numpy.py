#!/usr/bin/env python3
"""Random ONNX Slice nodes (ranks 1-3, empty axes, negative and huge bounds,
steps of both signs, `?` dimensions, bounds given as constants or as inputs
read at run time) run by `relay-vm run MODEL.onnx` against NumPy's slicing.

    /usr/bin/python3 tests/onnx/slice_vs_numpy.py [BUILD/relay-vm] [CASES]

NumPy and ONNX differ in one corner: a negative step from a start before the
axis's beginning gives NumPy nothing, while ONNX clamps the start to 0; such
starts are moved to the beginning. Needs python3-numpy and python3-onnx.
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


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "release", "relay-vm")
    cases = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = np.random.default_rng(1)
    folder = tempfile.mkdtemp(prefix="relay-slice-")
    path = lambda name: os.path.join(folder, name)
    bad = 0
    for _ in range(cases):
        rank = int(rng.integers(1, 4))
        shape = [int(rng.integers(0, 6)) for _ in range(rank)]
        axes = [int(a) for a in rng.choice(rank, int(rng.integers(1, rank + 1)), replace=False)]
        starts = [int(rng.integers(-8, 9)) for _ in axes]
        ends = [int(rng.choice([rng.integers(-8, 9), 2**62, -2**62])) for _ in axes]
        steps = [int(rng.choice([1, 2, 3, -1, -2])) for _ in axes]
        x = rng.random(shape, dtype=np.float32)
        index = [slice(None)] * rank
        for i, (axis, start, end, step) in enumerate(zip(axes, starts, ends, steps)):
            if step < 0 and start < -shape[axis]:
                starts[i] = start = -shape[axis]
            index[axis] = slice(start, end, step)
        expected = x[tuple(index)]
        run_time = bool(rng.random() < 0.5)
        dims = [f"d{i}" if rng.random() < 0.5 else shape[i] for i in range(rank)]
        inputs = [h.make_tensor_value_info("x", TensorProto.FLOAT, dims)]
        weights = [h.make_tensor("axes", TensorProto.INT64, [len(axes)], axes),
                   h.make_tensor("steps", TensorProto.INT64, [len(axes)], steps)]
        bounds = [h.make_tensor("starts", TensorProto.INT64, [len(axes)], starts),
                  h.make_tensor("ends", TensorProto.INT64, [len(axes)], ends)]
        if run_time:
            inputs += [h.make_tensor_value_info(n, TensorProto.INT64, [len(axes)])
                       for n in ("starts", "ends")]
        else:
            weights += bounds
        graph = h.make_graph([h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                             "slice", inputs,
                             [h.make_tensor_value_info("y", TensorProto.FLOAT, [None] * rank)],
                             weights)
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path("slice.onnx"))
        np.save(path("x.npy"), x)
        command = [binary, "run", path("slice.onnx"), "--input", "x=" + path("x.npy"),
                   "--output", path("y.npy")]
        if run_time:
            np.save(path("starts.npy"), np.array(starts, np.int64))
            np.save(path("ends.npy"), np.array(ends, np.int64))
            command += ["--input", "starts=" + path("starts.npy"),
                        "--input", "ends=" + path("ends.npy")]
        result = subprocess.run(command, capture_output=True, text=True)
        label = f"shape {shape} axes {axes} starts {starts} ends {ends} steps {steps}" \
                f"{' (bounds at run time)' if run_time else ''}"
        if result.returncode != 0:
            print(f"FAIL {label}: {result.stderr.strip()[:300]}")
            bad += 1
            continue
        got = np.load(path("y.npy"))
        if got.shape != expected.shape or not np.array_equal(got, expected):
            print(f"FAIL {label}: got shape {got.shape}, expected {expected.shape}")
            bad += 1
    print(f"{cases} cases, {bad} failure(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
