"""Models the symbolic-dim tests export with torch.onnx (dynamic_axes):
a GPT-2 style block (causal mask built from the sequence length), the same
block with GPT-2's mask (a slice of a registered triangle), a BERT-style
encoder, a small CNN and a GRU / bidirectional LSTM with a linear head,
and the export and `kiln run` helpers. Shared by
check_symbolic.py (CPU) and check_symbolic_gpu.py (GPU targets)."""
import math
import os
import subprocess

import numpy as np
import torch
import torch.nn as nn


def export(work, name, model, args, names, axes):
    """torch.onnx export (opset 17, dynamic_axes) to WORK/NAME.onnx."""
    path = os.path.join(work, name + ".onnx")
    torch.onnx.export(model.eval(), args, path, input_names=names,
                      output_names=["out"], dynamic_axes=axes,
                      opset_version=17, dynamo=False)
    return path


def run(kiln, work, artifact, inputs, expected=None, tag=""):
    """kiln run with .npy inputs (and the expected output "out", within
    1e-4); returns (returncode, output text)."""
    cmd = [kiln, "run", artifact]
    for name, value in inputs.items():
        file = os.path.join(work, f"{tag}_{name}.npy")
        np.save(file, value)
        cmd += ["--input", f"{name}={file}"]
    if expected is not None:
        file = os.path.join(work, f"{tag}_expected.npy")
        np.save(file, expected)
        cmd += ["--expect", f"out={file}", "--atol", "1e-4", "--rtol", "1e-4"]
    done = subprocess.run(cmd, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


class GptBlock(nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.h = h
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)
        self.o = nn.Linear(d, d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
        heads = lambda z: z.view(b, t, self.h, d // self.h).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool))
        att = att.masked_fill(~causal, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(y)
        return x + self.mlp(self.ln(x))


class Gpt2Block(GptBlock):
    """GPT-2's export: the causal mask sliced from a registered buffer with
    bounds computed from the sequence length."""

    def __init__(self, d=64, h=4):
        super().__init__(d, h)
        causal = torch.tril(torch.ones(512, 512, dtype=torch.bool))
        self.register_buffer("causal", causal.view(1, 1, 512, 512))

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).split(d, dim=2)
        heads = lambda z: z.view(b, t, self.h, d // self.h).transpose(1, 2)
        q, k, v = heads(q), heads(k), heads(v)
        att = q @ k.transpose(-2, -1) / math.sqrt(d // self.h)
        kl, ql = k.shape[-2], q.shape[-2]
        mask = self.causal[:, :, kl - ql:kl, :kl]
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.o(y)
        return x + self.mlp(self.ln(x))


class Encoder(nn.Module):
    """BERT-style: embeddings, post-norm attention with the padding mask as
    an additive [b, 1, 1, t] bias, GELU MLP."""

    def __init__(self, d=64, h=4, vocab=100):
        super().__init__()
        self.h = h
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(512, d)
        self.ln0, self.ln1, self.ln2 = (nn.LayerNorm(d) for _ in range(3))
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(),
                                 nn.Linear(4 * d, d))

    def forward(self, ids, mask):
        b, t = ids.shape
        positions = torch.arange(t).unsqueeze(0)
        x = self.ln0(self.tok(ids) + self.pos(positions))
        d = x.shape[-1]
        heads = lambda z: z.reshape(b, t, self.h, d // self.h).permute(0, 2, 1, 3)
        q, k, v = heads(self.q(x)), heads(self.k(x)), heads(self.v(x))
        bias = (1.0 - mask[:, None, None, :].to(x.dtype)) * -10000.0
        att = (q @ k.transpose(-1, -2) / math.sqrt(d // self.h) + bias)
        y = (att.softmax(-1) @ v).permute(0, 2, 1, 3).reshape(b, t, d)
        x = self.ln1(x + self.o(y))
        return self.ln2(x + self.mlp(x))


class SmallCnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
            nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10))

    def forward(self, x):
        return self.body(x)


class Recurrent(nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn = (nn.GRU(8, 16, batch_first=True) if kind == "gru" else
                    nn.LSTM(8, 16, batch_first=True, bidirectional=True))
        self.head = nn.Linear(self.rnn.hidden_size *
                              (2 if self.rnn.bidirectional else 1), 4)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)
