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
1 - x; it has an input of each kind and their outputs.

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
    np.savez(os.path.join(OUT, "two_outputs_expected.npz"),
             relu=np.maximum(h, 0).astype(np.float32),
             softmax=(e / e.sum(axis=-1, keepdims=True)).astype(np.float32))


if __name__ == "__main__":
    main()
