#!/usr/bin/env python3
"""Kiln vs onnxruntime, side by side on this machine; writes docs/performance.md.

    benchmarks/run.py --kiln build/bin/kiln [--threads 2] [--rounds 3]
                      [--repeat 20] [--min-seconds 1] [--only resnet18,matmul2048]
                      [--work /tmp/kiln-bench] [--doc docs/performance.md]

Each workload is exported from PyTorch (random weights, no downloads) or
built with onnx.helper, compiled once with `kiln compile -v` (compile time
from its report), checked once against onnxruntime (max |error| relative to
max |reference|), then timed in --rounds alternating rounds: `kiln bench`
(median of --repeat runs after warm-up, more for short workloads so each
side runs at least --min-seconds per round) and onnxruntime in a child
process (intra-op threads = --threads, all graph optimizations, the same
run count). Each side's figure is the median over rounds; peak RSS is each
child's VmHWM (getrusage's ru_maxrss would include this script's own
footprint: Linux carries it across fork and exec). The onnxruntime figure
includes the Python interpreter and numpy (~30 MB). The FP32 peak comes
from benchmarks/fma_peak.c, measured at the start and, for the MatMul's
%-of-peak target, again in each round.

Needs numpy, onnx, onnxruntime, torch and torchvision from PyPI; the
product itself never does. Not part of `make test` (timings are not tests).

torch.export archives (docs/pt2.md): the pt2_* workloads compile one model
from its .pt2 and from its ONNX export and time both, then TorchInductor
and AOTInductor on it (benchmarks/torch_peers.py; latency, compile time,
artifact size, load time).

Symbolic dims (docs/dynamic-shapes.md): the sym_* workloads export a model
with dynamic axes and time, at one size, the artifact compiled with symbolic
dims against the artifact compiled for that size (--input-shape); their
table is the ratio symbolic/static (target: within 10%).
"""
import argparse
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))

# name -> (description, target ratio vs onnxruntime (None: % of peak target))
WORKLOADS = {
    "matmul2048": ("MatMul 2048x2048x2048", None),
    "resnet18": ("ResNet-18, batch 1", 1.0),
    "resnet18_b8": ("ResNet-18, batch 8", 1.0),
    "googlenet": ("GoogLeNet, batch 1", 1.0),
    "mobilenet_v2": ("MobileNetV2, batch 1", 0.8),
    "bert4": ("BERT-base-style encoder, 4 layers, seq 128", 0.8),
    "gpt2_4": ("GPT-2-small blocks, 4 layers, seq 256", 0.8),
    "vit_b_16": ("ViT-B/16, batch 1", 0.9),
    # --precision=bf16 (bf16 matmul weights and products, fp32 sums) against
    # onnxruntime's fp32 run of the same model.
    "bert4_bf16": ("BERT-base-style encoder, 4 layers, seq 128, kiln "
                   "--precision=bf16", 0.6),
    "gpt2_4_bf16": ("GPT-2-small blocks, 4 layers, seq 256, kiln "
                    "--precision=bf16", 0.6),
    # ONNX QDQ (onnxruntime.quantization.quantize_static: per-channel int8
    # weights, uint8 activations), both sides running the same QDQ model.
    "bert4_int8": ("BERT-base-style encoder, 4 layers, seq 128, QDQ int8", 1.0),
    "resnet18_int8": ("ResNet-18, batch 1, QDQ int8", 1.0),
}


# name -> (description, model, input shape at the timed size, symbols)
SYMBOLIC = {
    "sym_resnet18_b1": ("ResNet-18, symbolic batch, at batch 1", "resnet18",
                        [1, 3, 224, 224], {"batch": 1}),
    "sym_resnet18_b8": ("ResNet-18, symbolic batch, at batch 8", "resnet18",
                        [8, 3, 224, 224], {"batch": 8}),
    "sym_mobilenet_v2_b1": ("MobileNetV2, symbolic batch, at batch 1",
                            "mobilenet_v2", [1, 3, 224, 224], {"batch": 1}),
    "sym_bert4_s128": ("BERT-style encoder, 4 layers, symbolic batch and "
                       "seq, at 1x128", "bert4", [1, 128, 768],
                       {"batch": 1, "seq": 128}),
    # Run-time height and width: the direct NHWC kernels with tasks cut at
    # run time, no Winograd, so not held to the 10% target of the others.
    "sym_resnet18_hw224": ("ResNet-18, symbolic batch, height and width, at "
                           "1x224x224", "resnet18_hw", [1, 3, 224, 224],
                           {"batch": 1, "height": 224, "width": 224}),
    "sym_mobilenet_v2_hw224": ("MobileNetV2, symbolic batch, height and "
                               "width, at 1x224x224", "mobilenet_v2_hw",
                               [1, 3, 224, 224],
                               {"batch": 1, "height": 224, "width": 224}),
}


