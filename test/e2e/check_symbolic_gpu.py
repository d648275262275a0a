#!/usr/bin/env python3
"""Symbolic dims on GPU targets: one artifact, many sizes.

Exports a GPT-2 style block and a BERT-style encoder (dynamic batch and
sequence) and a small CNN (dynamic batch), compiles each ONCE for CUDA with
no --input-shape, and checks:

  - the emulated artifact (--gpu-emulate: the same kernels compiled for this
    CPU, run by the runtime's GPU emulator) against onnxruntime at several
    sizes, each in a fresh process (kiln run);
  - one session running the sizes in turn, larger and smaller (the device
    buffers of the inputs grow, the run-time sized scratch is reused),
    through the C API;
  - --gpu-precision=bf16 (tensor-core contractions and attention, emulated)
    within 1e-2 relative L2 error;
  - the kernels assemble for sm_80 and sm_90a (ptxas, when the CUDA toolkit
    is there): nothing runs them here, a GPU machine does
    (scripts/gpu-check.sh);
  - no generic fallback: the report counts the tiled contraction kernels
    over run-time rows and the flash attention kernels, and no one-thread
    kernel;
  - `kiln inspect` prints the symbols, and the run-time errors of a CPU
    artifact (two inputs disagreeing on a shared dim, a size outside the
    --dim range) hold on the GPU too.

    check_symbolic_gpu.py KILN KILN_RT_LIBRARY WORK_DIR
"""
import json
import os
import shutil
import subprocess
import sys

try:
    import numpy as np
    import onnxruntime as ort
    import torch
except ImportError as e:
    print(f"skipped: {e}")
    sys.exit(77)

from kiln_ctypes import Runtime  # noqa: E402
import symbolic_models  # noqa: E402
from symbolic_models import (Encoder, Gpt2Block, Recurrent,  # noqa: E402
                             SmallCnn)

kiln, runtime_library, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
torch.manual_seed(0)
rng = np.random.default_rng(0)
failures = []
EMULATE = ["--target=cuda", "--gpu-emulate"]


def export(name, model, args, names, axes):
    return symbolic_models.export(work, name, model, args, names, axes)


def compile_model(path, suffix, *flags):
    artifact = path.replace(".onnx", f"{suffix}.so")
    done = subprocess.run([kiln, "compile", path, "-o", artifact, *flags],
                          capture_output=True, text=True)
    if done.returncode != 0:
        failures.append(f"compile {path} {' '.join(flags)}: {done.stderr}")
        return None
    return artifact


def run(artifact, inputs, expected=None, tag=""):
    return symbolic_models.run(kiln, work, artifact, inputs, expected, tag)


runtime = Runtime(runtime_library)
# HIP code objects need ROCm's device libraries (rocm-device-libs).
rocm = os.path.exists("/usr/lib/x86_64-linux-gnu/amdgcn/bitcode/ocml.bc")
ptxas = shutil.which("ptxas") or next(
    (p for p in ("/usr/local/cuda/bin/ptxas",) if os.path.exists(p)), None)


