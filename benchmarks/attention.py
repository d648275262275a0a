#!/usr/bin/env python3
"""Attention on the CPU: Kiln vs onnxruntime vs TorchInductor, side by side.

    benchmarks/attention.py --kiln build/bin/kiln [--threads 2] [--rounds 3]
                            [--only attn4096,attn4096_causal,attn16k]
                            [--ort-max-seq 4096] [--work /tmp/kiln-attn]
                            [--doc docs/attention-performance.md]

Each workload is softmax(q k^T / sqrt(d) [causal]) v over q, k, v of
[1, 12, S, 64] fp32, built with onnx.helper as exporters spell it
(Transpose, MatMul, Div, Softmax, MatMul; causal: a Where on a Trilu mask of
a ConstantOfShape, as the SDPA export builds it). Kiln fuses it into one
flash-attention kernel (memory linear in S); onnxruntime runs the graph (it
materializes the [12, S, S] scores: 805 MB at 4k, 12.9 GB at 16k, so it
runs only up to --ort-max-seq); TorchInductor runs torch.compile of
F.scaled_dot_product_attention (ATen's flash-attention CPU kernel, memory
linear too). All three in child processes with the same thread count, in
alternating rounds; each figure is the median over rounds of the per-round
medians, the ratios the median of the rounds' own ratios.

GFLOP counts the two products, 4 * heads * S^2 * 64 (half that for causal:
the blocks above the diagonal are skipped by every side). The FP32 peak comes
from benchmarks/fma_peak.c. Error: Kiln's output against a float64 numpy
reference on 128 query rows of two heads (first and last 64 rows).

Needs numpy, onnx, onnxruntime and torch from PyPI. Not part of `make test`.
"""
import argparse
import datetime
import json
import os
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from run import (fma_peak, kiln_bench, machine, ort_bench, run,  # noqa: E402
                 versions)

HEADS, HEAD_DIM = 12, 64

# name -> (sequence length, causal)
WORKLOADS = {
    "attn4096": (4096, False),
    "attn4096_causal": (4096, True),
    "attn16k": (16384, False),
    "attn16k_causal": (16384, True),
}

TARGETS = "≥ 80% of peak, ≤ 0.7× ORT, ≤ 0.8× TorchInductor"


def module(causal):
    import torch
    import torch.nn.functional as F

    class Attention(torch.nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    return Attention()


def export(seq, causal, path):
    import onnx
    from onnx import TensorProto, helper
    shape = [1, HEADS, seq, HEAD_DIM]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, shape)
              for n in ("q", "k", "v")]
    out = helper.make_tensor_value_info("out", TensorProto.FLOAT, shape)
    inits = [helper.make_tensor("sqrt_d", TensorProto.FLOAT, [],
                                [float(np.sqrt(HEAD_DIM))]),
             helper.make_tensor("square", TensorProto.INT64, [2], [seq, seq]),
             helper.make_tensor("neg_inf", TensorProto.FLOAT, [], [-np.inf])]
    nodes = [
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"], name="qk"),
        helper.make_node("Div", ["scores", "sqrt_d"], ["scaled"], name="scale"),
    ]
    logits = "scaled"
    if causal:
        ones = helper.make_tensor("one", TensorProto.BOOL, [1], [True])
        nodes += [
            helper.make_node("ConstantOfShape", ["square"], ["all"], value=ones),
            helper.make_node("Trilu", ["all"], ["keep"], upper=0),
            helper.make_node("Where", ["keep", "scaled", "neg_inf"], ["masked"],
                             name="mask"),
        ]
        logits = "masked"
    nodes += [
        helper.make_node("Softmax", [logits], ["probs"], axis=-1, name="softmax"),
        helper.make_node("MatMul", ["probs", "v"], ["out"], name="pv"),
    ]
    graph = helper.make_graph(nodes, f"attention_{seq}", inputs, [out], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              path)


