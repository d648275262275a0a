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
  - the kernels assemble for sm_80 and sm_90a (ptxas, when the CUDA toolkit
    is there): nothing runs them here, a GPU machine does
    (scripts/gpu-check.sh);
  - `kiln inspect` prints the symbols, and the run-time errors of a CPU
    artifact (two inputs disagreeing on a shared dim, a size outside the
    --dim range) hold on the GPU too.

    check_symbolic_gpu.py KILN KILN_RT_LIBRARY WORK_DIR
"""
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
from symbolic_models import Encoder, Gpt2Block, SmallCnn  # noqa: E402

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
ptxas = shutil.which("ptxas") or next(
    (p for p in ("/usr/local/cuda/bin/ptxas",) if os.path.exists(p)), None)


def check_model(name, path, make_inputs, sizes, *flags):
    artifact = compile_model(path, "_emulated", *EMULATE, *flags)
    if not artifact:
        return None
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


axes_bs = {0: "batch", 1: "seq"}
gpt2 = export("gpt2", Gpt2Block(), (torch.randn(2, 16, 64),), ["x"],
              {"x": axes_bs, "out": axes_bs})
check_model("gpt2", gpt2,
            lambda b, t: {"x": rng.standard_normal((b, t, 64),
                                                   dtype=np.float32)},
            [(1, 7), (3, 64), (1, 1), (1, 300)], "--dim", "seq=1..512")

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
                         "--dim", "seq=1..512")

cnn = export("cnn", SmallCnn(), (torch.randn(2, 3, 32, 32),), ["x"],
             {"x": {0: "batch"}, "out": {0: "batch"}})
check_model("cnn", cnn,
            lambda b: {"x": rng.standard_normal((b, 3, 32, 32),
                                                dtype=np.float32)},
            [(2,), (8,), (1,)])


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
