#!/usr/bin/env python3
"""If, Loop and Scan end to end against onnxruntime.

Builds small models with onnx.helper: an If on a run-time condition whose
branches compute from outer values (both outcomes), a Loop with a constant
trip count, carried values and a scan output, a while-style Loop whose
run-time condition stops it early (carried values only), a Loop whose trip
count is a run-time input and whose scan output shape the model declares, a
Scan in reverse along axis 1 with two states, and an If nested in a Loop
body. Each compiles with kiln and runs against onnxruntime; then a run whose
trip count disagrees with the declared scan output fails with its message.

    check_control_flow.py KILN WORK_DIR
"""
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto as T, helper as h, numpy_helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(11)
failures = []


def const(name, value):
    return h.make_node("Constant", [], [name],
                       value=numpy_helper.from_array(np.asarray(value), name))


def save(name, nodes, inputs, outputs, opset=13):
    graph = h.make_graph(nodes, name, inputs, outputs)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"],
                   check=True)
    return path


def run(path, feeds, expected=None, tag=""):
    cmd = [kiln, "run", path[:-5] + ".so"]
    for name, value in feeds.items():
        file = os.path.join(work, f"{tag}_{name}.npy")
        np.save(file, value)
        cmd += ["--input", f"{name}={file}"]
    for name, value in (expected or {}).items():
        file = os.path.join(work, f"{tag}_{name}_expected.npy")
        np.save(file, value)
        cmd += ["--expect", f"{name}={file}", "--atol", "1e-5", "--rtol",
                "1e-5"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def check(path, feeds, tag):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds)))
    code, text = run(path, feeds, expected, tag)
    ok = code == 0 and text.count(": PASS") == len(names)
    print(f"{tag}: {'PASS' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{tag}: {text.strip()}")


f32 = lambda *shape: rng.standard_normal(shape).astype(np.float32)
vi = h.make_tensor_value_info

# If on a run-time condition, branches computing from outer values.
then_g = h.make_graph([h.make_node("Mul", ["x", "x"], ["t"])], "then", [],
                      [vi("t", T.FLOAT, [3, 4])])
else_g = h.make_graph([h.make_node("Sub", ["x", "y"], ["e"])], "else", [],
                      [vi("e", T.FLOAT, [3, 4])])
path = save("if_runtime",
            [h.make_node("If", ["c"], ["z"], then_branch=then_g,
                         else_branch=else_g)],
            [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3, 4]),
             vi("y", T.FLOAT, [3, 4])], [vi("z", T.FLOAT, [3, 4])])
x, y = f32(3, 4), f32(3, 4)
for flag in (True, False):
    check(path, {"c": np.array(flag), "x": x, "y": y}, f"if_{flag}")

# Loop, constant trip count 6: s = 0.5 s + x[i], scan output s * i.
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Gather", ["x", "i"], ["row"]),
     const("half", np.float32(0.5)),
     h.make_node("Mul", ["s_in", "half"], ["scaled"]),
     h.make_node("Add", ["scaled", "row"], ["s_out"]),
     h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
     h.make_node("Mul", ["s_out", "fi"], ["scan"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("s_in", T.FLOAT, [4])],
    [vi("cond_out", T.BOOL, []), vi("s_out", T.FLOAT, [4]),
     vi("scan", T.FLOAT, [4])])
path = save("loop_const",
            [const("trips", np.int64(6)), const("yes", np.bool_(True)),
             h.make_node("Loop", ["trips", "yes", "s0"], ["s", "scans"],
                         body=body)],
            [vi("x", T.FLOAT, [6, 4]), vi("s0", T.FLOAT, [4])],
            [vi("s", T.FLOAT, [4]), vi("scans", T.FLOAT, [6, 4])])
check(path, {"x": f32(6, 4), "s0": f32(4)}, "loop_const")

# While-style: a run-time condition (sum < limit) stops a loop of at most
# 20 iterations early; only carried values.
body = h.make_graph(
    [h.make_node("Add", ["v_in", "step"], ["v_out"]),
     h.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0),
     h.make_node("Less", ["total", "limit"], ["cond_out"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("v_in", T.FLOAT, [3])],
    [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [3])])
path = save("loop_while",
            [const("trips", np.int64(20)),
             h.make_node("Loop", ["trips", "go", "v0"], ["v"], body=body)],
            [vi("go", T.BOOL, []), vi("v0", T.FLOAT, [3]),
             vi("step", T.FLOAT, [3]), vi("limit", T.FLOAT, [])],
            [vi("v", T.FLOAT, [3])])