# torch.export archives (docs/pt2.md): name -> (description, model of
# benchmarks/torch_peers.py). The same model compiled by Kiln from the .pt2
# and from its ONNX export, against TorchInductor (torch.compile) and
# AOTInductor (aoti_compile_and_package) on the same CPU threads.
PT2 = {
    "pt2_resnet18": ("ResNet-18, batch 1", "resnet18"),
    "pt2_bert4": ("BERT-base-style encoder, 4 layers, seq 128", "bert4"),
}


# ---------------------------------------------------------------- export
def export_symbolic(model_name, path):
    """The model with dynamic axes ("batch", and "seq" for the encoder)."""
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    out_axes = None
    if model_name in ("resnet18", "resnet18_hw", "mobilenet_v2",
                      "mobilenet_v2_hw"):
        import torchvision
        model = getattr(torchvision.models,
                        model_name.removesuffix("_hw"))(weights=None)
        realistic_weights(model)
        example, axes = torch.randn(1, 3, 224, 224), {0: "batch"}
        if model_name.endswith("_hw"):
            axes = {0: "batch", 2: "height", 3: "width"}
        out_axes = {0: "batch"}
    else:
        class Layer(nn.Module):
            def __init__(self, d=768, h=12):
                super().__init__()
                self.h = h
                self.qkv, self.o = nn.Linear(d, 3 * d), nn.Linear(d, d)
                self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
                self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

            def forward(self, x):
                b, s, d = x.shape
                q, k, v = (t.reshape(b, s, self.h, d // self.h).transpose(1, 2)
                           for t in self.qkv(x).split(d, dim=2))
                att = (q @ k.transpose(-2, -1) / math.sqrt(d // self.h)).softmax(-1)
                x = self.ln1(x + self.o((att @ v).transpose(1, 2).reshape(b, s, d)))
                return self.ln2(x + self.out(nn.functional.gelu(self.fc(x))))

        model = nn.Sequential(*[Layer() for _ in range(4)])
        example, axes = torch.randn(1, 128, 768), {0: "batch", 1: "seq"}
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, (example,), path, opset_version=17,
                          input_names=["input"], output_names=["output"],
                          dynamic_axes={"input": axes,
                                        "output": out_axes or axes},
                          dynamo=False)


def export_matmul(path):
    n = 2048
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(
        (rng.random((n, n), dtype=np.float32) - 0.5), "w")
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "w"], ["y"], name="matmul")], "mm",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [n, n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, n])], [w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def torch_export(module, example, path):
    import torch
    module.eval()
    with torch.no_grad():
        torch.onnx.export(module, example, path, opset_version=17,
                          input_names=["input"], output_names=["output"],
                          dynamo=False)


def export_torchvision(name, batch, path, size=224):
    import torch
    import torchvision
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)  # exportable attention
    kwargs = {"weights": None}
    if name == "googlenet":
        kwargs.update(aux_logits=False, init_weights=True)
    model = getattr(torchvision.models, name)(**kwargs)
    realistic_weights(model)
    torch_export(model, (torch.randn(batch, 3, size, size),), path)


def realistic_weights(model):
    """Random weights that keep activations O(1) through the network.

    torchvision's default initializations (std 0.01 convolutions in
    GoogLeNet, identity batch norms) make a random network's output nearly
    independent of its input, which would hide wrong results in the check.
    """
    import torch
    import torch.nn as nn
    g = torch.Generator().manual_seed(0)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.normal_(0, (2.0 / fan_in) ** 0.5, generator=g)
                if m.bias is not None:
                    m.bias.normal_(0, 0.1, generator=g)
            elif isinstance(m, nn.BatchNorm2d):
                m.running_mean.normal_(0, 0.1, generator=g)
                m.running_var.uniform_(0.5, 1.5, generator=g)
                m.weight.uniform_(0.5, 1.5, generator=g)
                m.bias.normal_(0, 0.1, generator=g)


def export_bert(path, layers=4, seq=128, d=768, heads=12):
    import torch
    import torch.nn as nn
    torch.manual_seed(0)
    # The fused inference fast path (_transformer_encoder_layer_fwd) has no
    # ONNX export; the exporter then spells attention out as MatMul/Softmax.
    torch.backends.mha.set_fastpath_enabled(False)
    layer = nn.TransformerEncoderLayer(d, heads, 4 * d, dropout=0.0,
                                       activation="gelu", batch_first=True)
    model = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
    # The layers are deep copies of one: give each its own weights (the
    # exporter would otherwise share the initializers between layers).
    realistic_weights(model)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.MultiheadAttention):
                m.in_proj_weight.normal_(0, d ** -0.5, generator=g)
    torch_export(model, (torch.randn(1, seq, d),), path)


