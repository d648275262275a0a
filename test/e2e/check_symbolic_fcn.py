#!/usr/bin/env python3
"""Upsampling over a run-time height and width, against onnxruntime.

A fully convolutional net (a small U-Net: convolutions, a max pool, a
transposed convolution, bilinear and nearest upsampling, a skip concat)
exported with dynamic batch, height and width is compiled ONCE with kiln
(no --input-shape) and run at several image sizes; then single Resize
nodes over run-time extents, one per mode and coordinate transformation,
given scales or sizes, and single ConvTranspose nodes (strides, pads,
dilations, output_padding, groups), Pad in every mode, a style-transfer
style net of reflection pads, DepthToSpace (both modes) and SpaceToDepth,
and LRN (run-time channels too). Each result is compared with onnxruntime's. What still needs static extents says so.

    check_symbolic_fcn.py KILN WORK_DIR
"""
import json
import os
import subprocess
import sys

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    from onnx import TensorProto, helper
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
torch.manual_seed(0)
rng = np.random.default_rng(0)
failures = []


def compile_model(path, *flags):
    artifact = path.replace(".onnx", ".so")
    done = subprocess.run([kiln, "compile", path, "-o", artifact, *flags],
                          capture_output=True, text=True)
    if done.returncode != 0:
        failures.append(f"{os.path.basename(path)}: kiln compile failed: "
                        f"{done.stderr.strip()}")
        return None
    return artifact


def check_sizes(name, path, make_inputs, sizes, tolerance=1e-4):
    """Compiles `path` once and runs it at each size against onnxruntime."""
    artifact = compile_model(path)
    if artifact is None:
        return
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for size in sizes:
        inputs = make_inputs(*size)
        expected = session.run(None, inputs)[0]
        cmd = [kiln, "run", artifact]
        tag = f"{name}_{'x'.join(map(str, size))}"
        for key, value in inputs.items():
            file = os.path.join(work, f"{tag}_{key}.npy")
            np.save(file, value)
            cmd += ["--input", f"{key}={file}"]
        file = os.path.join(work, f"{tag}_expected.npy")
        np.save(file, expected)
        cmd += ["--expect", f"out={file}", "--atol", str(tolerance),
                "--rtol", str(tolerance)]
        done = subprocess.run(cmd, capture_output=True, text=True)
        verdict = "PASS" if done.returncode == 0 else "FAIL"
        print(f"{name} {size} -> {list(expected.shape)}: {verdict}")
        if done.returncode != 0:
            failures.append(f"{name} at {size}: "
                            f"{(done.stdout + done.stderr).strip()}")


def save_model(name, nodes, inputs, initializers=(), opset=19):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
         for n, shape in inputs],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        initializer=list(initializers))
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    return path


def export_hw(name, model, sample):
    """torch.onnx export with a run-time batch, height and width."""
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(model.eval(), (sample,), path, input_names=["x"],
                      output_names=["out"],
                      dynamic_axes={"x": {0: "b", 2: "h", 3: "w"},
                                    "out": {0: "b", 2: "h", 3: "w"}},
                      opset_version=17, dynamo=False)
    return path


def expect_error(name, cmd, message, code=None):
    """`cmd` (kiln arguments) must fail (with exit code `code` if given) and
    print `message` on stderr."""
    done = subprocess.run([kiln, *cmd], capture_output=True, text=True)
    failed = done.returncode == code if code else done.returncode != 0
    if not failed or message not in done.stderr:
        failures.append(f"{name}: expected '{message}', got rc "
                        f"{done.returncode}: {done.stderr.strip()}")
    else:
        print(f"{name}: PASS")


def floats(name, values):
    values = np.asarray(values, np.float32)
    return helper.make_tensor(name, TensorProto.FLOAT, values.shape,
                              values.flatten())


def ints(name, values):
    return helper.make_tensor(name, TensorProto.INT64, [len(values)], values)


def image(b, c, h, w):
    return {"x": rng.standard_normal((b, c, h, w), dtype=np.float32)}


