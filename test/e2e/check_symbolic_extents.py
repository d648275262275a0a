#!/usr/bin/env python3
"""Inputs whose run-time extents meet: they broadcast as ONNX says, or the
run fails naming the node, never a read past the smaller input.

Small models whose inputs carry different symbols where ONNX needs their
extents to agree or broadcast: Add (a run-time extent of 1 broadcasts on
either side), a batched MatMul (batch dims broadcast, inner dims checked),
Concat (the dims off the axis), LayerNormalization, BatchNormalization
and InstanceNormalization (scale and bias, inputs or initializers, against
the input's dims), and an attention whose head dims only agree at run
time (not fused; the score MatMul checks them). Each
compiles once with kiln and runs with agreeing extents against numpy or
onnxruntime, and with disagreeing ones for its exact message.

    check_symbolic_extents.py KILN WORK_DIR
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(5)
failures = []


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def build(name, node, inputs, constants=None):
    """A one-node model over float inputs [(name, dims)] and initializers
    {name: array}, compiled; its path."""
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims)
         for n, dims in inputs],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, n) for n, v in (constants or {}).items()])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"],
                   check=True)
    return path


def run(path, inputs, expected=None, tag=""):
    cmd = [kiln, "run", path[:-5] + ".so"]
    for name, value in inputs.items():
        file = os.path.join(work, f"{tag}_{name}.npy")
        np.save(file, value)
        cmd += ["--input", f"{name}={file}"]
    if expected is not None:
        file = os.path.join(work, f"{tag}_expected.npy")
        np.save(file, expected)
        cmd += ["--expect", f"out={file}", "--atol", "1e-4", "--rtol", "1e-4"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def expect_pass(tag, path, inputs, expected=None):
    if expected is None:
        session = ort.InferenceSession(path,
                                       providers=["CPUExecutionProvider"])
        expected = session.run(None, inputs)[0]
    code, text = run(path, inputs, expected, tag)
    print(f"{tag}: {'PASS' if code == 0 else 'FAIL'}")
    if code != 0:
        failures.append(f"{tag}: {text.strip()}")


def expect_error(tag, path, inputs, message):
    code, text = run(path, inputs, tag=tag)
    ok = code == 1 and message in text
    print(f"{tag}: {'PASS' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{tag}: expected '{message}', got rc {code}: "
                        f"{text.strip()}")


NO_BROADCAST = "the inputs do not broadcast: along result dim {} a " \
               "run-time extent is neither the others' nor 1"

# Add of two symbols along dim 1: equal, a 1 on either side, both 1.
add = build("add", helper.make_node("Add", ["x", "y"], ["out"], name="add"),
            [("x", ["b", "n"]), ("y", ["b", "m"])])
x, y = f32(2, 5), f32(2, 5)
for tag, a, c in (("add_same", x, y), ("add_one_right", x, y[:, :1]),
                  ("add_one_left", x[:, :1], y),
                  ("add_ones", x[:, :1], y[:, :1])):
    expect_pass(tag, add, {"x": a, "y": c}, a + c)
expect_error("add_5_3", add, {"x": x, "y": y[:, :3]},
             "node 'add': " + NO_BROADCAST.format(1))

# A batched MatMul whose batch dims are different symbols.
mm = build("matmul", helper.make_node("MatMul", ["x", "y"], ["out"],
                                      name="mm"),
           [("x", ["b", 4, "k"]), ("y", ["c", "j", 3])])
for tag, (b, c) in (("matmul_same", (3, 3)), ("matmul_rhs_one", (2, 1)),
                    ("matmul_lhs_one", (1, 5))):
    a, w = f32(b, 4, 8), f32(c, 8, 3)
    expect_pass(tag, mm, {"x": a, "y": w}, a @ w)
expect_error("matmul_inner", mm, {"x": f32(2, 4, 8), "y": f32(2, 7, 3)},
             "node 'mm': MatMul: the inputs' inner dims differ (the first "
             "input's last dim and the second's second to last)")
expect_error("matmul_batch", mm, {"x": f32(2, 4, 8), "y": f32(3, 8, 3)},
             "node 'mm': " + NO_BROADCAST.format(0))

# Concat along axis 1: the batch dims (two symbols) must agree.
concat = build("concat", helper.make_node("Concat", ["x", "y"], ["out"],
                                          name="cat", axis=1),
               [("x", ["b", "n"]), ("y", ["c", "m"])])
expect_pass("concat_same", concat, {"x": f32(2, 3), "y": f32(2, 4)})
expect_error("concat_batch", concat, {"x": f32(2, 3), "y": f32(3, 4)},
             "node 'cat': Concat: the inputs differ in dim 0 (only the "
             "axis, 1, may differ)")

# LayerNormalization over a run-time last dim with a scale of its own
# symbol.
ln = build("layer_norm", helper.make_node(
    "LayerNormalization", ["x", "s", "bias"], ["out"], name="ln", axis=-1),
    [("x", ["b", "n"]), ("s", ["m"]), ("bias", ["m"])])
expect_pass("layer_norm_same", ln, {"x": f32(3, 6), "s": f32(6),
                                    "bias": f32(6)})
expect_error("layer_norm_scale", ln, {"x": f32(3, 6), "s": f32(4),
                                      "bias": f32(4)},
             "node 'ln': " + NO_BROADCAST.format(1))

# BatchNormalization and InstanceNormalization over run-time channels,
# their parameters of another symbol.
bn = build("batch_norm", helper.make_node(
    "BatchNormalization", ["x", "s", "bias", "mean", "var"], ["out"],
    name="bn"),
    [("x", ["b", "c", 5]), ("s", ["m"]), ("bias", ["m"]), ("mean", ["m"]),
     ("var", ["m"])])
params = {"s": f32(4), "bias": f32(4), "mean": f32(4),
          "var": np.abs(f32(4)) + 0.1}
expect_pass("batch_norm_same", bn, {"x": f32(2, 4, 5), **params})
expect_error("batch_norm_channels", bn, {"x": f32(2, 3, 5), **params},
             "node 'bn': " + NO_BROADCAST.format(0))
inorm = build("instance_norm", helper.make_node(
    "InstanceNormalization", ["x", "s", "bias"], ["out"], name="in"),
    [("x", ["b", "c", 5]), ("s", ["m"]), ("bias", ["m"])])
expect_pass("instance_norm_same", inorm, {"x": f32(2, 4, 5), "s": f32(4),
                                          "bias": f32(4)})
expect_error("instance_norm_channels", inorm,
             {"x": f32(2, 4, 5), "s": f32(3), "bias": f32(3)},
             "node 'in': " + NO_BROADCAST.format(1))

# Parameters of a static extent (initializers) over run-time channels or
# a run-time normalized dim: the extents must agree when the model runs.
ln_const = build(
    "layer_norm_const", helper.make_node(
        "LayerNormalization", ["x", "s", "bias"], ["out"], name="ln",
        axis=-1),
    [("x", ["b", "n"])], {"s": f32(6), "bias": f32(6)})
expect_pass("layer_norm_const_same", ln_const, {"x": f32(3, 6)})
expect_error("layer_norm_const_other", ln_const, {"x": f32(3, 4)},
             "node 'ln': " + NO_BROADCAST.format(1))
bn_const = build(
    "batch_norm_const", helper.make_node(
        "BatchNormalization", ["x", "s", "bias", "mean", "var"], ["out"],
        name="bn"),
    [("x", ["b", "c", 5])],
    {"s": f32(4), "bias": f32(4), "mean": f32(4),
     "var": np.abs(f32(4)) + 0.1})
expect_pass("batch_norm_const_same", bn_const, {"x": f32(2, 4, 5)})
expect_error("batch_norm_const_one", bn_const, {"x": f32(2, 1, 5)},
             "node 'bn': " + NO_BROADCAST.format(0))

expect_error("batch_norm_const_one_entry", build(
    "batch_norm_one", helper.make_node(
        "BatchNormalization", ["x", "s", "bias", "mean", "var"], ["out"],
        name="bn1"),
    [("x", ["b", "c", 5])],
    {"s": f32(1), "bias": f32(1), "mean": f32(1),
     "var": np.abs(f32(1)) + 0.1}), {"x": f32(2, 3, 5)},
    "node 'bn1': BatchNormalization: the parameters have 1 entry and the "
    "input more channels")

# Attention whose query head dim is known only at run time while the keys'
# is static (8): not fused (the head dims must match exactly), and the
# score matmul checks its inner dims when the model runs.
graph = helper.make_graph(
    [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
     helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
     helper.make_node("Softmax", ["s"], ["p"], axis=-1),
     helper.make_node("MatMul", ["p", "v"], ["out"], name="context")],
    "attention_head",
    [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, 2, "t", "d"]),
     helper.make_tensor_value_info("k", TensorProto.FLOAT, [1, 2, "t", 8]),
     helper.make_tensor_value_info("v", TensorProto.FLOAT, [1, 2, "t", 8])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
att = os.path.join(work, "attention_head.onnx")
onnx.save(helper.make_model(graph,
                            opset_imports=[helper.make_opsetid("", 17)]), att)
subprocess.run([kiln, "compile", att, "-o", att[:-5] + ".so"], check=True)
kv = {"k": f32(1, 2, 6, 8), "v": f32(1, 2, 6, 8)}
expect_pass("attention_head_same", att, {"q": f32(1, 2, 6, 8), **kv})
expect_error("attention_head_other", att, {"q": f32(1, 2, 6, 5), **kv},
             "node 'scores': MatMul: the inputs' inner dims differ")

if failures:
    print("FAILED:\n" + "\n".join(failures))
    sys.exit(1)
print("PASS")
