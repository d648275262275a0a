#!/usr/bin/env python3
"""If, Loop and Scan end to end against onnxruntime.

Builds small models with onnx.helper: an If on a run-time condition whose
branches compute from outer values (both outcomes), an If whose branches
give different shapes and whose untaken branch's check does not run, a
Loop with a constant trip count, carried values and a scan output, a
while-style Loop whose run-time condition stops it early (carried values
only), a Loop whose trip count is a run-time input and whose scan output
shape the model declares, a Scan in reverse along axis 1 with two states,
and an If nested in a Loop body. Then loops that run in the artifact (scf.while): a run-time trip
count with an undeclared scan output (0 to 37 iterations), a carried value
that grows each iteration and stops early on a run-time condition, a while
loop with no trip count, 3000 iterations, a body too large to unroll
(400 x 1201 nodes), a loop nested in one, and Scans
over a run-time length (one also of run-time batch, reversed); two
of them also for CUDA, run in the GPU emulator (the nested one is refused
there by name). Each compiles with kiln and runs against onnxruntime; runs whose trip count
disagrees with the declared scan output, or whose taken branch adds
disagreeing extents, fail with their messages, as do malformed loops.

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


def run(path, feeds, expected=None, tag="", so=None):
    cmd = [kiln, "run", so or path[:-5] + ".so"]
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


def check(path, feeds, tag, so=None):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    expected = dict(zip(names, session.run(None, feeds)))
    code, text = run(path, feeds, expected, tag, so)
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

# If whose branches give different shapes ([6, 4] or [3, 4]); the then
# branch adds inputs whose run-time extents must agree, which only a run
# that takes it checks.
then_g = h.make_graph([h.make_node("Concat", ["x", "x"], ["t"], axis=0),
                       h.make_node("Add", ["p", "q"], ["pq"])], "then", [],
                      [vi("t", T.FLOAT, [6, 4]), vi("pq", T.FLOAT, ["n"])])
else_g = h.make_graph([h.make_node("Neg", ["x"], ["e"]),
                       h.make_node("Neg", ["p"], ["np"])], "else", [],
                      [vi("e", T.FLOAT, [3, 4]), vi("np", T.FLOAT, ["n"])])
path = save("if_shapes",
            [h.make_node("If", ["c"], ["z", "w"], then_branch=then_g,
                         else_branch=else_g)],
            [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3, 4]),
             vi("p", T.FLOAT, ["n"]), vi("q", T.FLOAT, ["m"])],
            [vi("z", T.FLOAT, [None, 4]), vi("w", T.FLOAT, ["n"])])
for flag in (True, False):
    check(path, {"c": np.array(flag), "x": x, "p": f32(5), "q": f32(5)},
          f"if_shapes_{flag}")
# The else branch never adds p and q: extents 5 and 2 are fine there.
check(path, {"c": np.array(False), "x": x, "p": f32(5), "q": f32(2)},
      "if_shapes_unchecked")
code, text = run(path, {"c": np.array(True), "x": x, "p": f32(5),
                        "q": f32(2)}, tag="if_shapes_bad")
message = ("node 'Add_1': the inputs do not broadcast: along result dim 0 "
           "a run-time extent is neither the others' nor 1")
ok = code == 1 and message in text
print(f"if_shapes_bad: {'PASS' if ok else 'FAIL'}")
if not ok:
    failures.append(f"if_shapes_bad: rc {code}: {text}")

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
accumulate = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Add", ["a_in", "x"], ["a_out"]),
     h.make_node("Identity", ["a_out"], ["scan"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("a_in", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("a_out", T.FLOAT, [2]),
     vi("scan", T.FLOAT, [2])])
path = save("loop_declared",
            [h.make_node("Loop", ["n", "", "a0"], ["a", "scans"],
                         body=accumulate)],
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

# Loops that run in the artifact: a run-time trip count with no declared
# scan output shape (0, 1, 5, 37 and 20000 iterations: the stack of static
# rows is allocated for the trip count and written row by row).
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Add", ["a_in", "x"], ["a_out"]),
     h.make_node("Cast", ["i"], ["fi"], to=T.FLOAT),
     h.make_node("Mul", ["a_out", "fi"], ["scan"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("a_in", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("a_out", T.FLOAT, [2]),
     vi("scan", T.FLOAT, [2])])
path = save("loop_runtime",
            [h.make_node("Loop", ["n", "", "a0"], ["a", "scans"], body=body)],
            [vi("n", T.INT64, []), vi("a0", T.FLOAT, [2]),
             vi("x", T.FLOAT, [2])],
            [vi("a", T.FLOAT, [2]), vi("scans", T.FLOAT, ["iters", 2])])
for n in (0, 1, 5, 37, 20000):
    check(path, {"n": np.array(n, np.int64), "a0": f32(2), "x": f32(2)},
          f"loop_runtime_{n}")

# A carried value that grows every iteration (a Concat), a run-time trip
# count and a run-time condition that stops early when the sum passes a
# limit; an initializer first used in the body and again after the loop.
step = numpy_helper.from_array(np.array([0.5, 1.5], np.float32), "step")
body = h.make_graph(
    [h.make_node("Mul", ["x", "step"], ["row"]),
     h.make_node("Concat", ["y_in", "row"], ["y_out"], axis=0),
     h.make_node("ReduceSum", ["y_out"], ["total"], keepdims=0),
     h.make_node("Less", ["total", "limit"], ["cond_out"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("y_in", T.FLOAT, [None])],
    [vi("cond_out", T.BOOL, []), vi("y_out", T.FLOAT, [None])])
graph = h.make_graph(
    [const("yes", np.bool_(True)),
     h.make_node("Loop", ["n", "yes", "y0"], ["y"], body=body),
     h.make_node("Mul", ["y", "two"], ["y2"]),
     h.make_node("Add", ["x", "step"], ["z"])],
    "loop_growing",
    [vi("n", T.INT64, []), vi("y0", T.FLOAT, [3]), vi("x", T.FLOAT, [2]),
     vi("limit", T.FLOAT, [])],
    [vi("y2", T.FLOAT, ["len"]), vi("z", T.FLOAT, [2])],
    [step, numpy_helper.from_array(np.float32(2), "two")])
model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
onnx.checker.check_model(model)
path = os.path.join(work, "loop_growing.onnx")
onnx.save(model, path)
subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"], check=True)
# x * step reads outer values only: it runs once, before the loop.
graph_ir = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so",
                           "--logs=fused_graph"], capture_output=True,
                          text=True)
text = graph_ir.stdout + graph_ir.stderr
hoisted = ("scf.while" in text and
           "kiln.mul" in text[:text.index("scf.while")])
print(f"loop_invariant_hoisted: {'PASS' if hoisted else 'FAIL'}")
if not hoisted:
    failures.append("loop_invariant_hoisted: no kiln.mul before the "
                    "scf.while in the fused graph")
for n, limit in [(0, 1e9), (4, 1e9), (50, 40.0), (3, -1.0)]:
    check(path, {"n": np.array(n, np.int64), "y0": np.ones(3, np.float32),
                 "x": np.array([1.0, 2.0], np.float32),
                 "limit": np.array(limit, np.float32)},
          f"loop_growing_{n}_{limit:g}")

# Constant trip counts of 0 and -3 with a scan output: no iteration, an
# empty [0, 2] stack (the row type from the body).
for trips in (0, -3):
    path = save(f"loop_none_{trips}",
                [const("trips", np.int64(trips)),
                 h.make_node("Loop", ["trips", "", "a0"], ["a", "scans"],
                             body=accumulate)],
                [vi("a0", T.FLOAT, [2]), vi("x", T.FLOAT, [2])],
                [vi("a", T.FLOAT, [2]), vi("scans", T.FLOAT, [None, 2])])
    check(path, {"a0": f32(2), "x": f32(2)}, f"loop_none_{trips}")

# A while loop (no trip count): halve until below a run-time bound.
body = h.make_graph(
    [const("half", np.float32(0.5)),
     h.make_node("Mul", ["v_in", "half"], ["v_out"]),
     h.make_node("ReduceMax", ["v_out"], ["top"], keepdims=0),
     h.make_node("Greater", ["top", "bound"], ["cond_out"]),
     h.make_node("Identity", ["top"], ["tops"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("v_in", T.FLOAT, [4])],
    [vi("cond_out", T.BOOL, []), vi("v_out", T.FLOAT, [4]),
     vi("tops", T.FLOAT, [])])
path = save("loop_until",
            [const("yes", np.bool_(True)),
             h.make_node("Loop", ["", "yes", "v0"], ["v", "history"],
                         body=body)],
            [vi("v0", T.FLOAT, [4]), vi("bound", T.FLOAT, [])],
            [vi("v", T.FLOAT, [4]), vi("history", T.FLOAT, [None])])
for bound in (100.0, 1.0, 1e-3):
    check(path, {"v0": np.array([3, -8, 50, 7], np.float32),
                 "bound": np.array(bound, np.float32)}, f"loop_until_{bound:g}")

# A constant trip count beyond what unrolling takes (3000 iterations).
body = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("decay", np.float32(0.999)),
     h.make_node("Mul", ["s_in", "decay"], ["kept"]),
     h.make_node("Add", ["kept", "x"], ["s_out"])],
    "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("s_in", T.FLOAT, [8])],
    [vi("cond_out", T.BOOL, []), vi("s_out", T.FLOAT, [8])])
path = save("loop_long",
            [const("trips", np.int64(3000)),
             h.make_node("Loop", ["trips", "", "s0"], ["s"], body=body)],
            [vi("s0", T.FLOAT, [8]), vi("x", T.FLOAT, [8])],
            [vi("s", T.FLOAT, [8])])
check(path, {"s0": f32(8), "x": f32(8)}, "loop_long")

# 400 iterations of a 1201-node body: unrolled, 480k nodes (a minute of
# compiling); past the unroll budget it runs as one loop instead, and
# compiles in about a second.
nodes = [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Identity", ["s_in"], ["t0"])]
for k in range(600):
    nodes += [h.make_node("Mul", [f"t{k}", "x"], [f"m{k}"]),
              h.make_node("Sin", [f"m{k}"], [f"t{k + 1}"])]
body = h.make_graph(
    nodes, "body", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
                    vi("s_in", T.FLOAT, [8])],
    [vi("cond_out", T.BOOL, []), vi("t600", T.FLOAT, [8])])
path = save("loop_big_body",
            [const("trips", np.int64(400)),
             h.make_node("Loop", ["trips", "", "s0"], ["s"], body=body)],
            [vi("s0", T.FLOAT, [8]), vi("x", T.FLOAT, [8])],
            [vi("s", T.FLOAT, [8])])
graph_ir = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so",
                           "--logs=fused_graph"], capture_output=True,
                          text=True)
graph_ir = graph_ir.stdout + graph_ir.stderr
looped = "scf.while" in graph_ir or "scf.for" in graph_ir
print(f"loop_big_body_not_unrolled: {'PASS' if looped else 'FAIL'}")
if not looped:
    failures.append("loop_big_body_not_unrolled: no loop in the fused graph")
check(path, {"s0": f32(8), "x": f32(8)}, "loop_big_body")

# Nested: the outer loop's trip count is a run-time input, the inner one's
# is the outer iteration number plus one (a triangle of additions).
inner = h.make_graph(
    [h.make_node("Identity", ["c_in"], ["c_out"]),
     h.make_node("Add", ["t_in", "x"], ["t_out"])],
    "inner", [vi("j", T.INT64, []), vi("c_in", T.BOOL, []),
              vi("t_in", T.FLOAT, [3])],
    [vi("c_out", T.BOOL, []), vi("t_out", T.FLOAT, [3])])
outer = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     const("one", np.int64(1)),
     h.make_node("Add", ["i", "one"], ["m"]),
     h.make_node("Loop", ["m", "", "u_in"], ["u_out"], body=inner)],
    "outer", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
              vi("u_in", T.FLOAT, [3])],
    [vi("cond_out", T.BOOL, []), vi("u_out", T.FLOAT, [3])])
path = save("loop_nested",
            [h.make_node("Loop", ["n", "", "u0"], ["u"], body=outer)],
            [vi("n", T.INT64, []), vi("u0", T.FLOAT, [3]),
             vi("x", T.FLOAT, [3])], [vi("u", T.FLOAT, [3])])
for n in (0, 3, 12):
    check(path, {"n": np.array(n, np.int64), "u0": f32(3), "x": f32(3)},
          f"loop_nested_{n}")

# Scan over a run-time sequence length T: a running sum and its products.
body = h.make_graph(
    [h.make_node("Add", ["sum_in", "row"], ["sum_out"]),
     h.make_node("Mul", ["sum_out", "row"], ["prod"])],
    "body", [vi("sum_in", T.FLOAT, [3]), vi("row", T.FLOAT, [3])],
    [vi("sum_out", T.FLOAT, [3]), vi("prod", T.FLOAT, [3])])
path = save("scan_runtime",
            [h.make_node("Scan", ["s0", "x"], ["s", "prods"], body=body,
                         num_scan_inputs=1)],
            [vi("s0", T.FLOAT, [3]), vi("x", T.FLOAT, ["T", 3])],
            [vi("s", T.FLOAT, [3]), vi("prods", T.FLOAT, ["T", 3])])
for steps in (1, 7, 50):
    check(path, {"s0": f32(3), "x": f32(steps, 3)}, f"scan_runtime_{steps}")

# Batch B and length T both run-time: two scan inputs along axis 1 (their
# lengths named apart, so the loop checks them), one read in reverse, a state of run-time extent and a scan output of
# run-time rows stacked newest first along axis 1.
body = h.make_graph(
    [h.make_node("Add", ["h_in", "a"], ["t"]),
     h.make_node("Tanh", ["t"], ["t2"]),
     h.make_node("Mul", ["t2", "b"], ["h_out"]),
     h.make_node("Identity", ["h_out"], ["hs"])],
    "body", [vi("h_in", T.FLOAT, ["B"]), vi("a", T.FLOAT, ["B"]),
             vi("b", T.FLOAT, ["B"])],
    [vi("h_out", T.FLOAT, ["B"]), vi("hs", T.FLOAT, ["B"])])
path = save("scan_batch",
            [h.make_node("Scan", ["h0", "xa", "xb"], ["h", "history"],
                         body=body, num_scan_inputs=2,
                         scan_input_axes=[1, 1], scan_input_directions=[0, 1],
                         scan_output_axes=[1], scan_output_directions=[1])],
            [vi("h0", T.FLOAT, ["B"]), vi("xa", T.FLOAT, ["B", "T"]),
             vi("xb", T.FLOAT, ["B", "U"])],
            [vi("h", T.FLOAT, ["B"]), vi("history", T.FLOAT, ["B", "T"])])
for batch, steps in ((2, 5), (1, 1), (3, 40)):
    check(path, {"h0": f32(batch), "xa": f32(batch, steps),
                 "xb": f32(batch, steps)}, f"scan_batch_{batch}x{steps}")
code, text = run(path, {"h0": f32(2), "xa": f32(2, 5), "xb": f32(2, 4)},
                 tag="scan_bad")
message = "Scan: scan input 1 differs in length from scan input 0"
print(f"scan_bad: {'PASS' if code == 1 and message in text else 'FAIL'}")
if code != 1 or message not in text:
    failures.append(f"scan_bad: expected '{message}', got rc {code}: {text}")

# Refusals, each with its message and exit code 1.
def expect_error(name, nodes, inputs, outputs, message):
    graph = h.make_graph(nodes, name, inputs, outputs)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    done = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"],
                          capture_output=True, text=True)
    ok = done.returncode == 1 and message in done.stderr
    print(f"{name}: {'PASS' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{name}: expected '{message}', got rc "
                        f"{done.returncode}: {done.stderr}")


grow = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Unsqueeze", ["g_in", "zero"], ["g_out"])],
    "grow", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("g_in", T.FLOAT, None)],
    [vi("cond_out", T.BOOL, []), vi("g_out", T.FLOAT, None)])
expect_error("loop_rank_grows",
             [const("zero", np.array([0], np.int64)),
              h.make_node("Loop", ["n", "", "g0"], ["g"], body=grow)],
             [vi("n", T.INT64, []), vi("g0", T.FLOAT, [2])],
             [vi("g", T.FLOAT, None)],
             "unsupported ONNX op 'Loop' (opset 13) at node 'Loop_1': Loop "
             "whose body gives carried value 0 as tensor<1x2xf32> for "
             "tensor<2xf32>")
same = h.make_graph(
    [h.make_node("Identity", ["cond_in"], ["cond_out"]),
     h.make_node("Identity", ["a_in"], ["a_out"])],
    "same", [vi("i", T.INT64, []), vi("cond_in", T.BOOL, []),
             vi("a_in", T.FLOAT, [2])],
    [vi("cond_out", T.BOOL, []), vi("a_out", T.FLOAT, [2])])
expect_error("loop_forever",
             [h.make_node("Loop", ["", "", "a0"], ["a"], body=same)],
             [vi("a0", T.FLOAT, [2])], [vi("a", T.FLOAT, [2])],
             "Loop with neither a trip count nor a condition (it never ends)")
expect_error("loop_missing_carried",
             [h.make_node("Loop", ["n", "", ""], ["a"], body=same)],
             [vi("n", T.INT64, [])], [vi("a", T.FLOAT, [2])],
             "error: node 'Loop_0' (Loop) leaves input 2 empty, which Loop "
             "requires")
then_g = h.make_graph([h.make_node("Identity", ["x"], ["t"])], "then", [],
                      [vi("t", T.FLOAT, [3, 4])])
else_g = h.make_graph([h.make_node("ReduceSum", ["x"], ["r"], keepdims=0)],
                      "else", [], [vi("r", T.FLOAT, [])])
expect_error("if_ranks",
             [h.make_node("If", ["c"], ["z"], then_branch=then_g,
                          else_branch=else_g)],
             [vi("c", T.BOOL, []), vi("x", T.FLOAT, [3, 4])],
             [vi("z", T.FLOAT, None)],
             "unsupported ONNX op 'If' (opset 13) at node 'If_0': If whose "
             "branches give output 0 as tensor<3x4xf32> and tensor<f32>")

# The run-time loops and branches with static outputs, compiled for CUDA
# and run in the GPU emulator.
# A trip count the device computes is refused by name there.
gpu_feeds = {
    "if_runtime": {"c": np.array(False), "x": x, "y": y},
    "loop_long": {"s0": f32(8), "x": f32(8)},
    "loop_nested": None,
}
for name, feeds in gpu_feeds.items():
    path = os.path.join(work, name + ".onnx")
    so = path[:-5] + ".cuda.so"
    done = subprocess.run([kiln, "compile", path, "-o", so, "--target=cuda",
                           "--gpu-emulate"], capture_output=True, text=True)
    if feeds:
        check(path, feeds, f"{name}_cuda_emulated", so)
        continue
    message = ("error: a value computed on the device is needed by the host "
               "(a run-time shape or loop bound); not supported on GPU "
               "targets yet at node 'Loop_0' (Loop)")
    ok = done.returncode == 1 and message in done.stderr
    print(f"{name}_cuda_refused: {'PASS' if ok else 'FAIL'}")
    if not ok:
        failures.append(f"{name}_cuda_refused: rc {done.returncode}: "
                        f"{done.stderr}")

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("PASS")
