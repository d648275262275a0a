#!/usr/bin/env python3
"""Symbolic dims end to end: one artifact, many sizes, against onnxruntime.

Exports with torch.onnx (dynamic_axes) a GPT-2 style block (causal mask
built from the sequence length), the same block with GPT-2's mask (a slice
of a registered triangle, bounds computed from the sequence length), a
BERT-style encoder (token and position embeddings, a padding mask), a small
CNN and ResNet-18 with a dynamic batch, a mean over the sequence, a layer
norm over a run-time extent, Hardmax along a run-time axis, and
spectrograms (torch.stft, ONNX STFT) of a run-time signal length and DFTs
along a run-time axis; compiles each ONCE with kiln (no
--input-shape) and runs it at several sizes against onnxruntime. Then the
run-time errors: two inputs that disagree on a shared dim, and a size
outside the --dim range.

    check_symbolic.py KILN WORK_DIR
"""
import os
import re
import subprocess
import sys

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

kiln, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)
torch.manual_seed(0)
failures = []


import symbolic_models  # noqa: E402
from symbolic_models import (Encoder, Gpt2Block, GptBlock,  # noqa: E402
                             Recurrent, SmallCnn)


def export(name, model, args, names, axes):
    return symbolic_models.export(work, name, model, args, names, axes)


def compile_model(path, *flags):
    artifact = path.replace(".onnx", ".so")
    subprocess.run([kiln, "compile", path, "-o", artifact, *flags],
                   check=True)
    return artifact


def run(artifact, inputs, expected=None, tag=""):
    return symbolic_models.run(kiln, work, artifact, inputs, expected, tag)


def check_sizes(name, path, artifact, make_inputs, sizes):
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for size in sizes:
        inputs = make_inputs(*size)
        expected = session.run(None, inputs)[0]
        code, text = run(artifact, inputs, expected, f"{name}_{size}")
        verdict = "PASS" if code == 0 else "FAIL"
        print(f"{name} {size}: {verdict}")
        if code != 0:
            failures.append(f"{name} at {size}: {text.strip()}")


rng = np.random.default_rng(0)
axes_bs = {0: "batch", 1: "seq"}

gpt = export("gpt", GptBlock(), (torch.randn(2, 16, 64),), ["x"],
             {"x": axes_bs, "out": axes_bs})
check_sizes("gpt", gpt, compile_model(gpt),
            lambda b, t: {"x": rng.standard_normal((b, t, 64),
                                                   dtype=np.float32)},
            [(1, 1), (1, 7), (3, 64), (1, 128), (1, 300), (3, 7)])

gpt2 = export("gpt2", Gpt2Block(), (torch.randn(2, 16, 64),), ["x"],
              {"x": axes_bs, "out": axes_bs})
check_sizes("gpt2", gpt2, compile_model(gpt2, "--dim", "seq=1..512"),
            lambda b, t: {"x": rng.standard_normal((b, t, 64),
                                                   dtype=np.float32)},
            [(1, 1), (1, 7), (3, 64), (1, 300)])

# Without --dim, a size beyond the registered buffer fails the run (as in
# onnxruntime) instead of reading past the mask.
gpt2_any = gpt2.replace(".onnx", "_any.onnx")
os.link(gpt2, gpt2_any) if not os.path.exists(gpt2_any) else None
code, text = run(compile_model(gpt2_any),
                 {"x": np.zeros((1, 600, 64), np.float32)}, tag="gpt2_long")
if code == 0 or ("Slice: the end computed for axis 2 is beyond that dim's "
                 "extent 512") not in text:
    failures.append(f"gpt2 at 600 tokens: expected the Slice check, got rc "
                    f"{code}: {text.strip()}")
else:
    print("gpt2 beyond its causal buffer: PASS")

enc = export("encoder", Encoder(),
             (torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.int64)),
             ["ids", "mask"], {"ids": axes_bs, "mask": axes_bs, "out": axes_bs})


