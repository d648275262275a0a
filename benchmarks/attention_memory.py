#!/usr/bin/env python3
"""Peak memory of attention, kiln (fused, flash lowering) vs onnxruntime.

    attention_memory.py --kiln build/bin/kiln [--seqs 1024,2048,4096,8192,16384]
                        [--ort-max-seq 4096] [--check-seq 4096] [--doc docs/attention-memory.md]

For each sequence length S, builds an ONNX model of explicit, decomposed
attention over q, k, v of [1, 12, S, 64] fp32 (Transpose, MatMul, Div by 8,
Softmax, MatMul), compiles it with `kiln compile`, runs it with
`kiln run --random-inputs` and records the child's peak RSS (/usr/bin/time's
%M). onnxruntime runs the same model in a child process for
S <= --ort-max-seq (it materializes [12, S, S] scores: 12.9 GB at 16k).

Then checks kiln's output at S = --check-seq against numpy's float64
attention on the same random inputs (max |error| / max |reference| and an
elementwise rtol 1e-5 test with atol 1e-5 * max |reference|), and writes the
table to --doc. Not part of ctest: large S takes minutes while the generated
loops are not yet vectorized.
"""
import argparse
import datetime
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

HEADS, HEAD_DIM = 12, 64


def attention_model(seq, path):
    shape = [1, HEADS, seq, HEAD_DIM]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
              for n in ("q", "k", "v")]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)
    scale = helper.make_tensor("sqrt_d", TensorProto.FLOAT, [],
                               [float(np.sqrt(HEAD_DIM))])
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], name="k_transpose",
                         perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="qk"),
        helper.make_node("Div", ["scores", "sqrt_d"], ["scaled"], name="scale"),
        helper.make_node("Softmax", ["scaled"], ["probs"], name="softmax",
                         axis=-1),
        helper.make_node("MatMul", ["probs", "v"], ["out"], name="pv"),
    ]
    graph = helper.make_graph(nodes, f"attention_{seq}", inputs, [out],
                              initializer=[scale])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              ir_version=8)
    onnx.save(model, path)


def run_measured(cmd, env=None):
    """Runs cmd; returns (seconds, peak RSS in MB, stdout+stderr).

    The peak comes from /usr/bin/time, not from wait4 here: Linux carries a
    process's ru_maxrss across fork and exec, so a child of this script
    (which holds numpy arrays of up to GBs) would report this script's peak.
    """
    start = time.monotonic()
    proc = subprocess.Popen(["/usr/bin/time", "-f", "KILN_PEAK_KB=%M"] + cmd,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            env=env)
    output = proc.stdout.read().decode(errors="replace")
    proc.wait()
    elapsed = time.monotonic() - start
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{output}")
    peak_kb = int(output.rsplit("KILN_PEAK_KB=", 1)[1].split()[0])
    return elapsed, peak_kb / 1024.0, output


ORT_CHILD = """
import sys, numpy as np, onnxruntime as ort
path, seq = sys.argv[1], int(sys.argv[2])
rng = np.random.default_rng(0)
feeds = {n: rng.standard_normal((1, 12, seq, 64), dtype=np.float32) for n in "qkv"}
so = ort.SessionOptions()
so.intra_op_num_threads = 1
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
sess.run(None, feeds)
"""


def reference(q, k, v):
    out = np.empty(q.shape, np.float64)
    for h in range(q.shape[1]):
        s = q[0, h].astype(np.float64) @ k[0, h].astype(np.float64).T
        s /= np.sqrt(q.shape[-1])
        s = np.exp(s - s.max(axis=-1, keepdims=True))
        out[0, h] = (s / s.sum(axis=-1, keepdims=True)) @ v[0, h]
    return out