def check_model(name, path, make_inputs, sizes, *flags, attention=0,
                tiled=3, norms=0, serial_ok=False):
    report_file = os.path.join(work, f"{name}_report.json")
    artifact = compile_model(path, "_emulated", *EMULATE, *flags,
                             f"--report={report_file}")
    if not artifact:
        return None
    # No generic fallback: every contraction a tiled kernel with run-time
    # row tiles, attention the flash kernel, and no one-thread kernel.
    with open(report_file) as f:
        report = json.load(f)
    min_tiled, min_norms = tiled, norms
    tiled = report.get("gpu_contraction_kernels_run_time_rows", 0)
    norms = report.get("gpu_row_kernels_run_time_rows", 0)
    flash = report.get("gpu_attention_kernels_run_time_extents", 0)
    serial = [k["onnx_nodes"] for k in report["gpu"]["kernels"]
              if k["block"] == [1, 1, 1]]
    print(f"{name}: {tiled} tiled contraction kernels over run-time rows, "
          f"{flash} flash attention kernels, {norms} row kernels (layer norm, "
          f"softmax), {len(serial)} one-thread kernels")
    if (tiled < min_tiled or flash != attention or norms < min_norms or
            (serial and not serial_ok)):
        failures.append(f"{name}: kernels {tiled} tiled, {flash} flash "
                        f"(want {attention}), {norms} row kernels (want "
                        f"{min_norms}), one-thread kernels {serial}")
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    cases = []
    for size in sizes:
        inputs = make_inputs(*size)
        expected = session.run(None, inputs)[0]
        cases.append((size, inputs, expected))
        code, text = run(artifact, inputs, expected, f"{name}_{size}")
        print(f"{name} {size} (emulated GPU): {'PASS' if code == 0 else 'FAIL'}")
        if code != 0:
            failures.append(f"{name} at {size}: {text.strip()}")
    # One session, the sizes in turn and back again.
    model, one = runtime.session(artifact)
    for size, inputs, expected in cases + cases[::-1]:
        try:
            got = runtime.run(one, inputs)
        except RuntimeError as e:
            failures.append(f"{name} at {size} in one session: {e}")
            continue
        if got.shape != expected.shape or not np.allclose(
                got, expected, atol=1e-4, rtol=1e-4):
            failures.append(f"{name} at {size} in one session: max error "
                            f"{np.abs(got - expected).max() if got.shape == expected.shape else got.shape}")
    runtime.lib.kiln_session_destroy(one)
    runtime.lib.kiln_model_free(model)
    print(f"{name}: {2 * len(cases)} runs in one session done")
    if ptxas:
        assembled = compile_model(path, "_sm90", "--target=cuda",
                                  "--gpu-arch=sm_80,sm_90a", *flags)
        print(f"{name}: assembled for sm_80, sm_90a: "
              f"{'PASS' if assembled else 'FAIL'}")
    return artifact


def check_tensor_cores(name, path, make_inputs, sizes, *flags,
                       target="cuda"):
    """--gpu-precision=bf16: the contractions and attention on mma.sync
    (CUDA) or MFMA (HIP), emulated, in one session, within 1e-2 relative
    L2 error of onnxruntime's fp32 outputs; and assembled for sm_80, sm_90a
    (or gfx90a, gfx942)."""
    unit = "mma.sync" if target == "cuda" else "MFMA"
    artifact = compile_model(path, f"_{target}_bf16", f"--target={target}",
                             "--gpu-emulate", "--gpu-precision=bf16", *flags)
    if not artifact:
        return
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    model, one = runtime.session(artifact)
    for size in sizes:
        inputs = make_inputs(*size)
        expected = session.run(None, inputs)[0]
        try:
            got = runtime.run(one, inputs)
            error = float(np.linalg.norm(got - expected)
                          / np.linalg.norm(expected))
        except (RuntimeError, ValueError) as e:
            error = e
        ok = isinstance(error, float) and error <= 1e-2
        print(f"{name} {size} (emulated {unit} bf16): "
              f"{'PASS' if ok else 'FAIL'} (rel L2 error {error})")
        if not ok:
            failures.append(f"{name} bf16 at {size}: rel L2 error {error}")
    runtime.lib.kiln_session_destroy(one)
    runtime.lib.kiln_model_free(model)
    archs = {"cuda": "sm_80,sm_90a", "hip": "gfx90a,gfx942"}[target]
    if (ptxas if target == "cuda" else rocm) and not compile_model(
            path, f"_{target}_bf16_device", f"--target={target}",
            f"--gpu-arch={archs}", "--gpu-precision=bf16", *flags):
        print(f"{name}: bf16 assembly for {archs} FAIL")


axes_bs = {0: "batch", 1: "seq"}
gpt2 = export("gpt2", Gpt2Block(), (torch.randn(2, 16, 64),), ["x"],
              {"x": axes_bs, "out": axes_bs})
check_model("gpt2", gpt2,
            lambda b, t: {"x": rng.standard_normal((b, t, 64),
                                                   dtype=np.float32)},
            [(1, 7), (3, 64), (1, 1), (1, 300)], "--dim", "seq=1..512",
            attention=1, norms=2)