INDUCTOR_CHILD = r"""
import json, sys, time
import numpy as np, torch
sys.path.insert(0, sys.argv[5])
from attention import module
seq, causal, threads, repeat = int(sys.argv[1]), sys.argv[2] == "1", int(sys.argv[3]), int(sys.argv[4])
torch.set_num_threads(threads)
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 12, seq, 64, generator=g) for _ in range(3))
f = torch.compile(module(causal))
with torch.no_grad():
    for _ in range(3):
        f(q, k, v)
    times = []
    for _ in range(repeat):
        t = time.perf_counter(); f(q, k, v)
        times.append((time.perf_counter() - t) * 1000)
hwm = [l for l in open("/proc/self/status") if l.startswith("VmHWM")]
print(json.dumps({"median": float(np.median(times)),
                  "rss_mb": int(hwm[0].split()[1]) / 1024}))
"""


def inductor_bench(seq, causal, threads, repeat):
    r = run([sys.executable, "-c", INDUCTOR_CHILD, str(seq), str(int(causal)),
             str(threads), str(repeat), HERE])
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])
    d = json.loads(r.stdout)
    return d["median"], d["rss_mb"]


def check(kiln, so, seq, causal, work):
    """max |kiln - float64 numpy| / max |reference| on 128 rows of 2 heads."""
    rng = np.random.default_rng(1)
    inputs = {n: rng.standard_normal((1, HEADS, seq, HEAD_DIM)).astype(np.float32)
              for n in ("q", "k", "v")}
    args = []
    for n, x in inputs.items():
        f = os.path.join(work, f"{n}.npy")
        np.save(f, x)
        args += ["--input", f"{n}={f}"]
    out_dir = os.path.join(work, "out")
    r = run([kiln, "run", so, "--output-dir", out_dir, "--threads", "2"] + args)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1])
    got = np.load(os.path.join(out_dir, "out.npy"))
    worst = 0.0
    for h in (0, HEADS - 1):
        q, k, v = (inputs[n][0, h].astype(np.float64) for n in ("q", "k", "v"))
        for rows in (np.arange(64), np.arange(seq - 64, seq)):
            s = q[rows] @ k.T / np.sqrt(HEAD_DIM)
            if causal:
                s[np.arange(64)[:, None] + rows[0] < np.arange(seq)[None, :]] = -np.inf
            p = np.exp(s - s.max(axis=1, keepdims=True))
            ref = (p / p.sum(axis=1, keepdims=True)) @ v
            worst = max(worst, float(np.abs(got[0, h, rows] - ref).max() /
                                     np.abs(ref).max()))
    return worst


def measure(args, kiln, name):
    seq, causal = WORKLOADS[name]
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "model.onnx")
    gflop = 4 * HEADS * seq * seq * HEAD_DIM / 1e9 / (2 if causal else 1)
    row = {"name": name, "seq": seq, "causal": causal, "gflop": gflop}
    try:
        if not os.path.exists(path):
            export(seq, causal, path)
        so = os.path.join(work, "model.so")
        r = run([kiln, "compile", path, "-o", so, "--report=-"])
        if r.returncode != 0:
            raise RuntimeError("kiln compile: " + r.stderr.strip().splitlines()[-1])
        report = json.loads(r.stdout)
        row["fused"] = report.get("attention_fused", 0)
        row["error"] = check(kiln, so, seq, causal, work)
        with_ort = seq <= args.ort_max_seq
        times = {"kiln": [], "ort": [], "inductor": []}
        rss = {"kiln": 0.0, "ort": 0.0, "inductor": 0.0}
        fractions = []
        for _ in range(args.rounds):
            # This host's FMA throughput drifts by 10-20%: Kiln's share of
            # the peak is taken against the peak measured in the same round.
            round_peak = fma_peak(args.threads, args.work, build=False)[0]
            sides = [("kiln", lambda: kiln_bench(kiln, so, args.threads, args.repeat)),
                     ("inductor", lambda: inductor_bench(seq, causal, args.threads,
                                                         args.repeat))]
            if with_ort:
                sides.append(("ort", lambda: ort_bench(path, args.threads,
                                                       args.repeat)))
            for side, bench in sides:
                ms, mb = bench()
                times[side].append(ms)
                rss[side] = max(rss[side], mb)
                if side == "kiln" and round_peak:
                    fractions.append(gflop / ms * 1e3 / round_peak)
        if fractions:
            row["peak_fraction"] = float(np.median(fractions))
        for side, t in times.items():
            if t:
                row[f"{side}_ms"] = float(np.median(t))
                row[f"{side}_rss"] = rss[side]
                if side != "kiln":
                    row[f"vs_{side}"] = float(np.median(
                        [a / b for a, b in zip(times["kiln"], t)]))
    except Exception as e:  # report, keep going
        row["failure"] = str(e)[:300]
    return row