def export_gpt2(path, layers=4, seq=256, d=768, heads=12):
    import math
    import torch
    import torch.nn as nn

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
            self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
            self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)
            self.register_buffer(
                "causal", torch.tril(torch.ones(seq, seq, dtype=torch.bool)))

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(d, dim=2)
            q, k, v = (t.view(b, s, heads, d // heads).transpose(1, 2)
                       for t in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d // heads)
            att = att.masked_fill(~self.causal[:s, :s], float("-inf"))
            y = att.softmax(dim=-1) @ v
            x = x + self.proj(y.transpose(1, 2).reshape(b, s, d))
            return x + self.out(nn.functional.gelu(self.fc(self.ln2(x)),
                                                   approximate="tanh"))

    torch.manual_seed(0)
    model = nn.Sequential(*[Block() for _ in range(layers)], nn.LayerNorm(d))
    torch_export(model, (torch.randn(1, seq, d),), path)


def quantize(fp32, path):
    """fp32 -> ONNX QDQ: static, per-channel int8 weights, uint8
    activations, calibrated on 8 random inputs."""
    import onnxruntime as ort
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,
                                          QuantType, quantize_static)
    inputs = ort.InferenceSession(fp32, providers=["CPUExecutionProvider"]).get_inputs()
    rng = np.random.default_rng(3)

    class Data(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{i.name: rng.standard_normal(i.shape).astype(np.float32)
                                  for i in inputs} for _ in range(8)])

        def get_next(self):
            return next(self.batches, None)

    quantize_static(fp32, path, Data(), quant_format=QuantFormat.QDQ,
                    per_channel=True, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)


def export(name, path):
    if name.endswith("_int8"):
        fp32 = path.replace(".onnx", "_fp32.onnx")
        export(name.removesuffix("_int8"), fp32)
        return quantize(fp32, path)
    name = name.removesuffix("_bf16")  # the same model, compiled differently
    if name == "matmul2048":
        export_matmul(path)
    elif name == "resnet18":
        export_torchvision("resnet18", 1, path)
    elif name == "resnet18_b8":
        export_torchvision("resnet18", 8, path)
    elif name in ("googlenet", "mobilenet_v2", "vit_b_16"):
        export_torchvision(name, 1, path)
    elif name == "bert4":
        export_bert(path)
    elif name == "gpt2_4":
        export_gpt2(path)
    else:
        raise ValueError(name)


# ---------------------------------------------------------------- FLOPs
def count_flops(path):
    """2 * multiply-adds of Conv, MatMul and Gemm nodes (shape inference)."""
    model = onnx.shape_inference.infer_shapes(onnx.load(path))
    shapes = {}
    for vi in list(model.graph.value_info) + list(model.graph.input) + list(
            model.graph.output):
        dims = [d.dim_value for d in vi.type.tensor_type.shape.dim]
        shapes[vi.name] = dims
    for init in model.graph.initializer:
        shapes[init.name] = list(init.dims)
    flops = 0
    for node in model.graph.node:
        out = shapes.get(node.output[0])
        if not out:
            continue
        if node.op_type == "Conv":
            w = shapes[node.input[1]]
            flops += 2 * int(np.prod(out)) * int(np.prod(w[1:]))
        elif node.op_type in ("MatMul", "Gemm"):
            a = shapes.get(node.input[0])
            transposed = any(at.name == "transA" and at.i for at in node.attribute)
            if a:
                k = a[-2] if transposed else a[-1]
                flops += 2 * int(np.prod(out)) * k
    return flops


# ---------------------------------------------------------------- running
ORT_CHILD = r"""
import json, resource, sys, time
import numpy as np, onnxruntime as ort
path, threads, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
o = ort.SessionOptions()
o.intra_op_num_threads = threads
o.inter_op_num_threads = 1
o.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
s = ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])
rng = np.random.default_rng(0)
feeds = {i.name: rng.standard_normal(i.shape).astype(np.float32)
         for i in s.get_inputs()}
for _ in range(3):
    s.run(None, feeds)
times = []
for _ in range(repeat):
    t = time.perf_counter(); s.run(None, feeds)
    times.append((time.perf_counter() - t) * 1000)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
print(json.dumps({"median": float(np.median(times)), "min": min(times),
                  "rss_mb": int(hwm[0].split()[1]) / 1024}))
"""


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def deployment_runner(kiln):
    """kiln-run next to kiln: the runtime-only runner a deployment uses
    (the kiln CLI also maps LLVM/MLIR, ~100 MB that no service loads)."""
    runner = os.path.join(os.path.dirname(os.path.abspath(kiln)), "kiln-run")
    return runner if os.access(runner, os.X_OK) else kiln


