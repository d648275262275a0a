#!/usr/bin/env python3
"""Exports small attention models to ONNX, with inputs and onnxruntime's
outputs, for the attention fusion tests (test/e2e/attention.cmake).

    export_attention.py NAME OUT_DIR        one model
    export_attention.py --list              the names, and whether each
                                            must fuse ("fused"/"unfused")

OUT_DIR gets model.onnx, one NAME.npy per input and expected_NAME.npy per
output. Models are exported with the TorchScript exporter (dynamo=False), as
torch.onnx.export spells attention: MatMul / scale / mask / Softmax / MatMul.
Names ending in "_folded" are the same export after onnxruntime's basic
(ONNX-only) constant folding, twins of the raw exports whose shape
arithmetic uses Mod and Trilu. Exits 77 (ctest's skip code here)
when torch or onnxruntime are not installed.
"""
import argparse
import math
import os
import sys
import warnings

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
except ImportError as e:  # optional test dependencies
    print(f"skipping: {e}")
    sys.exit(77)


class Explicit(nn.Module):
    """softmax(q k^T / sqrt(d) [+ mask]) v on BHSD (or bmm) inputs."""

    def __init__(self, scale="div", mask=None, bmm=False, axis=-1):
        super().__init__()
        self.scale, self.mask, self.bmm, self.axis = scale, mask, bmm, axis

    def forward(self, q, k, v, *mask):
        d = q.shape[-1]
        if self.bmm:
            s = torch.bmm(q, k.transpose(1, 2))
        else:
            s = q @ k.transpose(-2, -1)
        s = s / math.sqrt(d) if self.scale == "div" else s * (1.0 / math.sqrt(d))
        if self.mask == "additive":
            s = s + mask[0]
        p = torch.softmax(s, dim=self.axis)
        return torch.bmm(p, v) if self.bmm else p @ v


class CausalBuffer(nn.Module):
    """GPT-style: masked_fill of a registered tril buffer with -inf."""

    def __init__(self, seq):
        super().__init__()
        self.register_buffer("tri", torch.tril(torch.ones(seq, seq)))

    def forward(self, q, k, v):
        s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        seq = q.shape[-2]
        s = s.masked_fill(self.tri[:seq, :seq] == 0, float("-inf"))
        return torch.softmax(s, dim=-1) @ v


class HuggingFaceBSHD(nn.Module):
    """BSHD inputs, transpose(1, 2) per tensor, additive [B, 1, 1, S] mask."""

    def forward(self, q, k, v, mask):
        q, k, v = (t.transpose(1, 2) for t in (q, k, v))
        s = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
        p = nn.functional.softmax(s + mask, dim=-1)
        return torch.matmul(p, v).transpose(1, 2).contiguous()


