#!/usr/bin/env python3
"""Exports small whole models to ONNX for the graph-pass tests
(test/e2e/graph_models.cmake): a BERT-style encoder, GPT-2-style causal
blocks, an Inception-style block and a chain of concats, with inputs and
onnxruntime's outputs; `bert_opset14` is the encoder exported at opset 14,
where LayerNorm arrives decomposed (ReduceMean/Sub/Pow/.../Div/Mul/Add).

    export_graph_models.py NAME OUT_DIR     one model
    export_graph_models.py --list           names and the report counts each
                                            compile must reach

OUT_DIR gets model.onnx, one NAME.npy per input, expected_NAME.npy per
output and expect.json: report counters with the minimum (">=N") or exact
("==N") value a compile must report, and under "kernels_covering" lists of
ONNX nodes that one kernel must cover together (checked by
check_report.py). Exported
with the TorchScript exporter (dynamo=False), random weights, seed 0. Exits
77 (ctest's skip code here) when torch or onnxruntime are missing.
"""
import argparse
import json
import math
import os
import sys
import warnings

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torch.nn as nn
except ImportError as e:  # optional test dependencies
    print(f"skipping: {e}")
    sys.exit(77)


class BertLayer(nn.Module):
    """Post-norm encoder layer, separate q/k/v projections (as HF's BERT)."""

    def __init__(self, hidden, heads, ffn):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.o = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden)
        self.up = nn.Linear(hidden, ffn)
        self.down = nn.Linear(ffn, hidden)
        self.ln2 = nn.LayerNorm(hidden)

    def split(self, t):
        b, s, h = t.shape
        return t.view(b, s, self.heads, h // self.heads).transpose(1, 2)

    def forward(self, x, mask):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        s = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        p = torch.softmax(s + mask, dim=-1)
        a = (p @ v).transpose(1, 2).reshape(x.shape)
        x = self.ln1(x + self.o(a))
        return self.ln2(x + self.down(nn.functional.gelu(self.up(x))))


class Bert(nn.Module):
    def __init__(self, layers=4, hidden=256, heads=4, ffn=1024):
        super().__init__()
        self.layers = nn.ModuleList(BertLayer(hidden, heads, ffn)
                                    for _ in range(layers))

    def forward(self, x, mask):
        for layer in self.layers:
            x = layer(x, mask)
        return x


class Gpt2Block(nn.Module):
    """Pre-norm causal block; q/k/v from one packed projection (c_attn) split
    three ways, the causal mask a registered tril buffer, as GPT-2."""

    def __init__(self, hidden, heads, seq):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(hidden)
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.ln2 = nn.LayerNorm(hidden)
        self.fc = nn.Linear(hidden, 4 * hidden)
        self.proj = nn.Linear(4 * hidden, hidden)
        self.register_buffer("bias", torch.tril(torch.ones(seq, seq)))

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(self.ln1(x)).split(h, dim=2)
        q, k, v = (t.view(b, s, self.heads, h // self.heads).transpose(1, 2)
                   for t in (q, k, v))
        w = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        w = w.masked_fill(self.bias[:s, :s] == 0, float("-inf"))
        a = (torch.softmax(w, dim=-1) @ v).transpose(1, 2).reshape(b, s, h)
        x = x + self.c_proj(a)
        return x + self.proj(nn.functional.gelu(self.fc(self.ln2(x)),
                                                approximate="tanh"))


class Gpt2(nn.Module):
    def __init__(self, layers=2, hidden=128, heads=4, seq=64):
        super().__init__()
        self.blocks = nn.ModuleList(Gpt2Block(hidden, heads, seq)
                                    for _ in range(layers))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ConvRelu(nn.Sequential):
    def __init__(self, cin, cout, k):
        super().__init__(nn.Conv2d(cin, cout, k, padding=k // 2), nn.ReLU())


class Inception(nn.Module):
    """GoogLeNet-style block: three 1x1 convs on the input (merged), 3x3 and
    5x5 branches, a pooled 1x1 branch, concatenated; then the 1x1/3x3 pair
    concatenated again with the block's output (a concat of concats)."""

    def __init__(self, cin=64):
        super().__init__()
        self.b1 = ConvRelu(cin, 32, 1)
        self.b2 = nn.Sequential(ConvRelu(cin, 48, 1), ConvRelu(48, 64, 3))
        self.b3 = nn.Sequential(ConvRelu(cin, 16, 1), ConvRelu(16, 32, 5))
        self.pool = nn.MaxPool2d(3, stride=1, padding=1)
        self.b4 = ConvRelu(cin, 32, 1)
        self.tail = ConvRelu(160, 16, 3)

    def forward(self, x):
        inner = torch.cat([self.b1(x), self.b2(x)], 1)
        block = torch.cat([inner, self.b3(x), self.b4(self.pool(x))], 1)
        return self.tail(block)


class ConcatChain(nn.Module):
    """Concats whose inputs should all be computed in place: a bias-free 3-D
    Linear (a 2-D matmul between reshapes) next to a ReLU along the last
    axis, and a concat of a concat along another axis (not flattened)."""

    def __init__(self):
        super().__init__()
        self.a = nn.Linear(16, 24, bias=False)
        self.b = nn.Linear(20, 8)
        self.c0 = nn.Conv2d(4, 3, 3, padding=1)
        self.c1 = nn.Conv2d(4, 2, 1)
        self.c2 = nn.Conv2d(4, 5, 3, padding=1)

    def forward(self, x, y, img):
        lin = torch.cat([self.a(x), torch.relu(self.b(y))], -1)
        inner = torch.cat([self.c0(img), self.c1(img)], 1)
        return lin, torch.cat([inner, torch.sigmoid(self.c2(img))], 2)


# name -> (module factory, input names, input factory, expected counters)
MODELS = {
    "bert_encoder": (
        Bert, ["x", "mask"],
        lambda: [torch.randn(1, 128, 256), torch.zeros(1, 1, 1, 128)],
        {"attention_fused": "==4", "contractions_merged": ">=12",
         "kernels_covering": [
             ["/layers.0/q/MatMul", "/layers.0/k/MatMul", "/layers.0/v/MatMul"],
             ["/layers.3/MatMul", "/layers.3/Softmax", "/layers.3/MatMul_1"]]}),
    "bert_opset14": (
        Bert, ["x", "mask"],
        lambda: [torch.randn(1, 128, 256), torch.zeros(1, 1, 1, 128)],
        {"attention_fused": "==4", "norms_fused": "==8",
         "kernels_covering": [
             ["/layers.2/ln1/ReduceMean", "/layers.2/ln1/Sub",
              "/layers.2/ln1/Pow", "/layers.2/ln1/ReduceMean_1",
              "/layers.2/ln1/Add", "/layers.2/ln1/Sqrt", "/layers.2/ln1/Div",
              "/layers.2/ln1/Mul", "/layers.2/ln1/Add_1"]]}),
    "gpt2_blocks": (
        Gpt2, ["x"], lambda: [torch.randn(1, 64, 128)],
        {"attention_fused": "==2",
         "kernels_covering": [
             ["/blocks.1/MatMul", "/blocks.1/Where", "/blocks.1/Softmax",
              "/blocks.1/MatMul_1"]]}),
    "inception_block": (
        Inception, ["x"], lambda: [torch.randn(1, 64, 28, 28)],
        {"contractions_merged": ">=3", "concat_in_place": ">=4",
         "kernels_covering": [
             ["/b1/b1.0/Conv", "/b2/b2.0/b2.0.0/Conv", "/b3/b3.0/b3.0.0/Conv"]]}),
    "concat_chain": (
        ConcatChain, ["x", "y", "img"],
        lambda: [torch.randn(1, 32, 16), torch.randn(1, 32, 20),
                 torch.randn(1, 4, 10, 10)],
        {"concat_in_place": "==6"}),
}


OUTPUTS = {"concat_chain": ["lin", "outer"]}
OPSETS = {"bert_opset14": 14}


def export(name, out, opset):
    make, input_names, make_inputs, expect = MODELS[name]
    opset = opset or OPSETS.get(name, 17)
    torch.manual_seed(0)
    model = make().eval()
    inputs = make_inputs()
    os.makedirs(out, exist_ok=True)
    path = os.path.join(out, "model.onnx")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, tuple(inputs), path, input_names=input_names,
                          output_names=OUTPUTS.get(name, ["out"]),
                          opset_version=opset,
                          dynamo=False)
    feeds = {}
    for n, t in zip(input_names, inputs):
        feeds[n] = t.numpy()
        np.save(os.path.join(out, n + ".npy"), feeds[n])
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    for meta, value in zip(sess.get_outputs(), sess.run(None, feeds)):
        np.save(os.path.join(out, "expected_" + meta.name + ".npy"), value)
    with open(os.path.join(out, "expect.json"), "w") as f:
        json.dump(expect, f, indent=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("name", nargs="?", choices=sorted(MODELS))
    p.add_argument("out", nargs="?")
    p.add_argument("--opset", type=int, default=None,
                   help="default 17 (14 for bert_opset14)")
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    if a.list:
        for name, (*_, expect) in MODELS.items():
            print(name, json.dumps(expect))
        return
    if not a.name or not a.out:
        p.error("NAME and OUT_DIR are required")
    export(a.name, a.out, a.opset)


if __name__ == "__main__":
    main()