# Single Resize nodes over [b, 2, h, w]: scales (the result extent
# floor(in * scale) computed as the model runs) or sizes (the scale
# size / in computed then), every mode and transformation. Kiln follows
# ONNX's reference where onnxruntime departs from it, so the scales avoid
# those cases: onnxruntime rounds in * scale in float32 (5 * 1.4f gives it
# 7 extents, the reference 6), and its align_corners divides by the
# rounded output extent rather than in * scale.
resize_cases = [
    ("nearest_asym_floor", dict(mode="nearest",
                                coordinate_transformation_mode="asymmetric",
                                nearest_mode="floor"), [1, 1, 2, 2], None),
    ("nearest_half", dict(mode="nearest"), [1, 1, 1.5, 2.5], None),
    # Scale 1 still moves the coordinate by half a pixel here.
    ("nearest_tf_nn", dict(mode="nearest", nearest_mode="ceil",
                           coordinate_transformation_mode="tf_half_pixel_for_nn"),
     [1, 1, 1, 2], None),
    ("nearest_ceil_align", dict(mode="nearest", nearest_mode="ceil",
                                coordinate_transformation_mode="align_corners"),
     [1, 1, 3, 2], None),
    ("linear_half", dict(mode="linear"), [1, 1, 2, 2], None),
    ("linear_align", dict(mode="linear",
                          coordinate_transformation_mode="align_corners"),
     [1, 1, 2, 3], None),
    ("linear_pytorch", dict(mode="linear",
                            coordinate_transformation_mode="pytorch_half_pixel"),
     [1, 1, 0.5, 1.75], None),
    ("linear_symmetric", dict(mode="linear",
                              coordinate_transformation_mode="half_pixel_symmetric"),
     [1, 1, 1.7, 2.3], None),
    ("cubic_half", dict(mode="cubic"), [1, 1, 2, 2], None),
    ("cubic_exclude", dict(mode="cubic", exclude_outside=1,
                           cubic_coeff_a=-0.5), [1, 1, 0.625, 1.375], None),
    ("linear_sizes", dict(mode="linear"), None, [8, 13]),
    ("nearest_sizes", dict(mode="nearest", nearest_mode="round_prefer_ceil"),
     None, [5, 9]),
    # Run-time scales for the sizes; the batch and channels keep scale 1.
    ("nearest_tf_nn_sizes", dict(mode="nearest", nearest_mode="ceil",
                                 coordinate_transformation_mode="tf_half_pixel_for_nn"),
     None, [6, 9]),
    ("cubic_sizes_align", dict(mode="cubic",
                               coordinate_transformation_mode="align_corners"),
     None, [7, 4]),
]
for name, attrs, scales, sizes in resize_cases:
    inits, node_inputs = [], ["x", ""]
    if scales is not None:
        inits.append(floats("scales", scales))
        node_inputs.append("scales")
    else:
        inits.append(ints("sizes", sizes))
        node_inputs += ["", "sizes"]
        attrs = dict(attrs, axes=[2, 3])
    path = save_model(
        "resize_" + name,
        [helper.make_node("Resize", node_inputs, ["out"], name="resize",
                          **attrs)],
        [("x", ["b", 2, "h", "w"])], inits)
    check_sizes("resize_" + name, path, lambda b, h, w: image(b, 2, h, w),
                [(1, 4, 5), (2, 1, 1), (1, 9, 16), (3, 7, 3)])

# tf_crop_and_resize over a run-time extent: the roi's extrapolated
# outputs take extrapolation_value.
crop = save_model(
    "resize_crop",
    [helper.make_node("Resize", ["x", "roi", "", "sizes"], ["out"],
                      mode="linear", name="crop",
                      coordinate_transformation_mode="tf_crop_and_resize",
                      extrapolation_value=-3.0)],
    [("x", [1, 1, "h", "w"])],
    [floats("roi", [0, 0, 0.2, -0.3, 1, 1, 0.9, 1.2]),
     ints("sizes", [1, 1, 6, 7])])
check_sizes("resize_crop", crop, lambda h, w: image(1, 1, h, w),
            [(4, 5), (1, 1), (10, 3)])

# Upsample (opset 9): scales as an input.
upsample = save_model(
    "upsample9",
    [helper.make_node("Upsample", ["x", "scales"], ["out"], mode="linear",
                      name="up")],
    [("x", ["b", 2, "h", "w"])], [floats("scales", [1, 1, 2, 3])], opset=9)