def kiln_bench(kiln, so, threads, repeat):
    r = run([deployment_runner(kiln), "bench", so, "--threads", str(threads), "--repeat",
             str(repeat), "--warmup", "3"])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])
    median = float(re.search(r"median ([\d.]+) ms", r.stdout).group(1))
    rss = float(re.search(r"peak RSS: ([\d.]+) MB", r.stdout).group(1))
    return median, rss


def ort_bench(path, threads, repeat):
    r = run([sys.executable, "-c", ORT_CHILD, path, str(threads), str(repeat)])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])
    d = json.loads(r.stdout)
    return d["median"], d["rss_mb"]


def check(kiln, so, path, work):
    """max |kiln - ort| / max |ort| on one random input."""
    import onnxruntime as ort
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    args = []
    feeds = {}
    for i in s.get_inputs():
        x = rng.standard_normal(i.shape).astype(np.float32)
        f = os.path.join(work, f"in_{i.name}.npy")
        np.save(f, x)
        feeds[i.name] = x
        args += ["--input", f"{i.name}={f}"]
    out_dir = os.path.join(work, "out")
    r = run([kiln, "run", so, "--output-dir", out_dir, "--threads", "2"] + args)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])
    worst = 0.0
    for o, ref in zip(s.get_outputs(), s.run(None, feeds)):
        got = np.load(os.path.join(out_dir, f"{o.name}.npy"))
        worst = max(worst, float(np.abs(got - ref).max() /
                                 max(np.abs(ref).max(), 1e-30)))
    return worst


def fma_peak(threads, work, build=True):
    """Best of three runs of benchmarks/fma_peak.c: (GFLOP/s, its output)."""
    exe = os.path.join(work, "fma_peak")
    if build or not os.path.exists(exe):
        r = run(["cc", "-O2", "-march=native", "-ffp-contract=fast", "-fopenmp",
                 os.path.join(HERE, "fma_peak.c"), "-o", exe])
        if r.returncode != 0:
            return None, r.stderr
    best = 0.0
    for _ in range(3):
        out = run([exe, str(threads)]).stdout
        best = max(best, float(out.split()[0]))
    return best, out.strip()


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} logical CPUs, {platform.system()} {platform.release()}"


def versions(kiln):
    import onnxruntime
    v = {"onnxruntime": onnxruntime.__version__, "onnx": onnx.__version__,
         "numpy": np.__version__, "python": platform.python_version()}
    try:
        import torch
        v["torch"] = torch.__version__
    except ImportError:
        pass
    rev = run(["git", "-C", HERE, "rev-parse", "--short", "HEAD"]).stdout.strip()
    v["kiln"] = rev or "unknown"
    llvm = run(["/usr/lib/llvm-22/bin/llvm-config", "--version"]).stdout.strip()
    v["LLVM/MLIR"] = llvm or "22"
    return v