def encoder_inputs(b, t):
    mask = np.ones((b, t), dtype=np.int64)
    mask[:, t - t // 3:] = 0  # padding at the end of every row
    mask[:, 0] = 1
    return {"ids": rng.integers(0, 100, (b, t), dtype=np.int64), "mask": mask}


encoder_so = compile_model(enc, "--dim", "seq=1..512")
check_sizes("encoder", enc, encoder_so, encoder_inputs,
            [(1, 1), (1, 7), (3, 64), (1, 128), (1, 300)])

cnn = export("cnn", SmallCnn(), (torch.randn(2, 3, 32, 32),), ["x"],
             {"x": {0: "batch"}, "out": {0: "batch"}})
check_sizes("cnn", cnn, compile_model(cnn),
            lambda b: {"x": rng.standard_normal((b, 3, 32, 32),
                                                dtype=np.float32)},
            [(1,), (2,), (8,)])


# ResNet-18 (random weights) with a dynamic batch, at 1, 2 and 8.
try:
    import torchvision
    resnet = torchvision.models.resnet18(weights=None)
    r18 = export("resnet18", resnet, (torch.randn(1, 3, 224, 224),), ["x"],
                 {"x": {0: "batch"}, "out": {0: "batch"}})
    check_sizes("resnet18", r18, compile_model(r18),
                lambda b: {"x": rng.standard_normal((b, 3, 224, 224),
                                                    dtype=np.float32)},
                [(1,), (2,), (8,)])
except ImportError:
    print("resnet18: skipped (no torchvision)")


def expect_error(what, code, text, message):
    if code == 0 or message not in text:
        failures.append(f"{what}: expected '{message}', got rc {code}: "
                        f"{text.strip()}")
    else:
        print(f"{what}: PASS")


ids = rng.integers(0, 100, (1, 64), dtype=np.int64)
code, text = run(encoder_so, {"ids": ids, "mask": np.ones((1, 77), np.int64)},
                 tag="mismatch")
expect_error("shared dim mismatch", code, text,
             "input 'mask' dim 1 (seq) is 77 but input 'ids' has 64")
long_ids = rng.integers(0, 100, (1, 600), dtype=np.int64)
code, text = run(encoder_so, {"ids": long_ids,
                              "mask": np.ones((1, 600), np.int64)},
                 tag="range")
expect_error("out of range", code, text,
             "input 'ids' dim 1 (seq) is 600, outside the range 1..512 the "
             "model was compiled for")

# A mean over the sequence (a sentence embedding's pooling) and a layer
# norm over a run-time extent: the counts they divide by come from the run.
import onnx  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

def save_model(name, nodes, inputs, output_shape, opset=17):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
         for n, shape in inputs],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT,
                                       output_shape)])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", opset)]),
              path)
    return path


pool = save_model("mean_pool",
                  [helper.make_node("ReduceMean", ["x"], ["out"], axes=[1],
                                    keepdims=0, name="pool")],
                  [("x", ["batch", "seq", 16])], ["batch", 16])
check_sizes("mean_pool", pool, compile_model(pool),
            lambda b, t: {"x": rng.standard_normal((b, t, 16),
                                                   dtype=np.float32)},
            [(1, 1), (3, 7), (2, 300)])
norm = save_model("norm_run_time",
                  [helper.make_node("LayerNormalization", ["x", "g", "b"],
                                    ["out"], axis=-1, name="norm")],
                  [("x", [3, "n"]), ("g", ["n"]), ("b", ["n"])], [3, "n"])
check_sizes("norm_run_time", norm, compile_model(norm),
            lambda n: {"x": rng.standard_normal((3, n), dtype=np.float32) + 5,
                       "g": rng.standard_normal(n, dtype=np.float32),
                       "b": rng.standard_normal(n, dtype=np.float32)},
            [(1,), (5,), (300,)])

# A reshape to the input's own run-time dims in another order ([b, t, 16]
# to [t, b, 16], the shape computed from Shape(x)): a view only when b == t,
# else a reshape through the shape, chosen as the model runs.
def const_i64(name, values):
    return helper.make_node("Constant", [], [name], name=name,
                            value=helper.make_tensor(name, TensorProto.INT64,
                                                     [len(values)], values))


