#!/usr/bin/env python3
"""3x3 stride-1 convolutions by Winograd F(2x2,3x3) and F(4x4,3x3) agree with
onnxruntime's fp32 run within 1e-4 relative.

    check_winograd.py KILN WORK_DIR

Two ONNX models (onnx.helper, random weights) of 3x3 convolutions:
  * odd_sizes: batch 2, 13 x 11 images (tiles past the bottom and right
    edges for both tile sizes), channels that are not a multiple of the
    vector width (17, 40, 33, 24), paddings 1, 0 and 2, with and without a
    bias, a ReLU and a residual Add + ReLU as fused epilogues;
  * tiny_images: batch 3 of 1 x 1 images (one tile, mostly padding), then a
    2 x 3 image.
Each is compiled NHWC with `--winograd=2`, `--winograd=4`, `--winograd=off`
and the default (auto), and each artifact runs on the same random input.
Checks, per mode:
  * `--report`'s winograd_convolutions: every convolution when forced, 0
    when off;
  * max |kiln - onnxruntime| <= 1e-4 * max |onnxruntime| on each output.
Exits 77 (ctest's skip) without onnxruntime.
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"skipping: {e}")
    sys.exit(77)

kiln, work = sys.argv[1], sys.argv[2]
os.makedirs(work, exist_ok=True)
rng = np.random.default_rng(0)


def conv(nodes, inits, x, y, c, f, pad, bias=True):
    w = (rng.standard_normal((f, c, 3, 3)) / np.sqrt(9 * c)).astype(np.float32)
    inits.append(numpy_helper.from_array(w, f"{y}_w"))
    inputs = [x, f"{y}_w"]
    if bias:
        inits.append(numpy_helper.from_array(
            (0.1 * rng.standard_normal(f)).astype(np.float32), f"{y}_b"))
        inputs.append(f"{y}_b")
    nodes.append(helper.make_node("Conv", inputs, [y], name=y,
                                  kernel_shape=[3, 3], pads=[pad] * 4))


def odd_sizes():
    """Batch 2, 13 x 11 images, channels 17/40/33/24, paddings 1/1/0/2,
    bias/ReLU/residual epilogues."""
    nodes, inits = [], []
    conv(nodes, inits, "x", "a", 17, 40, 1)
    nodes.append(helper.make_node("Relu", ["a"], ["a_relu"], name="a_relu"))
    conv(nodes, inits, "a_relu", "b", 40, 40, 1)
    nodes.append(helper.make_node("Add", ["b", "a_relu"], ["res"], name="res"))
    nodes.append(helper.make_node("Relu", ["res"], ["res_relu"], name="res_relu"))
    conv(nodes, inits, "res_relu", "c", 40, 33, 0, bias=False)
    conv(nodes, inits, "c", "d", 33, 24, 2)
    return nodes, inits, [2, 17, 13, 11], {"d": [2, 24, 13, 11],
                                           "res_relu": [2, 40, 13, 11]}


def tiny_images():
    """Batch 3, 1 x 1 images padded to 3 x 3 (one tile, one output of 16 or
    4), then a 2 x 3 image (pads 1 and 2 on a 1 x 1 one)."""
    nodes, inits = [], []
    conv(nodes, inits, "x", "a", 8, 16, 1)
    conv(nodes, inits, "a", "b", 16, 16, 1)
    nodes.append(helper.make_node("Pad", ["b", "pads"], ["p"], name="p"))
    inits.append(numpy_helper.from_array(
        np.array([0, 0, 1, 1, 0, 0, 0, 1], np.int64), "pads"))
    conv(nodes, inits, "p", "c", 16, 32, 1)
    return nodes, inits, [3, 8, 1, 1], {"c": [3, 32, 2, 3]}


failures = []
for name, build in [("odd_sizes", odd_sizes), ("tiny_images", tiny_images)]:
    nodes, inits, in_shape, outs = build()
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, shape)
         for o, shape in outs.items()], inits)
    model = os.path.join(work, f"{name}.onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), model)
    convs = sum(n.op_type == "Conv" for n in nodes)
    x = rng.standard_normal(in_shape).astype(np.float32)
    x_path = os.path.join(work, f"{name}_x.npy")
    np.save(x_path, x)
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    reference = dict(zip([o.name for o in session.get_outputs()],
                         session.run(None, {"x": x})))
    for mode, want in [("2", convs), ("4", convs), ("off", 0), ("auto", None)]:
        so = os.path.join(work, f"{name}_{mode}.so")
        report = subprocess.run(
            [kiln, "compile", model, "-o", so, "--conv-layout=nhwc",
             f"--winograd={mode}", "--report=-"],
            check=True, capture_output=True, text=True).stdout
        count = json.loads(report).get("winograd_convolutions", 0)
        out = os.path.join(work, f"out_{name}_{mode}")
        subprocess.run([kiln, "run", so, "--output-dir", out, "--input",
                        f"x={x_path}"], check=True, stdout=subprocess.DEVNULL)
        line = f"{name} --winograd={mode}: winograd_convolutions {count}"
        if want is not None and count != want:
            failures.append(f"{name} {mode}: {count} Winograd convolutions, "
                            f"want {want}")
        for out_name, ref in reference.items():
            got = np.load(os.path.join(out, f"{out_name}.npy"))
            rel = float(np.abs(got - ref).max() / np.abs(ref).max())
            line += f"; {out_name}: max error {rel:.2e} of max |ref|"
            if rel > 1e-4:
                failures.append(f"{name} {mode}: {out_name} off by {rel:.2e} "
                                "of max |ref|")
        print(line)
if failures:
    sys.exit("check_winograd: FAIL: " + "; ".join(failures))
print("check_winograd: PASS")