# ---------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--min-seconds", type=float, default=1.0,
                    help="raise --repeat per workload so each side runs at "
                         "least this long per round")
    ap.add_argument("--only", default="")
    ap.add_argument("--autotune", action="store_true",
                    help="compile with -O3 --autotune (cache in WORK/autotune.json; "
                         "compile times then include the tuning)")
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-bench"))
    ap.add_argument("--doc", default=os.path.join(HERE, "..", "docs", "performance.md"))
    ap.add_argument("--from-log", help="rewrite --doc from the output of an "
                    "earlier run (its JSON lines) instead of measuring")
    args = ap.parse_args()
    if args.from_log:
        rows, peak, peak_text, vers = [], None, "", None
        for line in open(args.from_log):
            if line.startswith("fp32 FMA peak: "):
                peak_text = line.split(": ", 1)[1].strip()
                peak = float(peak_text.split()[0])
            elif line.startswith("versions: "):
                vers = json.loads(line.split(": ", 1)[1])
            elif line.startswith("settings: "):
                # The measuring run's settings, not this command line's.
                for key, value in json.loads(line.split(": ", 1)[1]).items():
                    setattr(args, key, value)
            elif line.startswith("{"):
                rows.append(json.loads(line))
        # Logs from before the versions line get today's (the checkout's).
        write_doc(args, rows, peak, peak_text, vers or versions(args.kiln))
        return
    kiln = os.path.abspath(args.kiln)
    names = [n for n in WORKLOADS if not args.only or n in args.only.split(",")]
    os.makedirs(args.work, exist_ok=True)

    vers = versions(kiln)
    print(f"versions: {json.dumps(vers)}", flush=True)
    settings = {k: getattr(args, k)
                for k in ("threads", "rounds", "repeat", "min_seconds")}
    print(f"settings: {json.dumps(settings)}", flush=True)
    peak, peak_text = fma_peak(args.threads, args.work)
    print(f"fp32 FMA peak: {peak_text}", flush=True)
    rows = []
    for name in [n for n in SYMBOLIC
                 if not args.only or n in args.only.split(",")]:
        row = symbolic_row(args, kiln, name)
        rows.append(row)
        print(json.dumps(row), flush=True)
    for name in [n for n in PT2 if not args.only or n in args.only.split(",")]:
        row = pt2_row(args, kiln, name)
        rows.append(row)
        print(json.dumps(row), flush=True)
    for name in names:
        desc, target = WORKLOADS[name]
        work = os.path.join(args.work, name)
        os.makedirs(work, exist_ok=True)
        path = os.path.join(work, "model.onnx")
        row = {"name": name, "desc": desc, "target": target}
        rows.append(row)
        try:
            if not os.path.exists(path):
                export(name, path)
            row["gflop"] = count_flops(path) / 1e9
            so = os.path.join(work, "model.so")
            flags = ["-O3", "--autotune", "--autotune-threads", str(args.threads),
                     "--autotune-cache", os.path.join(args.work, "autotune.json")] \
                if args.autotune else []
            if name.endswith("_bf16"):
                flags.append("--precision=bf16")
            r = run([args.kiln, "compile", path, "-o", so, "-v"] + flags)
            if r.returncode != 0:
                raise RuntimeError("kiln compile: " + r.stderr.strip().splitlines()[-1])
            total = re.search(r"total\s+([\d.]+) ms", r.stdout + r.stderr)
            row["compile_s"] = float(total.group(1)) / 1000 if total else None
            row["error"] = check(kiln, so, path, work)
            # Short workloads get more runs: each side times at least
            # --min-seconds per round (a 4 ms model's median of 20 runs
            # moved by 50% between rounds on this host).
            probe, _ = kiln_bench(kiln, so, args.threads, 5)
            repeat = max(args.repeat,
                         min(2000, math.ceil(args.min_seconds * 1e3 / probe)))
            row["repeat"] = repeat
            kt, ot, krss, orss, fractions = [], [], [], [], []
            for _ in range(args.rounds):
                # The %-of-peak target: the peak measured in the same round,
                # since this host's FMA throughput itself drifts by 10%.
                round_peak = fma_peak(args.threads, args.work, build=False)[0] \
                    if target is None and peak else None
                m, rss = kiln_bench(kiln, so, args.threads, repeat)
                if round_peak:
                    fractions.append(row["gflop"] / m * 1e3 / round_peak)
                kt.append(m), krss.append(rss)
                m, rss = ort_bench(path, args.threads, repeat)
                ot.append(m), orss.append(rss)
            # Each round times both back to back, so its ratio cancels the
            # host's drift between rounds; the table gives their median and
            # range.
            ratios = [k / o for k, o in zip(kt, ot)]
            row.update(kiln_ms=float(np.median(kt)), ort_ms=float(np.median(ot)),
                       ratio=float(np.median(ratios)), ratio_lo=min(ratios),
                       ratio_hi=max(ratios), kiln_rss=max(krss), ort_rss=max(orss))
            if fractions:
                row.update(peak_fraction=float(np.median(fractions)),
                           peak_fraction_lo=min(fractions),
                           peak_fraction_hi=max(fractions))
        except Exception as e:  # report, keep going
            row["failure"] = str(e)[:300]
        print(json.dumps(row), flush=True)
    write_doc(args, rows, peak, peak_text, vers)


