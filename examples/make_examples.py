#!/usr/bin/env python3
"""Makes the bundled example models and their reference outputs.

Needs torch (to build and export the models) and onnxruntime (an independent
implementation, for the reference outputs); neither is needed to run Kiln.

    python3 examples/make_examples.py      # rewrites examples/{cnn,transformer}/
"""
import math
import os

import numpy as np
import onnxruntime as ort
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


class SmallCNN(nn.Module):
    """conv/bn/relu/pool, an Inception-style concat, then a linear head."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16),
                                  nn.ReLU(), nn.MaxPool2d(2))
        self.branch1 = nn.Conv2d(16, 16, 1)
        self.branch3 = nn.Sequential(nn.Conv2d(16, 8, 1), nn.ReLU(),
                                     nn.Conv2d(8, 16, 3, padding=1))
        self.branch_pool = nn.Sequential(nn.AvgPool2d(3, stride=1, padding=1),
                                         nn.Conv2d(16, 8, 1))
        self.bn = nn.BatchNorm2d(40)
        self.head = nn.Linear(40, 10)

    def forward(self, x):
        x = self.stem(x)
        x = torch.cat([self.branch1(x), self.branch3(x), self.branch_pool(x)], dim=1)
        x = F.relu(self.bn(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.head(x)


class TransformerBlock(nn.Module):
    """Pre-norm block with explicit attention: q@k^T/sqrt(d) + mask, softmax, @v."""

    def __init__(self, dim=64, heads=4, seq=16):
        super().__init__()
        self.heads, self.dim = heads, dim
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.q, self.k, self.v = (nn.Linear(dim, dim) for _ in range(3))
        self.proj = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))
        causal = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        self.register_buffer("mask", causal)

    def forward(self, x):
        b, s, d = x.shape
        h = self.ln1(x)
        split = lambda t: t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2)
        q, k, v = split(self.q(h)), split(self.k(h)), split(self.v(h))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads) + self.mask
        attn = torch.softmax(scores, dim=-1) @ v
        x = x + self.proj(attn.transpose(1, 2).reshape(b, s, d))
        return x + self.mlp(self.ln2(x))


def export(name, model, example, input_names, output_names):
    folder = os.path.join(HERE, name)
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    model.eval()
    torch.onnx.export(model, (example,), path, input_names=input_names,
                      output_names=output_names, opset_version=OPSET, dynamo=False)
    np.save(os.path.join(folder, input_names[0] + ".npy"), example.numpy())
    session = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    outputs = session.run(None, {input_names[0]: example.numpy()})
    for out_name, value in zip(output_names, outputs):
        np.save(os.path.join(folder, "expected_" + out_name + ".npy"), value)
    print(f"{path}: {os.path.getsize(path)} bytes, outputs "
          f"{[o.shape for o in outputs]} (onnxruntime {ort.__version__})")


def main():
    torch.manual_seed(0)
    cnn = SmallCNN()
    # Non-trivial batch-norm statistics, so folding them is actually tested.
    for m in cnn.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
            m.weight.data.uniform_(0.5, 1.5)
            m.bias.data.uniform_(-0.2, 0.2)
    export("cnn", cnn, torch.randn(1, 3, 32, 32), ["image"], ["logits"])
    export("transformer", TransformerBlock(), torch.randn(1, 16, 64), ["tokens"], ["hidden"])


if __name__ == "__main__":
    main()