def check_numerics(kiln, so_path, seq, work):
    rng = np.random.default_rng(1)
    files = []
    data = {}
    for n in "qkv":
        data[n] = rng.standard_normal((1, HEADS, seq, HEAD_DIM), dtype=np.float32)
        f = os.path.join(work, f"{n}.npy")
        np.save(f, data[n])
        files += ["--input", f"{n}={f}"]
    outdir = os.path.join(work, "out")
    run_measured([kiln, "run", so_path, *files, "--output-dir", outdir])
    got = np.load(os.path.join(outdir, "out.npy")).astype(np.float64)
    want = reference(data["q"], data["k"], data["v"])
    scale = np.abs(want).max()
    rel = np.abs(got - want).max() / scale
    ok = np.allclose(got, want, rtol=1e-5, atol=1e-5 * scale)
    return rel, ok


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--kiln", required=True)
    p.add_argument("--seqs", default="1024,2048,4096,8192,16384")
    p.add_argument("--ort-max-seq", type=int, default=4096)
    p.add_argument("--check-seq", type=int, default=4096)
    p.add_argument("--doc", default=os.path.join(
        os.path.dirname(__file__), "..", "docs", "attention-memory.md"))
    a = p.parse_args()
    try:
        import onnxruntime as ort
        ort_version = ort.__version__
    except ImportError:
        ort_version = None

    seqs = [int(s) for s in a.seqs.split(",")]
    rows = []
    check = None
    with tempfile.TemporaryDirectory(prefix="kiln-attention-") as work:
        for seq in seqs:
            model = os.path.join(work, f"attention_{seq}.onnx")
            so_path = os.path.join(work, f"attention_{seq}.so")
            attention_model(seq, model)
            env = dict(os.environ, KILN_LOGS="fusion")
            _, _, log = run_measured([a.kiln, "compile", model, "-o", so_path],
                                     env=env)
            fused = "fused attention at" in log
            secs, kiln_mb, _ = run_measured(
                [a.kiln, "run", so_path, "--random-inputs", "--threads", "1"])
            ort_mb = None
            if ort_version and seq <= a.ort_max_seq:
                _, ort_mb, _ = run_measured(
                    [sys.executable, "-c", ORT_CHILD, model, str(seq)])
            rows.append((seq, fused, kiln_mb, secs, ort_mb))
            print(f"S={seq}: fused={fused} kiln {kiln_mb:.1f} MB ({secs:.1f} s), "
                  f"onnxruntime {'%.1f MB' % ort_mb if ort_mb else 'not run'}",
                  flush=True)
            if seq == a.check_seq:
                check = check_numerics(a.kiln, so_path, seq, work)
                print(f"S={seq}: max|err|/max|ref| = {check[0]:.2e}, "
                      f"allclose(rtol=1e-5): {check[1]}", flush=True)

    lines = [
        "# Attention memory: kiln (flash lowering) vs onnxruntime",
        "",
        "Made by `benchmarks/attention_memory.py` (not part of ctest). Model:",
        "explicit decomposed attention (Transpose, MatMul, Div by 8, Softmax,",
        "MatMul) over q, k, v of `[1, 12, S, 64]` fp32, which",
        "`kiln-fuse-attention` turns into `kiln.attention`. Peak RSS of the",
        "whole `kiln run --random-inputs --threads 1` process (inputs, output,",
        "arena, runtime) and of a python process running onnxruntime's CPU",
        "provider on the same model (one intra-op thread).",
        "",
        f"- date: {datetime.date.today().isoformat()}",
        f"- machine: {platform.machine()}, {platform.processor() or '?'}, "
        f"{os.cpu_count()} cpus, {platform.system()} {platform.release()}",
        f"- python {platform.python_version()}, numpy {np.__version__}, "
        f"onnx {onnx.__version__}, onnxruntime {ort_version or 'not installed'}",
        "",
        "| S | fused | kiln peak RSS (MB) | kiln run time (s) | onnxruntime peak RSS (MB) |",
        "|---:|:---:|---:|---:|---:|",
    ]
    for seq, fused, kiln_mb, secs, ort_mb in rows:
        ort_text = f"{ort_mb:.1f}" if ort_mb else (
            f"not run ([12, S, S] scores alone: "
            f"{HEADS * seq * seq * 4 / 2**30:.1f} GiB)")
        lines.append(f"| {seq} | {'yes' if fused else 'no'} | {kiln_mb:.1f} | "
                     f"{secs:.1f} | {ort_text} |")
    if check:
        lines += ["", f"Numerics at S = {a.check_seq}: max |kiln - numpy float64| / "
                  f"max |numpy| = {check[0]:.2e}; elementwise within rtol 1e-5 "
                  f"(atol 1e-5 x max): {'yes' if check[1] else 'no'}."]
    lines += ["", "Run times are for scalar (not yet vectorized) loops on one "
              "thread; see the CPU performance issue."]
    with open(a.doc, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {a.doc}")


if __name__ == "__main__":
    main()
