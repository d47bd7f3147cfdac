#!/usr/bin/python3
"""Generates tests/fixtures/onnx/: a small ONNX model for the command-line
tests of `relay-vm import` and `run MODEL.onnx` (tests/tools/import_command_test.cc),
its input, and its outputs computed by NumPy (the oracle).

The model has names that are not Relay identifiers (an input "input.1", a
weight "w.0", outputs "out:0" and "out:1"), a dynamic batch axis, and two
outputs: relu(x @ w.T) and softmax(x @ w.T) over the last axis. A second
model, conv_zero_stride.onnx, is malformed in a way ONNX's checker lets
through: a convolution with a stride of 0, on which ONNX 1.12's shape
inference divides by zero; the importer must refuse it with an error. A
third, branches.onnx, chooses with an If on whether sum(x) > 0 between
two branches that read x from the graph around them: relu(x) * w, or
1 - x; it has an input of each kind and their outputs. A fourth,
loop.onnx, runs a Loop as many times as its input `n` says, carrying x
(x * 0.5 + step), a history that grows by x each step (its shape changes
from step to step), and stacking sum(x) per step; NumPy runs the same
loop for n = 0 and 3. A fifth, half_weight.onnx, adds a float16 weight
(which has no Relay literal, so `import` needs --params-out) to x. A
sixth, run_time_shapes.onnx, computes shapes from its input's `?`
dimensions at run time: it reshapes x (a, b, 4) to (b, a, 2, 2), expands
a weight to x's shape, fills x's shape with 2.5, and slices x along its
first axis from an index given as an input; NumPy gives the outputs for
two shapes of x. A seventh, opset18.onnx, uses what opset 18 changed (ONNX
1.12, which writes it, cannot check it): ReduceMean with its axes as an
input, ReduceMax with none and noop_with_empty_axes, Split by num_outputs,
Pad with an axes input and Mish (new in 18). An eighth,
run_time_resize.onnx, resizes an image whose height and width are `?`
(as an OCR detector's feature maps): nearest by 2 (half_pixel coordinates,
round_prefer_floor) and linear by 2 and 3 (half_pixel); NumPy maps each
output pixel back by ONNX's formula and interpolates, for two sizes. A
ninth, audio_conv.onnx, is a 1-D convolution network over a signal of `?`
length (grouped, strided, dilated and padded Conv with a bias, then Relu
and a 1-D MaxPool), as audio models are; NumPy sums the windows directly.

    /usr/bin/python3 tests/tools/generate_onnx_fixtures.py
"""

import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "fixtures", "onnx")


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(20261125)
    weight = rng.uniform(-1, 1, (4, 3)).astype(np.float32)
    x = rng.uniform(-2, 2, (2, 3)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["input.1", "w.0"], ["h"], transB=1),
         helper.make_node("Relu", ["h"], ["out:0"]),
         helper.make_node("Softmax", ["h"], ["out:1"], axis=-1)],
        "two_outputs",
        [helper.make_tensor_value_info("input.1", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("out:0", TensorProto.FLOAT, ["batch", 4]),
         helper.make_tensor_value_info("out:1", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(weight, "w.0")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "two_outputs.onnx"))
    np.save(os.path.join(OUT, "two_outputs_input.npy"), x)
    h = x.astype(np.float64) @ weight.astype(np.float64).T
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    conv = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], strides=[0, 1])],
        "conv_zero_stride",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, "h", "w"])],
        [numpy_helper.from_array(np.ones((1, 1, 3, 3), np.float32), "w")])
    onnx.save(helper.make_model(conv, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(OUT, "conv_zero_stride.onnx"))
    w = rng.uniform(-1, 1, (4,)).astype(np.float32)
    then_branch = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Mul", ["r", "w"], ["then_y"])],
        "then", [], [helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [4])])
    else_branch = helper.make_graph(
        [helper.make_node("Constant", [], ["one"],
                          value=numpy_helper.from_array(np.float32(1), "one")),
         helper.make_node("Sub", ["one", "x"], ["else_y"])],
        "else", [], [helper.make_tensor_value_info("else_y", TensorProto.FLOAT, [4])])
    branches = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
         helper.make_node("Constant", [], ["zero"],
                          value=numpy_helper.from_array(np.float32(0), "zero")),
         helper.make_node("Greater", ["s", "zero"], ["positive"]),
         helper.make_node("If", ["positive"], ["y"], then_branch=then_branch,
                          else_branch=else_branch)],
        "branches",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4])],
        [numpy_helper.from_array(w, "w")])
    model = helper.make_model(branches, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "branches.onnx"))
    positive = np.array([1.5, -0.5, 2.0, 0.25], np.float32)
    negative = np.array([-1.5, 0.5, -2.0, 0.25], np.float32)
    np.save(os.path.join(OUT, "branches_positive.npy"), positive)
    np.save(os.path.join(OUT, "branches_negative.npy"), negative)
    np.savez(os.path.join(OUT, "branches_expected.npz"),
             positive=(np.maximum(positive, 0) * w).astype(np.float32),
             negative=(1 - negative).astype(np.float32))
    write_loop_model(rng)
    write_run_time_shapes_model(rng)
    write_opset18_model(rng)
    half = helper.make_graph(
        [helper.make_node("Cast", ["w"], ["w32"], to=TensorProto.FLOAT),
         helper.make_node("Add", ["x", "w32"], ["y"])],
        "half_weight",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [numpy_helper.from_array(np.array([0.5, -1.25], np.float16), "w")])
    model = helper.make_model(half, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "half_weight.onnx"))
    np.savez(os.path.join(OUT, "two_outputs_expected.npz"),
             relu=np.maximum(h, 0).astype(np.float32),
             softmax=(e / e.sum(axis=-1, keepdims=True)).astype(np.float32))
    write_run_time_resize_model(np.random.default_rng(20261128))
    write_audio_conv_model(np.random.default_rng(20261129))