def write_doc(args, rows, peak, peak_text, vers):
    lines = [
        "# Attention on the CPU: Kiln vs onnxruntime vs TorchInductor", "",
        "Generated by `benchmarks/attention.py` (do not edit by hand); "
        f"{datetime.date.today().isoformat()}.", "",
        f"- Machine: {machine()}",
        "- Versions: " + ", ".join(f"{k} {v}" for k, v in vers.items()),
        f"- Threads: {args.threads} per side; medians of {args.repeat} runs, "
        f"median over {args.rounds} alternating rounds; ratios are the "
        "median of the rounds' own ratios.",
        f"- fp32 FMA peak ({args.threads} threads, benchmarks/fma_peak.c): "
        f"{peak_text} at the start; Kiln's % of peak is the median over "
        "rounds of its GFLOP/s over the peak measured again in that round.",
        "- q, k, v of [1, 12, S, 64] fp32; GFLOP = 4 * 12 * S^2 * 64, half "
        "for causal. onnxruntime materializes the [12, S, S] scores and runs "
        f"only for S <= {args.ort_max_seq}. Targets (issue 24): {TARGETS}.",
        "- Error: Kiln against float64 numpy on 128 query rows of two heads.",
        "",
        "| workload | GFLOP | kiln ms | kiln GFLOP/s (% peak) | ORT ms | "
        "kiln/ORT | Inductor ms | kiln/Inductor | kiln RSS MB | ORT RSS MB | "
        "Inductor RSS MB | error |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        desc = f"S={r['seq']}" + (" causal" if r["causal"] else "")
        if "failure" in r:
            lines.append(f"| {desc} | | failed: {r['failure']} |" + " |" * 9)
            continue
        gfs = r["gflop"] / r["kiln_ms"] * 1e3
        fraction = r.get("peak_fraction", gfs / peak if peak else None)
        pct = f" ({100 * fraction:.0f}%)" if fraction else ""
        ort = (f"{r['ort_ms']:.1f} | {r['vs_ort']:.2f}" if "ort_ms" in r
               else "not run | ")
        ort_rss = f"{r['ort_rss']:.0f}" if "ort_rss" in r else ""
        lines.append(
            f"| {desc} | {r['gflop']:.1f} | {r['kiln_ms']:.1f} | {gfs:.0f}{pct} | "
            f"{ort} | {r['inductor_ms']:.1f} | {r['vs_inductor']:.2f} | "
            f"{r['kiln_rss']:.0f} | {ort_rss} | "
            f"{r['inductor_rss']:.0f} | {r['error']:.1e} |")
    with open(args.doc, "w") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {args.doc}")


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", default="")
    ap.add_argument("--ort-max-seq", type=int, default=4096)
    ap.add_argument("--work", default=os.path.join(tempfile.gettempdir(), "kiln-attn"))
    ap.add_argument("--doc", default=os.path.join(HERE, "..", "docs",
                                                  "attention-performance.md"))
    args = ap.parse_args()
    kiln = os.path.abspath(args.kiln)
    os.makedirs(args.work, exist_ok=True)
    vers = versions(kiln)
    print(f"versions: {json.dumps(vers)}", flush=True)
    peak, peak_text = fma_peak(args.threads, args.work)
    print(f"fp32 FMA peak: {peak_text}", flush=True)
    rows = []
    for name in WORKLOADS:
        if args.only and name not in args.only.split(","):
            continue
        row = measure(args, kiln, name)
        rows.append(row)
        print(json.dumps(row), flush=True)
    write_doc(args, rows, peak, peak_text, vers)


if __name__ == "__main__":
    main()