for tag, limit, go in [("while_early", 10.0, True), ("while_all", 1e9, True),
                       ("while_none", 10.0, False)]:
    check(path, {"go": np.array(go), "v0": np.zeros(3, np.float32),
                 "step": np.array([0.5, 1.0, 1.5], np.float32),
                 "limit": np.array(limit, np.float32)}, tag)

# Trip count as a run-time input, the scan output shape declared [5, 2].
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Add", ["a_in", "x"], ["a_out"]),
     h.make_node("Identity", ["a_out"], ["scan"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("a_in", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("a_out", T.FLOAT, [2]),
     vi("scan", T.FLOAT, [2])])
path = save("loop_declared",
            [h.make_node("Loop", ["n", "", "a0"], ["a", "scans"], body=body)],
            [vi("n", T.INT64, []), vi("a0", T.FLOAT, [2]),
             vi("x", T.FLOAT, [2])],
            [vi("a", T.FLOAT, [2]), vi("scans", T.FLOAT, [5, 2])])
feeds = {"n": np.array(5, np.int64), "a0": f32(2), "x": f32(2)}
check(path, feeds, "loop_declared")
code, text = run(path, dict(feeds, n=np.array(4, np.int64)), tag="loop_bad")
message = ("node 'Loop_0': Loop: the loop runs other than the 5 iterations "
           "the model declares for 'scans' as [5, 2]")
print(f"loop_bad: {'PASS' if code == 1 and message in text else 'FAIL'}")
if code != 1 or message not in text:
    failures.append(f"loop_bad: expected '{message}', got rc {code}: {text}")

# Scan, reverse along axis 1, two states (running sum and running max).
body = h.make_graph(
    [h.make_node("Add", ["sum_in", "col"], ["sum_out"]),
     h.make_node("Max", ["max_in", "col"], ["max_out"]),
     h.make_node("Mul", ["sum_out", "max_out"], ["prod"])],
    "body", [vi("sum_in", T.FLOAT, [3]), vi("max_in", T.FLOAT, [3]),
             vi("col", T.FLOAT, [3])],
    [vi("sum_out", T.FLOAT, [3]), vi("max_out", T.FLOAT, [3]),
     vi("prod", T.FLOAT, [3])])
path = save("scan_reverse",
            [h.make_node("Scan", ["s0", "m0", "x"], ["s", "m", "prods"],
                         body=body, num_scan_inputs=1, scan_input_axes=[1],
                         scan_input_directions=[1], scan_output_axes=[1])],
            [vi("s0", T.FLOAT, [3]), vi("m0", T.FLOAT, [3]),
             vi("x", T.FLOAT, [3, 7])],
            [vi("s", T.FLOAT, [3]), vi("m", T.FLOAT, [3]),
             vi("prods", T.FLOAT, [3, 7])])
check(path, {"s0": f32(3), "m0": np.full(3, -10, np.float32),
             "x": f32(3, 7)}, "scan_reverse")

# An If (on the parity of the iteration) nested in a Loop body.
then_g = h.make_graph([h.make_node("Add", ["acc_in", "x"], ["p"])], "even",
                      [], [vi("p", T.FLOAT, [4])])
else_g = h.make_graph([h.make_node("Mul", ["acc_in", "x"], ["q"])], "odd",
                      [], [vi("q", T.FLOAT, [4])])
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("two", np.int64(2)), const("zero", np.int64(0)),
     h.make_node("Mod", ["i", "two"], ["r"]),
     h.make_node("Equal", ["r", "zero"], ["even"]),
     h.make_node("If", ["even"], ["acc_out"], then_branch=then_g,
                 else_branch=else_g)],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("acc_in", T.FLOAT, [4])],
    [vi("cond_out", T.BOOL, []), vi("acc_out", T.FLOAT, [4])])
path = save("loop_if",
            [const("trips", np.int64(5)), const("yes", np.bool_(True)),
             h.make_node("Loop", ["trips", "yes", "acc0"], ["acc"],
                         body=body)],
            [vi("acc0", T.FLOAT, [4]), vi("x", T.FLOAT, [4])],
            [vi("acc", T.FLOAT, [4])])
check(path, {"acc0": f32(4), "x": f32(4)}, "loop_if")

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("PASS")