# Without --dim, a size beyond the registered causal buffer fails the run
# by the Slice's check, on the host (not a trap in a kernel).
gpt2_any = compile_model(gpt2, "_any", *EMULATE)
if gpt2_any:
    code, text = run(gpt2_any, {"x": np.zeros((1, 600, 64), np.float32)},
                     tag="gpt2_long")
    if code != 1 or ("Slice: the end computed for axis 2 is beyond that "
                     "dim's extent 512") not in text:
        failures.append(f"gpt2 at 600 tokens: expected the Slice check, got "
                        f"rc {code}: {text.strip()}")
    else:
        print("gpt2 beyond its causal buffer (GPU): PASS")

enc = export("encoder", Encoder(),
             (torch.randint(0, 100, (2, 16)),
              torch.ones(2, 16, dtype=torch.int64)),
             ["ids", "mask"], {"ids": axes_bs, "mask": axes_bs, "out": axes_bs})


def encoder_inputs(b, t):
    mask = np.ones((b, t), dtype=np.int64)
    mask[:, t - t // 3:] = 0
    mask[:, 0] = 1
    return {"ids": rng.integers(0, 100, (b, t), dtype=np.int64), "mask": mask}


encoder_so = check_model("encoder", enc, encoder_inputs,
                         [(1, 7), (3, 64), (1, 128), (1, 1)],
                         "--dim", "seq=1..512", attention=1, norms=3)
check_tensor_cores("gpt2", gpt2,
                   lambda b, t: {"x": rng.standard_normal(
                       (b, t, 64), dtype=np.float32)},
                   [(1, 7), (3, 64), (1, 300)], "--dim", "seq=1..512")
check_tensor_cores("encoder", enc, encoder_inputs, [(1, 7), (2, 200)],
                   "--dim", "seq=1..512")
check_tensor_cores("gpt2", gpt2,
                   lambda b, t: {"x": rng.standard_normal(
                       (b, t, 64), dtype=np.float32)},
                   [(1, 7), (3, 64)], "--dim", "seq=1..512", target="hip")

cnn = export("cnn", SmallCnn(), (torch.randn(2, 3, 32, 32),), ["x"],
             {"x": {0: "batch"}, "out": {0: "batch"}})
check_model("cnn", cnn,
            lambda b: {"x": rng.standard_normal((b, 3, 32, 32),
                                                dtype=np.float32)},
            [(2,), (8,), (1,)])


# Recurrences over a run-time batch and sequence: the step loop runs on the
# host, each step's kernels launched from it (the step's gate math still
# has a one-thread kernel per step).
for kind in ("gru", "lstm"):
    path = export(f"rnn_{kind}", Recurrent(kind), (torch.randn(2, 5, 8),),
                  ["x"], {"x": {0: "b", 1: "time"}, "out": {0: "b", 1: "time"}})
    check_model(f"rnn_{kind}", path,
                lambda b, t: {"x": rng.standard_normal((b, t, 8),
                                                       dtype=np.float32)},
                [(1, 1), (3, 7), (5, 30)], tiled=1, serial_ok=True)


def expect(what, code, text, message):
    if code == 0 or message not in text:
        failures.append(f"{what}: expected '{message}', got rc {code}: "
                        f"{text.strip()}")
    else:
        print(f"{what}: PASS")


if encoder_so:
    inspect = subprocess.run([kiln, "inspect", encoder_so],
                             capture_output=True, text=True)
    if "seq" not in inspect.stdout or "1..512" not in inspect.stdout:
        failures.append(f"kiln inspect shows no symbol ranges:\n"
                        f"{inspect.stdout}{inspect.stderr}")
    ids = rng.integers(0, 100, (1, 64), dtype=np.int64)
    code, text = run(encoder_so, {"ids": ids,
                                  "mask": np.ones((1, 77), np.int64)},
                     tag="mismatch")
    expect("shared dim mismatch (GPU)", code, text,
           "input 'mask' dim 1 (seq) is 77 but input 'ids' has 64")
    long_ids = rng.integers(0, 100, (1, 600), dtype=np.int64)
    code, text = run(encoder_so, {"ids": long_ids,
                                  "mask": np.ones((1, 600), np.int64)},
                     tag="range")
    expect("out of range (GPU)", code, text,
           "input 'ids' dim 1 (seq) is 600, outside the range 1..512 the "
           "model was compiled for")

if failures:
    print("\n".join(["FAILED:"] + failures))
    sys.exit(1)
print("all GPU symbolic-dim checks passed")