def write_loop_model(rng):
    body = helper.make_graph(
        [helper.make_node("Cast", ["step"], ["step_f"], to=TensorProto.FLOAT),
         helper.make_node("Constant", [], ["half"],
                          value=numpy_helper.from_array(np.float32(0.5), "half")),
         helper.make_node("Mul", ["x_in", "half"], ["scaled"]),
         helper.make_node("Add", ["scaled", "step_f"], ["x_out"]),
         helper.make_node("Concat", ["history_in", "x_out"], ["history_out"], axis=0),
         helper.make_node("ReduceSum", ["x_out"], ["total"], keepdims=0),
         helper.make_node("Identity", ["condition_in"], ["condition_out"])],
        "body",
        [helper.make_tensor_value_info("step", TensorProto.INT64, []),
         helper.make_tensor_value_info("condition_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("history_in", TensorProto.FLOAT, ["h"])],
        [helper.make_tensor_value_info("condition_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("history_out", TensorProto.FLOAT, ["h2"]),
         helper.make_tensor_value_info("total", TensorProto.FLOAT, [])])
    graph = helper.make_graph(
        [helper.make_node("Constant", [], ["empty"],
                          value=numpy_helper.from_array(np.zeros(0, np.float32), "empty")),
         helper.make_node("Loop", ["n", "", "x", "empty"], ["x_last", "history", "totals"],
                          body=body)],
        "loop",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("n", TensorProto.INT64, [])],
        [helper.make_tensor_value_info("x_last", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("history", TensorProto.FLOAT, ["h"]),
         helper.make_tensor_value_info("totals", TensorProto.FLOAT, ["n"])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "loop.onnx"))
    x = rng.uniform(-2, 2, (2,)).astype(np.float32)
    np.save(os.path.join(OUT, "loop_x.npy"), x)
    expected = {}
    for n in (0, 3):
        np.save(os.path.join(OUT, f"loop_n{n}.npy"), np.array(n, np.int64))
        value, history, totals = x.copy(), np.zeros(0, np.float32), []
        for step in range(n):
            value = (value * np.float32(0.5) + np.float32(step)).astype(np.float32)
            history = np.concatenate([history, value])
            totals.append(value.sum(dtype=np.float32))
        expected[f"x_last_n{n}"] = value
        expected[f"history_n{n}"] = history
        expected[f"totals_n{n}"] = np.array(totals, np.float32)
    np.savez(os.path.join(OUT, "loop_expected.npz"), **expected)


def write_run_time_shapes_model(rng):
    int64 = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)
    v = rng.uniform(-1, 1, (1, 1, 4)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Shape", ["x"], ["shape"]),
         helper.make_node("Gather", ["shape", "zero"], ["a"]),
         helper.make_node("Gather", ["shape", "one"], ["b"]),
         helper.make_node("Concat", ["b", "a", "two_two"], ["swapped"], axis=0),
         helper.make_node("Reshape", ["x", "swapped"], ["reshaped"]),
         helper.make_node("Expand", ["v", "shape"], ["expanded"]),
         helper.make_node("ConstantOfShape", ["shape"], ["filled"],
                          value=numpy_helper.from_array(np.array([2.5], np.float32), "value")),
         helper.make_node("Slice", ["x", "start", "end", "zero"], ["sliced"])],
        "run_time_shapes",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["a", "b", 4]),
         helper.make_tensor_value_info("start", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("reshaped", TensorProto.FLOAT, ["b", "a", 2, 2]),
         helper.make_tensor_value_info("expanded", TensorProto.FLOAT, ["a", "b", 4]),
         helper.make_tensor_value_info("filled", TensorProto.FLOAT, ["a", "b", 4]),
         helper.make_tensor_value_info("sliced", TensorProto.FLOAT, ["s", "b", 4])],
        [int64("zero", [0]), int64("one", [1]), int64("two_two", [2, 2]),
         int64("end", [2**62]), numpy_helper.from_array(v, "v")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "run_time_shapes.onnx"))
    expected = {}
    for case, (a, b, start) in enumerate([(2, 3, 1), (3, 1, -1)]):
        x = rng.uniform(-2, 2, (a, b, 4)).astype(np.float32)
        np.save(os.path.join(OUT, f"run_time_shapes_x{case}.npy"), x)
        np.save(os.path.join(OUT, f"run_time_shapes_start{case}.npy"), np.array([start], np.int64))
        expected[f"reshaped{case}"] = x.reshape(b, a, 2, 2)
        expected[f"expanded{case}"] = np.broadcast_to(v, x.shape).copy()
        expected[f"filled{case}"] = np.full(x.shape, 2.5, np.float32)
        expected[f"sliced{case}"] = x[start:]
    np.savez(os.path.join(OUT, "run_time_shapes_expected.npz"), **expected)


