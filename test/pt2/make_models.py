#!/usr/bin/env python3
"""Exports the .pt2 test models with torch.export and writes, next to each,
its input and torch's output as .npy (the reference Kiln is checked
against).

  make_models.py OUT_DIR [NAME...]

Each model twice: as exported (training IR: conv2d, linear, batch_norm,
relu_, add_, ...) and after run_decompositions() (core ATen: convolution,
addmm, _native_batch_norm_legit_no_training, ...), as NAME and NAME_core.
Swin only as core ATen: its raw export fills views of a tensor in place,
which Kiln refuses (pt2.errors checks the message).
"""
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Block(nn.Module):
    """A pre-norm transformer block: attention through SDPA, GELU MLP."""

    def __init__(self, dim=64, heads=4, causal=False):
        super().__init__()
        self.heads, self.causal = heads, causal
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


def torchvision_model(name):
    def make():
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        # ViT's head starts at zero: random weights, so its output says
        # something.
        if name.startswith("vit"):
            nn.init.normal_(model.heads.head.weight, std=0.02)
        return model
    return make


def image(size):
    return lambda: torch.randn(1, 3, size, size)


BOTH, CORE = ("", "_core"), ("_core",)
MODELS = {
    "mlp": (Mlp, lambda: torch.randn(3, 16), BOTH),
    "resnet18": (torchvision_model("resnet18"), image(64), BOTH),
    "block": (Block, lambda: torch.randn(2, 10, 64), BOTH),
    "block_causal": (lambda: Block(causal=True), lambda: torch.randn(2, 10, 64),
                     BOTH),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), image(64),
                           BOTH),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), image(64), BOTH),
    "convnext_tiny": (torchvision_model("convnext_tiny"), image(64), BOTH),
    "vit_b_16": (torchvision_model("vit_b_16"), image(224), BOTH),
    "swin_t": (torchvision_model("swin_t"), image(224), CORE),
}


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS)
    torch.manual_seed(0)
    for name in names:
        make, sample, forms = MODELS[name]
        model = make().eval()
        x = sample()
        with torch.no_grad():
            y = model(x)
        ep = torch.export.export(model, (x,))
        if "" in forms:
            save(out, name, ep, x, y)
        save(out, name + "_core", ep.run_decompositions(), x, y)
        print(f"{name}: {sum(p.numel() for p in model.parameters())} "
              "parameters")


def save(out, name, program, x, y):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    torch.export.save(program, os.path.join(d, "model.pt2"))
    np.save(os.path.join(d, "input.npy"), x.numpy())
    np.save(os.path.join(d, "expected.npy"), y.numpy())


if __name__ == "__main__":
    main()