def symbolic_row(args, kiln, name):
    """Static and symbolic artifacts of one model at one size, alternating."""
    desc, model, shape, dims = SYMBOLIC[name]
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(args.work, f"{model}_symbolic.onnx")
    row = {"name": name, "desc": desc, "symbolic": True}
    try:
        if not os.path.exists(path):
            export_symbolic(model, path)
        static_so = os.path.join(work, "static.so")
        symbolic_so = os.path.join(work, "symbolic.so")
        for so, flags in ((static_so, ["--input-shape",
                                       "input=" + ",".join(map(str, shape))]),
                          (symbolic_so, [])):
            r = run([kiln, "compile", path, "-o", so] + flags)
            if r.returncode != 0:
                raise RuntimeError("kiln compile: " + r.stderr.strip().splitlines()[-1])
        # The symbolic artifact against onnxruntime at the timed size.
        import onnxruntime as ort
        x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
        np.save(os.path.join(work, "input.npy"), x)
        ref = ort.InferenceSession(path, providers=["CPUExecutionProvider"]) \
            .run(None, {"input": x})[0]
        out_dir = os.path.join(work, "out")
        r = run([kiln, "run", symbolic_so, "--input",
                 "input=" + os.path.join(work, "input.npy"), "--output-dir",
                 out_dir])
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1])
        got = np.load(os.path.join(out_dir, "output.npy"))
        row["error"] = float(np.abs(got - ref).max() / np.abs(ref).max())
        dim_flags = sum((["--dim", f"{k}={v}"] for k, v in dims.items()), [])
        bench = lambda so, extra: float(re.search(
            r"median ([\d.]+) ms",
            run([deployment_runner(kiln), "bench", so, "--threads",
                 str(args.threads), "--repeat", str(args.repeat), "--warmup",
                 "3", "--random-inputs"] + extra).stdout).group(1))
        static_t, symbolic_t = [], []
        for _ in range(args.rounds):
            static_t.append(bench(static_so, []))
            symbolic_t.append(bench(symbolic_so, dim_flags))
        ratios = [s / t for s, t in zip(symbolic_t, static_t)]
        row.update(static_ms=float(np.median(static_t)),
                   symbolic_ms=float(np.median(symbolic_t)),
                   ratio=float(np.median(ratios)), ratio_lo=min(ratios),
                   ratio_hi=max(ratios))
    except Exception as e:  # report, keep going
        row["failure"] = str(e)[:300]
    return row


KILN_LOAD_CHILD = r"""
import ctypes, json, sys, time
rt = ctypes.CDLL(sys.argv[1])
model, session = ctypes.c_void_p(), ctypes.c_void_p()
options = (ctypes.c_uint32 * 2)(int(sys.argv[3]), 0)
t = time.perf_counter()
if rt.kiln_model_load(sys.argv[2].encode(), ctypes.byref(model)) or \
        rt.kiln_session_create(model, options, ctypes.byref(session)):
    sys.exit("load failed")
print(json.dumps({"load_s": time.perf_counter() - t}))
"""


def kiln_load_s(kiln, so, threads):
    """kiln_model_load + kiln_session_create in a fresh process (the
    artifact in the page cache), through the runtime's C API."""
    lib = os.path.join(os.path.dirname(os.path.abspath(kiln)), "..", "lib",
                       "libkiln_rt.so")
    r = run([sys.executable, "-c", KILN_LOAD_CHILD, lib, so, str(threads)])
    if r.returncode != 0:
        raise RuntimeError("kiln load: " + r.stderr.strip()[-200:])
    return json.loads(r.stdout)["load_s"]


def torch_peer(step, model, work, *extra):
    # Inductor's caches off: a compile time from an earlier run's cache
    # would not be one.
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1")
    r = run([sys.executable, os.path.join(HERE, "torch_peers.py"), step, model,
             work, *map(str, extra)], env=env)
    if r.returncode != 0:
        raise RuntimeError(f"torch_peers.py {step}: " +
                           r.stderr.strip().splitlines()[-1][:200])
    return json.loads(r.stdout.strip().splitlines()[-1]) if r.stdout else {}