check_sizes("upsample9", upsample, lambda b, h, w: image(b, 2, h, w),
            [(1, 3, 4), (2, 1, 6)])

# Single ConvTranspose nodes over [b, 4, h, w]: stride 2 with pads and
# output_padding, stride 3 dilated, grouped, a 1-D one, no stride at all.
conv_t_cases = [
    ("s2_pads", dict(strides=[2, 2], pads=[1, 1, 1, 1],
                     output_padding=[1, 1]), (4, 6, 3, 3), 1),
    ("s3_dilated", dict(strides=[3, 2], dilations=[2, 1], pads=[0, 1, 2, 0]),
     (4, 3, 3, 2), 1),
    ("grouped", dict(strides=[2, 2], group=2), (4, 3, 2, 2), 2),
    ("unstrided", dict(pads=[1, 1, 1, 1]), (4, 5, 3, 3), 1),
]
for name, attrs, w_shape, group in conv_t_cases:
    weight = rng.standard_normal(w_shape, dtype=np.float32)
    bias = rng.standard_normal(w_shape[1] * group, dtype=np.float32)
    path = save_model(
        "conv_t_" + name,
        [helper.make_node("ConvTranspose", ["x", "w", "bias"], ["out"],
                          name="up", **attrs)],
        [("x", ["b", 4, "h", "w"])],
        [floats("w", weight), floats("bias", bias)])
    check_sizes("conv_t_" + name, path, lambda b, h, w: image(b, 4, h, w),
                [(1, 5, 6), (2, 1, 1), (1, 17, 3)])
conv_1d = save_model(
    "conv_t_1d",
    [helper.make_node("ConvTranspose", ["x", "w"], ["out"], strides=[4],
                      pads=[1, 2], name="up")],
    [("x", ["b", 4, "t"])],
    [floats("w", rng.standard_normal((4, 2, 5), dtype=np.float32))])
check_sizes("conv_t_1d", conv_1d,
            lambda b, t: {"x": rng.standard_normal((b, 4, t),
                                                   dtype=np.float32)},
            [(1, 1), (3, 10)])

# A small U-Net exported by torch with dynamic batch, height and width:
# the decoder upsamples by a transposed convolution and by bilinear and
# nearest interpolation, and concatenates the encoder's features.
class UNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(5)
        self.e1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.e2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.mid = nn.Conv2d(16, 16, 3, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.d1 = nn.Conv2d(16, 8, 3, padding=1)
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x):
        a = self.e1(x)
        b = self.e2(nn.functional.max_pool2d(a, 2))
        c = self.mid(nn.functional.max_pool2d(b, 2))
        c = nn.functional.interpolate(c, scale_factor=2.0, mode="bilinear",
                                      align_corners=False)
        d = self.up(b + c)
        d = self.d1(torch.cat([a, d], 1))
        y = self.head(torch.relu(d))
        return y + nn.functional.interpolate(y[:, :, ::2, ::2],
                                             scale_factor=2.0,
                                             mode="nearest")


unet = export_hw("unet", UNet(), torch.randn(1, 3, 32, 48))
check_sizes("unet", unet, lambda b, h, w: image(b, 3, h, w),
            [(1, 32, 48), (2, 8, 12), (1, 4, 4), (1, 64, 36)])

# Inverted residual blocks (MobileNetV2's) over a run-time batch, height
# and width: kiln-conv-layout moves the chain to NHWC, where the direct
# convolution kernel and the channel-vectorized depthwise loops take images
# of any size (tasks cut at run time, ReLU6 and the residual add fused into
# their stores). A stride-2 stem and depthwise, a dilated depthwise, 20
# channels (a masked vector tail), and sizes down to one output pixel.
class InvertedResiduals(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(6)

        def block(cin, mid, cout, stride, dilation=1):
            return nn.Sequential(
                nn.Conv2d(cin, mid, 1), nn.BatchNorm2d(mid), nn.ReLU6(),
                nn.Conv2d(mid, mid, 3, stride, padding=dilation,
                          dilation=dilation, groups=mid),
                nn.BatchNorm2d(mid), nn.ReLU6(), nn.Conv2d(mid, cout, 1),
                nn.BatchNorm2d(cout))
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.ReLU6())
        self.b1 = block(16, 48, 16, 1)
        self.b2 = block(16, 64, 20, 2)
        self.b3 = block(20, 80, 20, 1, dilation=2)
        self.head = nn.Conv2d(20, 5, 1)
        for m in self.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 1.5)

    def forward(self, x):
        x = self.stem(x)
        x = x + self.b1(x)
        x = self.b2(x)
        return self.head(x + self.b3(x))


