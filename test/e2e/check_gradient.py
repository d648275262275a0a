#!/usr/bin/env python3
"""ONNX Gradient (ai.onnx.preview.training) against torch.autograd.

Builds y = a * b - a / c + (-b) with a [2, 3], b [3] (broadcast) and c a
scalar, asks Gradient for dy/da, dy/db, dy/dc, compiles it with kiln, runs
it and compares with torch's gradients of y.sum(). Then a model with Relu on
the path must fail to compile with the exact unsupported-op message.

    check_gradient.py KILN WORK_DIR
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import torch
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
F = TensorProto.FLOAT


def model(with_relu):
    nodes = [
        helper.make_node("Mul", ["a", "b"], ["ab"], name="mul"),
        helper.make_node("Div", ["a", "c"], ["ac"], name="div"),
        helper.make_node("Sub", ["ab", "ac"], ["s"], name="sub"),
        helper.make_node("Neg", ["b"], ["nb"], name="neg"),
        helper.make_node("Relu" if with_relu else "Identity", ["s"], ["s2"],
                         name="act"),
        helper.make_node("Add", ["s2", "nb"], ["y"], name="add"),
        helper.make_node("Gradient", ["a", "b", "c"], ["da", "db", "dc"],
                         name="grad", domain="ai.onnx.preview.training",
                         xs=["a", "b", "c"], y="y"),
    ]
    graph = helper.make_graph(
        nodes, "gradient",
        [helper.make_tensor_value_info("a", F, [2, 3]),
         helper.make_tensor_value_info("b", F, [3]),
         helper.make_tensor_value_info("c", F, [])],
        [helper.make_tensor_value_info(n, F, None) for n in ["y", "da", "db", "dc"]])
    return helper.make_model(graph, opset_imports=[
        helper.make_opsetid("", 13),
        helper.make_opsetid("ai.onnx.preview.training", 1)])


rng = np.random.default_rng(0)
inputs = {"a": rng.standard_normal((2, 3)).astype(np.float32),
          "b": rng.standard_normal(3).astype(np.float32),
          "c": np.array(1.7, dtype=np.float32)}
t = {k: torch.tensor(v, requires_grad=True) for k, v in inputs.items()}
y = t["a"] * t["b"] - t["a"] / t["c"] + (-t["b"])
y.sum().backward()
expected = {"y": y.detach().numpy(), "da": t["a"].grad.numpy(),
            "db": t["b"].grad.numpy(), "dc": t["c"].grad.numpy()}

path = os.path.join(work, "gradient.onnx")
onnx.save(model(False), path)
args = []
for name, value in inputs.items():
    f = os.path.join(work, f"{name}.pb")
    open(f, "wb").write(numpy_helper.from_array(value, name).SerializeToString())
    args += ["--input", f]
for name, value in expected.items():
    f = os.path.join(work, f"expected_{name}.pb")
    open(f, "wb").write(numpy_helper.from_array(value, name).SerializeToString())
    args += ["--expect", f]
subprocess.run([kiln, "compile", path, "-o", os.path.join(work, "gradient.so")],
               check=True)
out = subprocess.run([kiln, "run", os.path.join(work, "gradient.so"), *args,
                      "--rtol", "1e-5", "--atol", "1e-6"],
                     capture_output=True, text=True)
print(out.stdout, out.stderr)
if out.returncode != 0 or out.stdout.count(": PASS") != 4:
    sys.exit("gradient: results differ from torch.autograd")

path = os.path.join(work, "gradient_relu.onnx")
onnx.save(model(True), path)
proc = subprocess.run([kiln, "compile", path, "-o", os.path.join(work, "r.so")],
                      capture_output=True, text=True)
want = ("error: unsupported ONNX op 'Gradient' (opset 1) at node 'grad': no "
        "derivative rule for op 'Relu' (node 'act') on the path from xs to y\n")
if proc.returncode != 1 or proc.stderr != want:
    sys.exit(f"gradient_relu: exit {proc.returncode}, stderr {proc.stderr!r}, "
             f"expected {want!r}")
print("PASS")
