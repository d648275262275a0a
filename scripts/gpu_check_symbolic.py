#!/usr/bin/env python3
"""Symbolic dims on a real GPU (scripts/gpu-check.sh run): each artifact in
DIR (compiled for CUDA with no --input-shape by `gpu-check.sh bundle`) runs
in ONE session at its sizes in turn, each size three times and the first
size again at the end: the first run of a size launches kernel by kernel,
the second captures a CUDA graph, the third replays it, and a change of
size drops the graph. Every output is compared with onnxruntime's (rtol
1e-4, atol 1e-5); one line per run, and a summary line.

    gpu_check_symbolic.py DIR LIBKILN_RT
"""
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "e2e"))
from kiln_ctypes import Runtime  # noqa: E402

folder, library = sys.argv[1:3]
runtime = Runtime(library)
failures = runs = 0
for artifact in sorted(glob.glob(os.path.join(folder, "*.so"))):
    name = os.path.basename(artifact)[:-3]
    sizes = sorted({os.path.basename(f)[len(name) + 1:].split("_")[0]
                    for f in glob.glob(os.path.join(folder, f"{name}_*_expected.npy"))})
    cases = []
    for size in sizes:
        inputs = {}
        for f in sorted(glob.glob(os.path.join(folder, f"{name}_{size}_in_*.npy"))):
            inputs[os.path.basename(f)[len(f"{name}_{size}_in_"):-4]] = np.load(f)
        cases.append((size, inputs,
                      np.load(os.path.join(folder, f"{name}_{size}_expected.npy"))))
    model, session = runtime.session(artifact)
    order = [c for c in cases for _ in range(3)] + cases[:1]
    for i, (size, inputs, expected) in enumerate(order):
        runs += 1
        try:
            got = runtime.run(session, inputs)
            ok = got.shape == expected.shape and np.allclose(
                got, expected, rtol=1e-4, atol=1e-5)
            detail = (f"max error {np.abs(got - expected).max():.2e}"
                      if got.shape == expected.shape else f"shape {got.shape}")
        except RuntimeError as e:
            ok, detail = False, str(e)
        failures += not ok
        print(f"symbolic {name} {size} run {i + 1}: "
              f"{'PASS' if ok else 'FAIL'} ({detail})")
    runtime.lib.kiln_session_destroy(session)
    runtime.lib.kiln_model_free(model)
print(f"symbolic dims: {runs - failures} of {runs} runs match onnxruntime")
sys.exit(1 if failures else 0)