mbv2 = export_hw("inverted_residuals", InvertedResiduals(),
                 torch.randn(1, 3, 32, 32))
check_sizes("inverted_residuals", mbv2, lambda b, h, w: image(b, 3, h, w),
            [(1, 32, 32), (2, 17, 45), (1, 3, 4), (3, 64, 40)])
# Every convolution in the NHWC kernels, none left a scalar loop nest.
report = os.path.join(work, "inverted_residuals.json")
if compile_model(mbv2, f"--report={report}"):
    with open(report) as f:
        kernels = [k["kernel"].split(":", 1)[1].split(" ")[0]
                   for k in json.load(f)["kernels"]]
    counts = {name: kernels.count(name) for name in
              ("conv_2d_nhwc_hwcf", "depthwise_conv_2d_nhwc_hwc")}
    print(f"inverted_residuals kernels: {counts}")
    if counts != {"conv_2d_nhwc_hwcf": 8, "depthwise_conv_2d_nhwc_hwc": 3}:
        failures.append(f"inverted_residuals: expected 8 direct and 3 "
                        f"depthwise NHWC kernels, got {kernels}")

# Pads over a run-time height and width, every mode (reflection padding
# is what style-transfer and super-resolution nets put before each conv),
# and a net made of them, exported by torch.
for mode in ["reflect", "edge", "wrap", "constant"]:
    path = save_model(
        "pad_" + mode,
        [helper.make_node("Pad", ["x", "pads"], ["out"], mode=mode,
                          name="pad")],
        [("x", ["b", 2, "h", "w"])], [ints("pads", [0, 0, 2, 1, 0, 1, 1, 2])])
    # (An empty batch, which is not padded, stays empty; onnxruntime
    # refuses one in wrap mode.)
    check_sizes("pad_" + mode, path, lambda b, h, w: image(b, 2, h, w),
                [(1, 3, 4), (2, 5, 3), (1, 16, 9)] +
                ([(0, 3, 4)] if mode != "wrap" else []))
np.save(os.path.join(work, "empty.npy"), np.zeros((1, 2, 0, 4), np.float32))
expect_error("pad_reflect of an empty dim",
             ["run", os.path.join(work, "pad_reflect.so"), "--input",
              "x=" + os.path.join(work, "empty.npy")],
             "node 'pad': Pad: reflect padding of dim 2, whose run-time "
             "extent is 0")


class StyleNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(7)
        self.c1 = nn.Conv2d(3, 8, 5)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2)
        self.c3 = nn.Conv2d(8, 3, 3)

    def forward(self, x):
        pad = nn.functional.pad
        x = torch.relu(self.c1(pad(x, (2, 2, 2, 2), mode="reflect")))
        x = torch.relu(self.c2(pad(x, (1, 1, 1, 1), mode="replicate")))
        x = nn.functional.interpolate(x, scale_factor=2.0, mode="nearest")
        return torch.tanh(self.c3(pad(x, (1, 1, 1, 1), mode="reflect")))


style = export_hw("style", StyleNet(), torch.randn(1, 3, 32, 32))
check_sizes("style", style, lambda b, h, w: image(b, 3, h, w),
            [(1, 32, 32), (2, 10, 14), (1, 48, 20)])