swap = save_model(
    "swap_dims",
    [helper.make_node("Shape", ["x"], ["shape"], name="shape"),
     const_i64("i0", [0]), const_i64("i1", [1]), const_i64("d", [16]),
     helper.make_node("Gather", ["shape", "i1"], ["t"], axis=0, name="gt"),
     helper.make_node("Gather", ["shape", "i0"], ["b"], axis=0, name="gb"),
     helper.make_node("Concat", ["t", "b", "d"], ["to"], axis=0,
                      name="cat"),
     helper.make_node("Reshape", ["x", "to"], ["out"], name="swap")],
    [("x", ["b", "t", 16])], ["t", "b", 16])
check_sizes("swap_dims", swap, compile_model(swap),
            lambda b, t: {"x": rng.standard_normal((b, t, 16),
                                                   dtype=np.float32)},
            [(2, 3), (4, 4), (1, 5)])

# Slices with steps over a run-time dim: every other position from 1 (the
# extent is ceil((n - 1) / 2)), and every third of a window ending 2 from
# the end, combined so that both extents must agree ([3, n] -> sizes where
# they do).
stepped = save_model(
    "stepped_slice",
    [const_i64("s1", [1]), const_i64("e1", [1 << 40]), const_i64("ax", [1]),
     const_i64("st2", [2]),
     helper.make_node("Slice", ["x", "s1", "e1", "ax", "st2"], ["odd"],
                      name="odd"),
     const_i64("s0", [0]), const_i64("em2", [-2]), const_i64("st3", [3]),
     helper.make_node("Slice", ["x", "s0", "em2", "ax", "st3"], ["third"],
                      name="third"),
     helper.make_node("ReduceSum", ["odd", "ax"], ["so"], keepdims=1,
                      name="sum_odd"),
     helper.make_node("ReduceSum", ["third", "ax"], ["st"], keepdims=1,
                      name="sum_third"),
     helper.make_node("Concat", ["so", "st", "odd"], ["out"], axis=1,
                      name="cat")],
    [("x", [3, "n"])], [3, None])
check_sizes("stepped_slice", stepped, compile_model(stepped),
            lambda n: {"x": rng.standard_normal((3, n), dtype=np.float32)},
            [(1,), (2,), (3,), (8,), (301,)])
# Negative steps over a run-time dim: torch.flip's reversal, and every
# other element down from the second to last (exclusive of element 0).
backwards = save_model(
    "negative_step",
    [const_i64("s", [-1]), const_i64("e", [-(1 << 62)]), const_i64("ax", [1]),
     const_i64("st", [-1]),
     helper.make_node("Slice", ["x", "s", "e", "ax", "st"], ["flip"],
                      name="reverse"),
     const_i64("s2", [-2]), const_i64("e2", [0]), const_i64("st2", [-2]),
     helper.make_node("Slice", ["x", "s2", "e2", "ax", "st2"], ["down"],
                      name="down"),
     helper.make_node("Concat", ["flip", "down"], ["out"], axis=1,
                      name="cat")],
    [("x", [3, "n"])], [3, None])
check_sizes("negative_step", backwards, compile_model(backwards),
            lambda n: {"x": rng.standard_normal((3, n), dtype=np.float32)},
            [(1,), (2,), (3,), (8,), (301,)])

# Hardmax along a run-time axis (the positions a run-time range), and
# before opset 13 over a run-time dim on either side of the flattening.
for opset, axis in [(13, -1), (11, 1), (11, 2)]:
    path = save_model(f"hardmax_{opset}_{axis}",
                      [helper.make_node("Hardmax", ["x"], ["out"], axis=axis,
                                        name="hardmax")],
                      [("x", ["b", 3, "n"])], ["b", 3, "n"], opset)
    check_sizes(f"hardmax_{opset}_{axis}", path, compile_model(path),
                lambda b, n: {"x": rng.integers(0, 4, (b, 3, n))
                              .astype(np.float32)},
                [(1, 1), (2, 5), (3, 40)])