def write_opset18_model(rng):
    int64 = lambda name, values: numpy_helper.from_array(np.array(values, np.int64), name)
    graph = helper.make_graph(
        [helper.make_node("ReduceMean", ["x", "one"], ["mean"], keepdims=1),
         helper.make_node("Split", ["mean"], ["low", "high"], axis=2, num_outputs=2),
         helper.make_node("ReduceMax", ["x"], ["same"], noop_with_empty_axes=1),
         helper.make_node("Pad", ["x", "pads", "", "last"], ["padded"]),
         helper.make_node("Mish", ["x"], ["mish"])],
        "opset18",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4])],
        [helper.make_tensor_value_info("low", TensorProto.FLOAT, [2, 1, 2]),
         helper.make_tensor_value_info("high", TensorProto.FLOAT, [2, 1, 2]),
         helper.make_tensor_value_info("same", TensorProto.FLOAT, [2, 3, 4]),
         helper.make_tensor_value_info("padded", TensorProto.FLOAT, [2, 3, 7]),
         helper.make_tensor_value_info("mish", TensorProto.FLOAT, [2, 3, 4])],
        [int64("one", [1]), int64("pads", [1, 2]), int64("last", [-1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    onnx.save(model, os.path.join(OUT, "opset18.onnx"))
    x = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    np.save(os.path.join(OUT, "opset18_x.npy"), x)
    mean = x.mean(axis=1, keepdims=True)
    np.savez(os.path.join(OUT, "opset18_expected.npz"), low=mean[:, :, :2], high=mean[:, :, 2:],
             same=x, padded=np.pad(x, [(0, 0), (0, 0), (1, 2)]),
             mish=(x * np.tanh(np.log1p(np.exp(x.astype(np.float64))))).astype(np.float32))



def resize_half_pixel(x, scales, linear):
    """ONNX Resize of NCHW x by scales (h, w), half_pixel coordinates:
    output pixel o samples input coordinate (o + 0.5) / scale - 0.5; nearest
    rounds it half down (round_prefer_floor), linear interpolates between the
    two neighbours, coordinates clamped to the edge pixels."""
    out = x.astype(np.float64)
    for axis, scale in ((2, scales[0]), (3, scales[1])):
        extent = out.shape[axis]
        positions = (np.arange(int(np.floor(extent * scale))) + 0.5) / scale - 0.5
        if not linear:
            nearest = np.clip(np.ceil(positions - 0.5), 0, extent - 1).astype(np.int64)
            out = np.take(out, nearest, axis=axis)
            continue
        low = np.floor(positions)
        fraction = positions - low
        below = np.take(out, np.clip(low, 0, extent - 1).astype(np.int64), axis=axis)
        above = np.take(out, np.clip(low + 1, 0, extent - 1).astype(np.int64), axis=axis)
        shape = [1] * out.ndim
        shape[axis] = len(positions)
        fraction = fraction.reshape(shape)
        out = below * (1 - fraction) + above * fraction
    return out.astype(np.float32)


def write_run_time_resize_model(rng):
    scales = lambda name, h, w: numpy_helper.from_array(np.array([1, 1, h, w], np.float32), name)
    graph = helper.make_graph(
        [helper.make_node("Resize", ["x", "", "twice"], ["nearest"], mode="nearest"),
         helper.make_node("Resize", ["x", "", "twice"], ["linear"], mode="linear"),
         helper.make_node("Resize", ["x", "", "two_three"], ["linear23"], mode="linear")],
        "run_time_resize",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"])],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, 2, "oh", "ow"])
         for name in ("nearest", "linear", "linear23")],
        [scales("twice", 2, 2), scales("two_three", 2, 3)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "run_time_resize.onnx"))
    expected = {}
    for case, (h, w) in enumerate([(3, 4), (5, 2)]):
        x = rng.uniform(-2, 2, (1, 2, h, w)).astype(np.float32)
        np.save(os.path.join(OUT, f"run_time_resize_x{case}.npy"), x)
        expected[f"nearest{case}"] = resize_half_pixel(x, (2, 2), linear=False)
        expected[f"linear{case}"] = resize_half_pixel(x, (2, 2), linear=True)
        expected[f"linear23{case}"] = resize_half_pixel(x, (2, 3), linear=True)
    np.savez(os.path.join(OUT, "run_time_resize_expected.npz"), **expected)



def conv1d_reference(x, w, b, stride, dilation, pads, groups):
    """Direct sums over each output position's window (float64)."""
    n, c, length = x.shape
    out_channels, per_group, kernel = w.shape
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), pads))
    extent = (kernel - 1) * dilation + 1
    positions = (padded.shape[2] - extent) // stride + 1
    y = np.zeros((n, out_channels, positions))
    for o in range(out_channels):
        group = o // (out_channels // groups)
        for p in range(positions):
            for i in range(per_group):
                for k in range(kernel):
                    y[:, o, p] += padded[:, group * per_group + i, p * stride + k * dilation] * w[o, i, k]
        y[:, o, :] += b[o]
    return y


