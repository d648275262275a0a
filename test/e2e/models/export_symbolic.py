#!/usr/bin/env python3
"""Exports the symbolic-dim models of symbolic_models.py (dynamic batch and
sequence) with onnxruntime's outputs at a few sizes, for the real-GPU check
(scripts/gpu-check.sh bundle; gpu_check_symbolic.py runs them):

    OUT/NAME.onnx, OUT/NAME_<size>_in_<input>.npy, OUT/NAME_<size>_expected.npy

    export_symbolic.py OUT
"""
import os
import sys

import numpy as np
import onnxruntime as ort
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from symbolic_models import Encoder, Gpt2Block  # noqa: E402

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
torch.manual_seed(0)
rng = np.random.default_rng(0)
axes = {0: "batch", 1: "seq"}


def export(name, model, args, names, make_inputs, sizes):
    path = os.path.join(out, name + ".onnx")
    dynamic = {n: axes for n in names + ["out"]}
    torch.onnx.export(model.eval(), args, path, input_names=names,
                      output_names=["out"], dynamic_axes=dynamic,
                      opset_version=17, dynamo=False)
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for b, t in sizes:
        inputs = make_inputs(b, t)
        size = f"{b}x{t}"
        for n, value in inputs.items():
            np.save(os.path.join(out, f"{name}_{size}_in_{n}.npy"), value)
        np.save(os.path.join(out, f"{name}_{size}_expected.npy"),
                session.run(None, inputs)[0])


def encoder_inputs(b, t):
    mask = np.ones((b, t), dtype=np.int64)
    mask[:, t - t // 3:] = 0
    mask[:, 0] = 1
    return {"ids": rng.integers(0, 100, (b, t), dtype=np.int64), "mask": mask}


export("gpt2", Gpt2Block(), (torch.randn(2, 16, 64),), ["x"],
       lambda b, t: {"x": rng.standard_normal((b, t, 64), dtype=np.float32)},
       [(1, 7), (4, 128), (2, 300)])
export("encoder", Encoder(),
       (torch.randint(0, 100, (2, 16)), torch.ones(2, 16, dtype=torch.int64)),
       ["ids", "mask"], encoder_inputs, [(1, 7), (8, 128), (3, 200)])