def pt2_row(args, kiln, name):
    """Kiln from the .pt2 and from ONNX (alternating rounds), then
    torch.compile and AOTInductor, each once over the same run count."""
    desc, model = PT2[name]
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    row = {"name": name, "desc": desc, "pt2": True}
    try:
        if not os.path.exists(os.path.join(work, "model.pt2")):
            torch_peer("export", model, work)
        sos = {}
        for kind in ("pt2", "onnx"):
            so = sos[kind] = os.path.join(work, f"{kind}.so")
            r = run([kiln, "compile", os.path.join(work, "model." + kind),
                     "-o", so, "-v"])
            if r.returncode != 0:
                raise RuntimeError("kiln compile: " +
                                   r.stderr.strip().splitlines()[-1])
            total = re.search(r"total\s+([\d.]+) ms", r.stdout + r.stderr)
            row[f"{kind}_compile_s"] = float(total.group(1)) / 1e3
        out_dir = os.path.join(work, "out")
        r = run([kiln, "run", sos["pt2"], "--input",
                 os.path.join(work, "input.npy"), "--output-dir", out_dir])
        if r.returncode != 0:
            raise RuntimeError(r.stderr.strip().splitlines()[-1])
        got = np.load(os.path.join(out_dir, os.listdir(out_dir)[0]))
        expected = np.load(os.path.join(work, "expected.npy"))
        row["error"] = float(np.abs(got - expected).max() /
                             np.abs(expected).max())
        probe, _ = kiln_bench(kiln, sos["pt2"], args.threads, 5)
        repeat = max(args.repeat,
                     min(2000, math.ceil(args.min_seconds * 1e3 / probe)))
        row["repeat"] = repeat
        times = {"pt2": [], "onnx": []}
        for _ in range(args.rounds):
            for kind in times:
                times[kind].append(kiln_bench(kiln, sos[kind], args.threads,
                                              repeat)[0])
        ratios = [p / o for p, o in zip(times["pt2"], times["onnx"])]
        row.update(pt2_ms=float(np.median(times["pt2"])),
                   onnx_ms=float(np.median(times["onnx"])),
                   ratio=float(np.median(ratios)), ratio_lo=min(ratios),
                   ratio_hi=max(ratios),
                   kiln_mb=os.path.getsize(sos["pt2"]) / 1e6,
                   kiln_load_s=float(np.median(
                       [kiln_load_s(kiln, sos["pt2"], args.threads)
                        for _ in range(3)])))
        inductor = torch_peer("inductor", model, work, args.threads, repeat)
        row.update(inductor_ms=inductor["median_ms"],
                   inductor_compile_s=inductor["compile_s"])
        aoti = torch_peer("aoti", model, work)
        row["aoti_compile_s"] = aoti["compile_s"]
        aoti = torch_peer("aoti_run", model, work, args.threads, repeat)
        row.update(aoti_ms=aoti["median_ms"], aoti_load_s=aoti["load_s"],
                   aoti_error=aoti["error"],
                   aoti_mb=os.path.getsize(os.path.join(work, "aoti.pt2")) / 1e6)
    except Exception as e:  # report, keep going
        row["failure"] = str(e)[:300]
    return row


def pt2_table(rows):
    lines = ["", "## torch.export .pt2: Kiln from the archive, from ONNX, "
             "TorchInductor and AOTInductor", "",
             "Each model is exported once by torch.export (saved with "
             "torch.export.save) and by torch.onnx.export. Kiln compiles both "
             "(`kiln compile model.pt2`, no Python); `kiln-run bench` times "
             "the two artifacts in alternating rounds (.pt2/ONNX: the median "
             "of the rounds' ratios, range in brackets). TorchInductor is "
             "`torch.compile(model)` (CPU, default mode; its compile time is "
             "the first call) and AOTInductor "
             "`torch._inductor.aoti_compile_and_package` of the same exported "
             "program, loaded by `aoti_load_package`; each is timed once over "
             "the same run count with torch.set_num_threads at the same "
             "thread count. Load: a fresh process loading the artifact from "
             "the page cache (Kiln: kiln_model_load + kiln_session_create "
             "through the C API, the weights mapped and paged in by the first run; "
             "AOTInductor: aoti_load_package after `import torch`). Compile "
             "times are cold: Inductor's caches are disabled. Error: Kiln's .pt2 artifact against torch eager "
             "(max |error| / max |reference|).", "",
             "| workload | kiln .pt2 ms | kiln ONNX ms | .pt2/ONNX | "
             "torch.compile ms | AOTInductor ms | kiln/AOTI | compile s "
             "(kiln .pt2 / ONNX / torch.compile / AOTI) | artifact MB "
             "(kiln / AOTI) | load ms (kiln / AOTI) | error |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['desc']} | failed: {r['failure']} "
                         "| | | | | | | | | |")
            continue
        lines.append(
            f"| {r['desc']} | {r['pt2_ms']:.2f} | {r['onnx_ms']:.2f} | "
            f"{r['ratio']:.2f} ({r['ratio_lo']:.2f}-{r['ratio_hi']:.2f}) | "
            f"{r['inductor_ms']:.2f} | {r['aoti_ms']:.2f} | "
            f"{r['pt2_ms'] / r['aoti_ms']:.2f} | "
            f"{r['pt2_compile_s']:.1f} / {r['onnx_compile_s']:.1f} / "
            f"{r['inductor_compile_s']:.1f} / {r['aoti_compile_s']:.1f} | "
            f"{r['kiln_mb']:.1f} / {r['aoti_mb']:.1f} | "
            f"{r['kiln_load_s'] * 1e3:.1f} / {r['aoti_load_s'] * 1e3:.0f} | "
            f"{r['error']:.1e} |")
    return lines