class Mha(nn.Module):
    def __init__(self, embed, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(embed, heads, batch_first=True)

    def forward(self, x):
        return self.attn(x, x, x)[0]


class Sdpa(nn.Module):
    def __init__(self, causal):
        super().__init__()
        self.causal = causal

    def forward(self, q, k, v, *mask):
        return F.scaled_dot_product_attention(
            q, k, v, attn_mask=mask[0] if mask else None, is_causal=self.causal)


def randn(*shape):
    return torch.randn(*shape)


def padding_mask(batch, seq):
    """Additive mask hiding the last keys of the second sequence."""
    m = torch.zeros(batch, 1, 1, seq)
    m[-1, ..., seq - seq // 4:] = float("-inf")
    return m


def min_mask(batch, seq):
    """Additive mask at torch.finfo(float32).min (Hugging Face's): the last
    quarter of the keys hidden in the first sequence, every key in the
    last (its rows' softmax is uniform, as in the unfused graph)."""
    m = torch.zeros(batch, 1, 1, seq)
    low = torch.finfo(torch.float32).min
    m[0, ..., seq - seq // 4:] = low
    m[-1] = low
    return m


# name -> (must fuse, module factory, input names, input factory)
MODELS = {
    "bhsd_div": (True, lambda: Explicit("div"), ["q", "k", "v"],
                 lambda: [randn(2, 4, 80, 16) for _ in range(3)]),
    "bhsd_mul": (True, lambda: Explicit("mul"), ["q", "k", "v"],
                 lambda: [randn(1, 2, 130, 32), randn(1, 2, 70, 32),
                          randn(1, 2, 70, 24)]),
    "bhsd_additive_mask": (True, lambda: Explicit("div", mask="additive"),
                           ["q", "k", "v", "mask"],
                           lambda: [randn(1, 2, 96, 16) for _ in range(3)]
                           + [randn(1, 1, 96, 96)]),
    "bshd_hf": (True, HuggingFaceBSHD, ["q", "k", "v", "mask"],
                lambda: [randn(2, 72, 4, 16) for _ in range(3)]
                + [padding_mask(2, 72)]),
    "bshd_hf_min_mask": (True, HuggingFaceBSHD, ["q", "k", "v", "mask"],
                         lambda: [randn(2, 72, 4, 16) for _ in range(3)]
                         + [min_mask(2, 72)]),
    "causal_where": (True, lambda: CausalBuffer(100), ["q", "k", "v"],
                     lambda: [randn(1, 3, 100, 16) for _ in range(3)]),
    "bmm_3d": (True, lambda: Explicit("mul", bmm=True), ["q", "k", "v"],
               lambda: [randn(6, 50, 8) for _ in range(3)]),
    "mha": (True, lambda: Mha(32, 4), ["x"], lambda: [randn(2, 20, 32)]),
    "mha_folded": (True, lambda: Mha(32, 4), ["x"], lambda: [randn(2, 20, 32)]),
    "sdpa_causal": (True, lambda: Sdpa(True), ["q", "k", "v"],
                    lambda: [randn(1, 2, 90, 16) for _ in range(3)]),
    "sdpa_causal_folded": (True, lambda: Sdpa(True), ["q", "k", "v"],
                           lambda: [randn(1, 2, 90, 16) for _ in range(3)]),
    "sdpa_mask": (True, lambda: Sdpa(False), ["q", "k", "v", "mask"],
                  lambda: [randn(1, 2, 40, 16) for _ in range(3)]
                  + [randn(1, 1, 40, 40)]),
    # Head 128: the AMD MFMA flash kernel's largest (the SIMT kernel stops
    # at 64 and lowers it generically).
    "bhsd_head128": (True, lambda: Explicit("div"), ["q", "k", "v"],
                     lambda: [randn(1, 2, 70, 128) for _ in range(3)]),
    "negative_softmax_axis": (False, lambda: Explicit("div", axis=-2),
                              ["q", "k", "v"],
                              lambda: [randn(1, 2, 24, 16) for _ in range(3)]),
}


def export(name, out, opset):
    _, make, input_names, make_inputs = MODELS[name]
    torch.manual_seed(0)
    model = make().eval()
    inputs = make_inputs()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs), path, input_names=input_names,
                          output_names=["out"], opset_version=opset,
                          dynamo=False)
    if name.endswith("_folded"):
        # onnxruntime's basic level rewrites with standard ONNX ops only
        # (constant folding, redundant node elimination).
        options = ort.SessionOptions()
        options.graph_optimization_level = \
            ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = path
        ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    feeds = {}
    for n, t in zip(input_names, inputs):
        feeds[n] = t.numpy()
        np.save(os.path.join(out, n + ".npy"), feeds[n])
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for meta, value in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.save(os.path.join(out, "expected_" + meta.name + ".npy"), value)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name", nargs="?", choices=sorted(MODELS))
    p.add_argument("out", nargs="?")
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    if a.list:
        for name, (fused, *_) in MODELS.items():
            print(name, "fused" if fused else "unfused")
        return
    if not a.name or not a.out:
        p.error("NAME and OUT_DIR are required")
    export(a.name, a.out, a.opset)


if __name__ == "__main__":
    main()