# Spectrograms of a run-time batch and signal length: torch.stft as
# torch.onnx exports it (a reflect pad for center=True, a [b, n] signal),
# and ONNX STFT of a windowed real signal and of a complex one with a
# frame_length and no window. The frame count comes from the run.
class Spectrogram(nn.Module):
    def forward(self, x):
        s = torch.stft(x, n_fft=64, hop_length=16, center=True,
                       window=torch.hann_window(64), return_complex=False)
        return torch.log1p((s ** 2).sum(-1))


spec = export("spectrogram", Spectrogram(), (torch.randn(2, 1000),), ["x"],
              {"x": {0: "b", 1: "n"}, "out": {0: "b", 2: "frames"}})
check_sizes("spectrogram", spec, compile_model(spec),
            lambda b, n: {"x": rng.standard_normal((b, n), dtype=np.float32)},
            [(1, 64), (2, 1000), (3, 4321)])
window = onnx.numpy_helper.from_array(np.hanning(16).astype(np.float32),
                                      "window")
for name, inputs, attrs, channels in [
        ("stft_window", ["x", "step", "window"], {}, 1),
        ("stft_complex", ["x", "step", "", "length"], {"onesided": 0}, 2)]:
    graph = helper.make_graph(
        [helper.make_node("STFT", inputs, ["out"], name="stft", **attrs)],
        name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                             ["b", "n", channels])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array(5, np.int64), "step"),
         onnx.numpy_helper.from_array(np.array(16, np.int64), "length"),
         window])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    artifact = compile_model(path)
    check_sizes(name, path, artifact,
                lambda b, n: {"x": rng.standard_normal(
                    (b, n, channels), dtype=np.float32)},
                [(1, 16), (2, 100), (3, 37)])
# DFT along a run-time axis with a constant dft_length: shorter signals are
# zero-padded to it, longer ones truncated.
for name, channels, attrs in [("dft_complex", 2, {}),
                              ("dft_onesided", 1, {"onesided": 1}),
                              ("dft_inverse", 2, {"inverse": 1})]:
    graph = helper.make_graph(
        [helper.make_node("DFT", ["x", "length"], ["out"], axis=1,
                          name="dft", **attrs)],
        name, [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                             ["b", "n", channels])],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array(12, np.int64), "length")])
    path = os.path.join(work, name + ".onnx")
    onnx.save(helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17)]), path)
    check_sizes(name, path, compile_model(path),
                lambda b, n: {"x": rng.standard_normal(
                    (b, n, channels), dtype=np.float32)},
                [(1, 5), (2, 12), (3, 40)])
code, text = run(compile_model(path), {"x": np.zeros((2, 0, 2), np.float32)},
                 tag="dft_empty")
expect_error("dft_empty", code, text,
             "node 'dft': DFT: the signal along axis 1 is empty")
graph = helper.make_graph(
    [helper.make_node("DFT", ["x"], ["out"], axis=1, name="dft")],
    "dft_unsized", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                  ["b", "n", 2])],
    [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
path = os.path.join(work, "dft_unsized.onnx")
onnx.save(helper.make_model(graph,
                            opset_imports=[helper.make_opsetid("", 17)]), path)
done = subprocess.run([kiln, "compile", path, "-o", path + ".so"],
                      capture_output=True, text=True)
expect_error("dft_unsized", done.returncode, done.stderr,
             "error: unsupported ONNX op 'DFT' (opset 17) at node 'dft': DFT "
             "along a run-time axis needs a constant dft_length (or a static "
             "signal extent: give it with --input-shape)")
code, text = run(artifact, {"x": np.zeros((1, 10, 2), np.float32)},
                 tag="stft_short")
expect_error("stft_short", code, text, "node 'stft': STFT: the signal is "
             "shorter than one frame of 16 samples")

# Run-time height and width: an instance norm and a global average pool
# reduce over them; a convolution's window needs them static and says so.
spatial = save_model(
    "spatial_norm",
    [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["n"],
                      name="norm"),
     helper.make_node("GlobalAveragePool", ["n"], ["out"], name="pool")],
    [("x", [1, 3, "h", "w"]), ("s", [3]), ("b", [3])], [1, 3, 1, 1])