def maxpool1d_reference(x, kernel, stride):
    positions = (x.shape[2] - kernel) // stride + 1
    return np.stack([x[:, :, p * stride:p * stride + kernel].max(axis=2)
                     for p in range(positions)], axis=2)


def write_audio_conv_model(rng):
    w = rng.uniform(-1, 1, (6, 2, 3)).astype(np.float32)
    b = rng.uniform(-1, 1, (6,)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["signal", "w", "b"], ["conv"], group=2, strides=[2],
                          dilations=[2], pads=[1, 2]),
         helper.make_node("Relu", ["conv"], ["relu"]),
         helper.make_node("MaxPool", ["relu"], ["pooled"], kernel_shape=[3], strides=[2])],
        "audio_conv",
        [helper.make_tensor_value_info("signal", TensorProto.FLOAT, [1, 4, "t"])],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [1, 6, "p"])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(OUT, "audio_conv.onnx"))
    expected = {}
    for case, length in enumerate([16, 41]):
        x = rng.uniform(-2, 2, (1, 4, length)).astype(np.float32)
        np.save(os.path.join(OUT, f"audio_conv_x{case}.npy"), x)
        conv = conv1d_reference(x, w, b, stride=2, dilation=2, pads=(1, 2), groups=2)
        expected[f"pooled{case}"] = maxpool1d_reference(np.maximum(conv, 0), 3, 2).astype(np.float32)
    np.savez(os.path.join(OUT, "audio_conv_expected.npz"), **expected)


if __name__ == "__main__":
    main()