# A super-resolution net's pixel shuffle (DepthToSpace, both modes) and its
# inverse (SpaceToDepth) over a run-time batch, height and width; an extent
# that does not divide by the block fails SpaceToDepth's run.
for name, op, mode, channels in [("d2s_dcr", "DepthToSpace", "DCR", 8),
                                 ("d2s_crd", "DepthToSpace", "CRD", 8),
                                 ("s2d", "SpaceToDepth", None, 3)]:
    attrs = {"blocksize": 2, **({"mode": mode} if mode else {})}
    path = save_model(name, [helper.make_node(op, ["x"], ["out"], name=name,
                                              **attrs)],
                      [("x", ["b", channels, "h", "w"])])
    check_sizes(name, path,
                lambda b, h, w, c=channels: image(b, c, h, w),
                [(1, 4, 6), (2, 8, 2), (1, 2, 10)])
    if op == "SpaceToDepth":
        expect_error("s2d_odd", ["run", path[:-5] + ".so", "--random-inputs",
                                 "--dim", "b=1", "--dim", "h=5",
                                 "--dim", "w=4"],
                     "Reshape: the shape's element count differs from the "
                     "input's", code=1)

# LRN (GoogLeNet's and AlexNet's) over a run-time batch, height and width:
# the channel window runs as a pool over a [N, 1, C, H, W] view.
# (A window wider than 2C - 1 channels is clamped there: the same sum.)
for name, size in [("lrn", 5), ("lrn_wide", 15)]:
    path = save_model(
        name, [helper.make_node("LRN", ["x"], ["out"], size=size,
                                alpha=2e-3, beta=0.6, bias=1.5,
                                name="lrn")],
        [("x", ["b", 6, "h", "w"])])
    check_sizes(name, path, lambda b, h, w: image(b, 6, h, w),
                [(1, 5, 7), (2, 1, 1), (1, 16, 3)])
# The channels known only at run time too: the window is the size itself.
path = save_model(
    "lrn_channels", [helper.make_node("LRN", ["x"], ["out"], size=5,
                                      alpha=2e-3, beta=0.6, bias=1.5,
                                      name="lrn")],
    [("x", ["b", "c", "h", "w"])])
check_sizes("lrn_channels", path, lambda b, c, h: image(b, c, h, 3),
            [(1, 6, 7), (2, 1, 2), (1, 17, 3), (1, 2, 1)])
huge = save_model(
    "lrn_huge", [helper.make_node("LRN", ["x"], ["out"], size=1025,
                                  name="lrn")],
    [("x", ["b", "c", 4, 4])])
expect_error("lrn_huge", ["compile", huge, "-o", huge + ".so"],
             "error: unsupported ONNX op 'LRN' (opset 19) at node 'lrn': LRN "
             "of size 1025 over a run-time channel extent (up to 1024 "
             "channels; give a static one with --input-shape)", code=1)

# A transposed convolution whose pads crop more than the kernel reaches,
# or whose output_shape fixes the result, needs static extents.
for what, attrs, message in [
        ("crop", dict(strides=[2, 2], pads=[3, 3, 3, 3]),
         "error: a transposed convolution over run-time extents needs pads "
         "of at most dilation * (kernel - 1) = 2 in spatial dim 0 (the "
         "end's plus output_padding 0), got 3 and 3 (give static extents "
         "with --input-shape) at node 'up' (ConvTranspose)"),
        ("output_shape", dict(strides=[2, 2], output_shape=[10, 10]),
         "error: spatial dim 2 of 'x' is known only at run time; "
         "ConvTranspose with output_shape needs static spatial extents "
         "(give them with --input-shape) at node 'up' (ConvTranspose)")]:
    path = save_model(
        "conv_t_refused_" + what,
        [helper.make_node("ConvTranspose", ["x", "w"], ["out"], name="up",
                          **attrs)],
        [("x", [1, 4, "h", "w"])],
        [floats("w", np.ones((4, 4, 3, 3), np.float32))])
    expect_error(f"conv_t_refused_{what}",
                 ["compile", path, "-o", path + ".so"], message, code=1)

# keep_aspect_ratio_policy depends on the extents; refused by name.
aspect = save_model(
    "resize_aspect",
    [helper.make_node("Resize", ["x", "", "", "sizes"], ["out"],
                      keep_aspect_ratio_policy="not_larger", axes=[2, 3],
                      name="aspect")],
    [("x", [1, 1, "h", "w"])], [ints("sizes", [8, 8])])
expect_error("resize_aspect", ["compile", aspect, "-o", aspect + ".so"],
             "error: keep_aspect_ratio_policy 'not_larger' needs static input "
             "extents: 'x' has a shape known only at run time (give it with "
             "--input-shape) at node 'aspect' (Resize)", code=1)

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("all run-time upsampling checks passed")