def symbolic_table(rows):
    lines = ["", "## Symbolic dims: the symbolic artifact vs the one compiled "
             "for the size it runs at", "",
             "Each model is exported with dynamic axes and compiled twice: "
             "with its symbolic dims, and with `--input-shape` for the timed "
             "size. Both run with `kiln-run bench` in alternating rounds; "
             "symbolic/static is the median of the rounds' ratios (range in "
             "brackets). Error: the symbolic artifact against onnxruntime at "
             "that size.", "",
             "| workload | static ms | symbolic ms | symbolic/static | target | "
             "error |", "|---|---|---|---|---|---|"]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['desc']} | failed: {r['failure']} | | | | |")
            continue
        # Issue 20's 10% target is for run-time batch and sequence; the
        # run-time image rows (no Winograd there) are reported without one.
        target = "none (run-time image)"
        if "_hw" not in r["name"]:
            target = "≤ 1.10×: " + ("met" if r["ratio"] <= 1.10 else "missed")
        lines.append(
            f"| {r['desc']} | {r['static_ms']:.2f} | {r['symbolic_ms']:.2f} | "
            f"{r['ratio']:.2f} ({r['ratio_lo']:.2f}-{r['ratio_hi']:.2f}) | "
            f"{target} | {r['error']:.1e} |")
    return lines


def write_doc(args, rows, peak, peak_text, vers):
    lines = [
        "# Performance: Kiln vs onnxruntime",
        "",
        "Generated by `benchmarks/run.py` (do not edit by hand); "
        f"{datetime.date.today().isoformat()}.",
        "",
        f"- Machine: {machine()}",
        f"- Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()),
        f"- Threads: {args.threads} (`kiln-run bench --threads`, the "
        "runtime-only runner, so its peak RSS is what an embedding service "
        "pays; onnxruntime "
        "intra-op threads, all graph optimizations); medians of "
        f"at least {args.repeat} runs and {args.min_seconds:g} s per side and "
        f"round (the runs column), median over {args.rounds} alternating "
        "rounds. "
        "kiln/ORT is the median of the rounds' own ratios (each round runs "
        "both back to back), with their range.",
        f"- fp32 FMA peak ({args.threads} threads, benchmarks/fma_peak.c, best "
        f"of three): {peak_text} at the start; the MatMul row's % of peak is "
        "the median over rounds of its GFLOP/s over the peak measured again "
        "just before it in the same round (range in brackets).",
        "- Error: max |kiln - onnxruntime| / max |onnxruntime| on one random input.",
        "",
        "| workload | GFLOP | kiln ms | onnxruntime ms | kiln/ORT | target | "
        "kiln GFLOP/s (% peak) | ORT GFLOP/s | kiln RSS MB | ORT RSS MB | "
        "compile s | runs | error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    symbolic = [r for r in rows if r.get("symbolic")]
    pt2 = [r for r in rows if r.get("pt2")]
    rows = [r for r in rows if not r.get("symbolic") and not r.get("pt2")]
    for r in rows:
        if "failure" in r:
            lines.append(f"| {r['desc']} | | failed: {r['failure']} | | | | | | | | | | |")
            continue
        ratio = r.get("ratio", r["kiln_ms"] / r["ort_ms"])
        spread = (f" ({r['ratio_lo']:.2f}-{r['ratio_hi']:.2f})"
                  if "ratio_lo" in r else "")
        kgf = r["gflop"] / r["kiln_ms"] * 1e3
        ogf = r["gflop"] / r["ort_ms"] * 1e3
        fraction = r.get("peak_fraction", kgf / peak if peak else None)
        pct = f" ({100 * fraction:.0f}%)" if fraction else ""
        if "peak_fraction_lo" in r:
            pct = (f" ({100 * fraction:.0f}%, {100 * r['peak_fraction_lo']:.0f}-"
                   f"{100 * r['peak_fraction_hi']:.0f}% of each round's peak)")
        if r["target"] is None:
            target = "≥ 90% of peak: " + ("met" if fraction and fraction >= 0.9 else "missed")
        else:
            target = f"≤ {r['target']}×: " + ("met" if ratio <= r["target"] else "missed")
        compile_s = f"{r['compile_s']:.1f}" if r.get("compile_s") else ""
        lines.append(
            f"| {r['desc']} | {r['gflop']:.2f} | {r['kiln_ms']:.2f} | {r['ort_ms']:.2f} | "
            f"{ratio:.2f}{spread} | {target} | {kgf:.0f}{pct} | {ogf:.0f} | "
            f"{r['kiln_rss']:.0f} | {r['ort_rss']:.0f} | {compile_s} | "
            f"{r.get('repeat', args.repeat)} | {r['error']:.1e} |")
    if symbolic:
        lines += symbolic_table(symbolic)
    if pt2:
        lines += pt2_table(pt2)
    lines += ["", notes()]
    with open(args.doc, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.doc}")


def notes():
    path = os.path.join(HERE, "performance-notes.md")
    return open(path).read().strip() if os.path.exists(path) else ""

if __name__ == "__main__":
    main()