check_sizes("spatial_norm", spatial, compile_model(spatial),
            lambda h, w: {"x": rng.standard_normal((1, 3, h, w),
                                                   dtype=np.float32),
                          "s": rng.standard_normal(3, dtype=np.float32),
                          "b": rng.standard_normal(3, dtype=np.float32)},
            [(5, 7), (16, 3)])
# A fully convolutional net over a run-time batch, height and width (the
# generic window kernels, their result extents computed as the model runs):
# convolutions (padded, strided, dilated depthwise, bias or not), max and
# average pools, grouped convolutions (groups of 4 channels, a depthwise
# one with a channel multiplier), then a mean over the run-time extents.
class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False)
        self.dw = nn.Conv2d(16, 16, 3, padding=(1, 2), dilation=(1, 2),
                            groups=16)
        self.grouped = nn.Conv2d(16, 24, 1, groups=4)  # ResNeXt's kind
        self.multiplier = nn.Conv2d(24, 48, 3, padding=1, groups=24)
        self.fc = nn.Linear(48, 5)

    def forward(self, x):
        x = nn.functional.max_pool2d(torch.relu(self.c1(x)), 2)
        x = nn.functional.avg_pool2d(self.dw(self.c2(x)), 3, stride=1,
                                     padding=1, count_include_pad=True)
        x = self.multiplier(self.grouped(x))
        return self.fc(x.mean((2, 3)))


hw_axes = {0: "b", 2: "h", 3: "w"}
convnet = export("convnet_hw", ConvNet(), (torch.randn(2, 3, 32, 40),), ["x"],
                 {"x": hw_axes, "out": {0: "b"}})
convnet_so = compile_model(convnet)
check_sizes("convnet_hw", convnet, convnet_so,
            lambda b, h, w: {"x": rng.standard_normal((b, 3, h, w),
                                                      dtype=np.float32)},
            [(1, 32, 40), (2, 7, 9), (1, 2, 2), (3, 65, 33), (1, 224, 224)])
code, text = run(convnet_so, {"x": np.ones((1, 3, 1, 1), np.float32)},
                 tag="convnet_tiny")
expect_error("an image smaller than a window", code, text,
             "node '/MaxPool': spatial dim 2 of the input is smaller than the "
             "window (2 with the padding)")
# What needs static extents still says so: SAME padding (it depends on the
# extent), ceil_mode, MaxPool's Indices, averages over uncounted pads.
for what, node, message in [
        ("SAME padding", helper.make_node(
            "Conv", ["x", "k"], ["out"], auto_pad="SAME_UPPER", name="conv"),
         "Conv with auto_pad SAME_UPPER needs static spatial extents (give "
         "them with --input-shape) at node 'conv' (Conv)"),
        ("ceil_mode", helper.make_node(
            "MaxPool", ["x"], ["out"], kernel_shape=[2, 2], strides=[2, 2],
            ceil_mode=1, name="pool"),
         "MaxPool with ceil_mode needs static spatial extents"),
        ("uncounted pads", helper.make_node(
            "AveragePool", ["x"], ["out"], kernel_shape=[3, 3], pads=[1] * 4,
            name="pool"),
         "AveragePool with pads left out of the count (count_include_pad=0) "
         "needs static spatial extents")]:
    inputs = [("x", [1, 3, "h", "w"])]
    if node.op_type == "Conv":
        inputs.append(("k", [4, 3, 3, 3]))
    path = save_model("refused_" + what.replace(" ", "_"), [node], inputs,
                      None)
    done = subprocess.run([kiln, "compile", path, "-o", path + ".so"],
                          capture_output=True, text=True)
    expect_error(f"a run-time height with {what}", done.returncode,
                 done.stderr, "error: spatial dim 2 of 'x' is known only at "
                 "run time; " + message)

inspect = subprocess.run([kiln, "inspect", encoder_so], capture_output=True,
                         text=True).stdout
for line in ["  batch                    0..2147483647",
             "  seq                      1..512",
             "  ids                      int64 [batch,seq]",
             "  out                      float32 [batch,seq,64]"]:
    if line not in inspect:
        failures.append(f"kiln inspect lacks '{line}':\n{inspect}")


