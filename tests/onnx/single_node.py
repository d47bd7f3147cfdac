"""What the tests/onnx/*_vs_numpy.py scripts share: one ONNX node over
float32 graph inputs (static or `?` dimensions), run by `relay-vm run
MODEL.onnx`, its output compared with NumPy's."""
import os
import subprocess

import numpy as np
import onnx
import onnx.helper as h
from onnx import TensorProto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_BINARY = os.path.join(ROOT, "build", "release", "relay-vm")


def check_node(binary, folder, op, names, arrays, expected, dynamic, label, **attributes):
    """Runs `op` on `arrays` (graph inputs named `names`, each dimension `?`
    when `dynamic`) and prints ok or FAIL for `label`; returns whether the
    output matched `expected` (within 1e-4)."""
    inputs = [h.make_tensor_value_info(
        name, TensorProto.FLOAT,
        [f"{name}_{axis}" if dynamic else dim for axis, dim in enumerate(array.shape)])
        for name, array in zip(names, arrays)]
    graph = h.make_graph([h.make_node(op, names, ["y"], **attributes)], op.lower(), inputs,
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [None] * expected.ndim)])
    path = os.path.join(folder, "node.onnx")
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 13)]), path)
    command = [binary, "run", path, "--output", os.path.join(folder, "y.npy")]
    for name, array in zip(names, arrays):
        np.save(os.path.join(folder, name + ".npy"), array)
        command += ["--input", f"{name}={os.path.join(folder, name + '.npy')}"]
    result = subprocess.run(command, capture_output=True, text=True)
    label += " (? dimensions)" if dynamic else ""
    if result.returncode != 0:
        print(f"FAIL {label}: {result.stderr.strip()[:300]}")
        return False
    got = np.load(os.path.join(folder, "y.npy"))
    if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-4):
        print(f"FAIL {label}: got shape {got.shape}, expected {expected.shape}")
        return False
    print(f"ok   {label}")
    return True