# Recurrent nets over a run-time sequence length and batch: torch's GRU
# and bidirectional LSTM exported with a dynamic time axis (and batch) run
# as one loop over the steps, the state [batch, hidden] of run-time rows
# (zeros expanded to the run-time batch when no initial state is given).
for kind in ("gru", "lstm"):
    path = export(f"rnn_{kind}", Recurrent(kind), (torch.randn(2, 5, 8),),
                  ["x"], {"x": {1: "time"}, "out": {1: "time"}})
    check_sizes(f"rnn_{kind}", path, compile_model(path),
                lambda t: {"x": rng.standard_normal((2, t, 8),
                                                    dtype=np.float32)},
                [(1,), (7,), (60,)])
    path = export(f"rnn_{kind}_batch", Recurrent(kind),
                  (torch.randn(2, 5, 8),), ["x"],
                  {"x": {0: "b", 1: "time"}, "out": {0: "b", 1: "time"}})
    check_sizes(f"rnn_{kind}_batch", path, compile_model(path),
                lambda b, t: {"x": rng.standard_normal((b, t, 8),
                                                       dtype=np.float32)},
                [(1, 1), (3, 7), (5, 30)])
# Y's stack over a run-time batch is allocated for the steps up front and
# written a row per step, not grown by a concat per step.
graph = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so",
                        "--logs=fused_graph"], capture_output=True,
                       text=True).stderr
# (a concat along axis 0 would be a stack growing; the directions' Ys are
# concatenated along axis 1 after the loops.)
if graph.count("tensor.insert_slice") < 2 or re.search(
        r"kiln\.concat [^\n]*axis = 0", graph):
    failures.append("rnn_lstm_batch: Y is not written into a stack "
                    "allocated up front:\n" + graph[-2000:])
else:
    print("rnn_lstm_batch stack allocated up front: PASS")
# A run-time batch over a static sequence takes the same loop.
path = export("rnn_batch_only", Recurrent("gru"), (torch.randn(2, 5, 8),),
              ["x"], {"x": {0: "b"}, "out": {0: "b"}})
check_sizes("rnn_batch_only", path, compile_model(path),
            lambda b: {"x": rng.standard_normal((b, 5, 8), dtype=np.float32)},
            [(1,), (4,)])


# An initial state given as an input, of the run-time batch.
class WithState(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.GRU(8, 16)

    def forward(self, x, h0):
        y, h = self.rnn(x, h0)
        return y.sum(0) + h[0]


path = export("rnn_state", WithState(), (torch.randn(5, 2, 8),
                                         torch.randn(1, 2, 16)), ["x", "h0"],
              {"x": {0: "time", 1: "b"}, "h0": {1: "b"}, "out": {0: "b"}})
check_sizes("rnn_state", path, compile_model(path),
            lambda t, b: {"x": rng.standard_normal((t, b, 8),
                                                   dtype=np.float32),
                          "h0": rng.standard_normal((1, b, 16),
                                                    dtype=np.float32)},
            [(4, 3), (1, 1)])
# An initial state of a static batch against a run-time batch in X is
# refused by name (it would be broadcast along X's batch).
path = export("rnn_static_state", WithState(), (torch.randn(5, 2, 8),
                                                torch.randn(1, 2, 16)),
              ["x", "h0"], {"x": {0: "time", 1: "b"}, "out": {0: "b"}})
done = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"],
                      capture_output=True, text=True)
expect_error("rnn static initial state", done.returncode, done.stderr,
             "GRU with initial_h of a static batch and X of a batch known "
             "only at run time (give it with --input-shape)")
# A run-time input size is refused by name (W fixes it).
path = export("rnn_features", Recurrent("gru"), (torch.randn(2, 5, 8),),
              ["x"], {"x": {0: "b", 1: "time", 2: "features"},
                      "out": {0: "b", 1: "time"}})
done = subprocess.run([kiln, "compile", path, "-o", path[:-5] + ".so"],
                      capture_output=True, text=True)
expect_error("rnn run-time input size", done.returncode, done.stderr,
             "GRU over an input size known only at run time (give it with "
             "--input-shape)")

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("all symbolic-dim checks passed")
