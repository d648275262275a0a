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
import math
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


class Decoder(nn.Module):
    """Transposed convolutions, as a segmentation or GAN decoder has them:
    stride 2 with output_padding, groups, dilation, a 1-D one."""

    def __init__(self):
        super().__init__()
        self.up1 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1,
                                      output_padding=1)
        self.up2 = nn.ConvTranspose2d(6, 4, 3, stride=2, padding=2,
                                      output_padding=1, groups=2, dilation=2,
                                      bias=False)
        self.line = nn.ConvTranspose1d(4, 3, 4, stride=3, padding=1)

    def forward(self, x):
        y = self.up2(F.relu(self.up1(x)))
        return self.line(y.flatten(2))


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

    def forward(self, x, mask=None):
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(c, dim=-1)
        shape = (b, t, self.heads, c // self.heads)
        q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask,
                                           is_causal=self.causal)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, c))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class TinyGpt(nn.Module):
    """GPT-2's shape: token and position embeddings, causal blocks, a
    final norm and an LM head tied to the token embedding."""

    def __init__(self, vocab=100, dim=64, layers=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(32, dim)
        self.blocks = nn.ModuleList(Block(dim, causal=True)
                                    for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight

    def forward(self, idx):
        pos = torch.arange(idx.shape[1])
        x = self.wte(idx) + self.wpe(pos)
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


class TinyBert(nn.Module):
    """BERT's shape: word, position and type embeddings, a LayerNorm,
    encoder blocks attending under the padding mask, a tanh pooler."""

    def __init__(self, vocab=100, dim=64, layers=2):
        super().__init__()
        self.word = nn.Embedding(vocab, dim)
        self.position = nn.Embedding(32, dim)
        self.segment = nn.Embedding(2, dim)
        self.norm = nn.LayerNorm(dim)
        self.blocks = nn.ModuleList(Block(dim) for _ in range(layers))
        self.pooler = nn.Linear(dim, dim)

    def forward(self, ids, mask):
        pos = torch.arange(ids.shape[1])
        x = self.norm(self.word(ids) + self.position(pos) +
                      self.segment(torch.zeros_like(ids)))
        keep = mask[:, None, None, :].bool()
        for block in self.blocks:
            x = block(x, keep)
        return x, torch.tanh(self.pooler(x[:, 0]))


class Params(nn.Module):
    """Weights as the archive stores them: a non-contiguous parameter (a
    transposed view, strides (1, 8)), one at a storage offset, bf16 and f16
    parameters, a buffer, a tensor constant; two outputs."""

    def __init__(self):
        super().__init__()
        self.w_t = nn.Parameter(torch.randn(16, 8).t())
        self.offset = nn.Parameter(torch.randn(40)[8:24])
        self.w_bf16 = nn.Parameter(torch.randn(16, 16).to(torch.bfloat16))
        self.w_f16 = nn.Parameter(torch.randn(16, 16).to(torch.float16))
        self.register_buffer("shift", torch.linspace(-1, 1, 16))
        self.scale = torch.linspace(0.5, 1.5, 16)

    def forward(self, x):
        h = x @ self.w_t + self.shift
        a = (h @ self.w_bf16.float()) * self.scale
        return a, h @ self.w_f16.float() + self.offset


class Views(nn.Module):
    """Views of a tensor with a symbolic batch and sequence that a -1 or
    static sizes resolve only when the model runs."""

    def forward(self, x):
        b, s = x.shape[0], x.shape[1]
        flat = x.reshape(b, -1)  # [b, s * 8]
        rows = x.view(-1, 8)  # [b * s, 8]
        split = x.reshape(b, s, 2, -1)  # [b, s, 2, 4]
        halves = split.sum((1, 2))
        return (flat.sum(1, keepdim=True) + rows.view(b, s, 8).sum(1) +
                torch.cat([halves, -halves], 1))


class SymOps(nn.Module):
    """Arithmetic on a symbolic sequence length: the operators torch.export
    serializes for SymInts, SymFloats and SymBools, each result a scalar of
    a tensor op, with Python's // and % of negative values."""

    def forward(self, x):
        s = x.shape[1]
        y = x.sum(1)
        n = -s
        f = torch.sym_float(n)
        is_float = torch.sym_float(s)
        terms = [
            n // 3, n % 3, s % -3, (s << 2) >> 1,
            torch.sym_ite(s % 2 == 0, s ** 2, s - 1),
            torch.sym_int(is_float / 3), math.trunc(f / 4),
            f % 2.5, s ** -1, torch._sym_sqrt(s),
            torch.sym_max(s, 6), torch.sym_min(s, 6),
            torch.sym_max(f, -4.5), torch.sym_min(f / 2, -2.0),
            torch.sym_float(torch.sym_not((s >= 5) & (s <= 9) | (s == 2))),
            torch.sym_float((s < 3) | (s > 30) & (s != 33)),
            torch.sym_ite(f / 2 < -2.5, 1.0, 0.0) + torch.sym_float(f > -1.5),
            torch.sym_ite(is_float >= 7.0, 2, 3) *
            torch.sym_ite(is_float <= 7.0, 5, 7),
            torch.sym_ite(is_float == 8.0, 1, 0) +
            torch.sym_ite(is_float != 9.0, 10, 20),
        ]
        return torch.cat([y * t for t in terms], dim=1)


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
    return lambda: (torch.randn(1, 3, size, size),)


def tokens(batch, seq, vocab=100):
    return lambda: (torch.randint(0, vocab, (batch, seq)),)


def tokens_and_mask(batch, seq):
    def make():
        ids = torch.randint(0, 100, (batch, seq))
        mask = torch.ones(batch, seq, dtype=torch.int64)
        mask[1, seq - 3:] = 0  # the second sequence is padded
        return ids, mask
    return make


BOTH, CORE = ("", "_core"), ("_core",)
def masked_rows(b, t):
    torch.manual_seed(1)
    keep = torch.rand(b, 1, t, t) > 0.3
    keep[:, :, :, 0] = True
    keep[1, :, 3, :] = False
    return keep


MODELS = {
    "mlp": (Mlp, lambda: (torch.randn(3, 16),), BOTH),
    "params": (Params, lambda: (torch.randn(3, 8),), BOTH),
    "mobilenet_v2": (torchvision_model("mobilenet_v2"), image(64), BOTH),
    "decoder": (Decoder, lambda: (torch.randn(2, 8, 5, 7),), BOTH),
    "resnet18": (torchvision_model("resnet18"), image(64), BOTH),
    "block": (Block, lambda: (torch.randn(2, 10, 64),), BOTH),
    "block_causal": (lambda: Block(causal=True),
                     lambda: (torch.randn(2, 10, 64),), BOTH),
    "gpt": (TinyGpt, tokens(2, 16), BOTH),
    "bert": (TinyBert, tokens_and_mask(2, 12), BOTH),
    "mobilenet_v3_small": (torchvision_model("mobilenet_v3_small"), image(64),
                           BOTH),
    "efficientnet_b0": (torchvision_model("efficientnet_b0"), image(64), BOTH),
    "convnext_tiny": (torchvision_model("convnext_tiny"), image(64), BOTH),
    "vit_b_16": (torchvision_model("vit_b_16"), image(224), BOTH),
    "swin_t": (torchvision_model("swin_t"), image(224), CORE),
    # A boolean mask that masks query 3 of the second sequence everywhere:
    # torch's decomposition answers 0 on that row (its guarded softmax).
    "block_masked": (Block, lambda: (torch.randn(2, 10, 64),
                                     masked_rows(2, 10)), CORE),
}


# Exported with a symbolic batch (torch.export.Dim), compiled once, run at
# each of these batch sizes (runs/N/) against torch.
DYNAMIC = {
    "mlp_dyn": (Mlp, lambda b: (torch.randn(b, 16),), (1, 3, 7)),
    "resnet18_dyn": (torchvision_model("resnet18"),
                     lambda b: (torch.randn(b, 3, 64, 64),), (1, 2, 5)),
    # Transposed convolutions over a symbolic batch.
    "decoder_dyn": (Decoder, lambda b: (torch.randn(b, 8, 5, 7),), (1, 3)),
    # A transformer block with a symbolic batch and sequence: its views
    # keep both symbols in place.
    "block_dyn": (Block, lambda s: (torch.randn(*(s if isinstance(s, tuple)
                                                  else (2, s + 6)), 64),),
                  ((1, 1), (1, 7), (3, 64), (2, 200))),
    "views_dyn": (Views, lambda s: (torch.randn(*(s if isinstance(s, tuple)
                                                  else (2, s + 6)), 8),),
                  ((1, 1), (3, 5), (2, 33))),
    # Every size-arithmetic operator, at sizes that take each branch.
    "symops_dyn": (SymOps, lambda s: (torch.randn(*(s if isinstance(s, tuple)
                                                    else (2, s + 6)), 8),),
                   ((1, 1), (2, 2), (3, 5), (1, 7), (2, 9), (2, 10), (1, 33),
                    (2, 64))),
}
SEQUENCE = {"block_dyn", "symops_dyn", "views_dyn"}


def make_dynamic(out, name):
    make, sample, batches = DYNAMIC[name]
    model = make().eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    dims = {0: batch}
    if name in SEQUENCE:  # [batch, seq, ...]: both symbolic
        dims[1] = torch.export.Dim("seq", min=1, max=256)
    ep = torch.export.export(model, sample(4),
                             dynamic_shapes=(dims,))
    names = [s.arg.name for s in ep.graph_signature.input_specs
             if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
    args = sample(4)
    with torch.no_grad():
        y = model(*args)
    # As exported, and in core ATen (whose views take sizes the program
    # computes: [b * t, d]).
    forms = {name: ep, name + "_core": ep.run_decompositions()}
    for form, program in forms.items():
        save(out, form, program, names, args, (y,))
    for b in batches:
        args = sample(b)
        with torch.no_grad():
            y = model(*args)
        for form in forms:
            d = os.path.join(out, form, "runs",
                             str(b) if isinstance(b, int) else
                             "x".join(map(str, b)))
            os.makedirs(d, exist_ok=True)
            for input_name, x in zip(names, args):
                np.save(os.path.join(d, input_name + ".npy"), x.numpy())
            np.save(os.path.join(d, "expected0.npy"), y.numpy())


def main():
    out = sys.argv[1]
    names = sys.argv[2:] or list(MODELS) + list(DYNAMIC)
    torch.manual_seed(0)
    for name in names:
        if name in DYNAMIC:
            make_dynamic(out, name)
            continue
        make, sample, forms = MODELS[name]
        model = make().eval()
        args = sample()
        with torch.no_grad():
            y = model(*args)
        ys = y if isinstance(y, tuple) else (y,)
        ep = torch.export.export(model, args)
        names = [s.arg.name for s in ep.graph_signature.input_specs
                 if s.kind == torch.export.graph_signature.InputKind.USER_INPUT]
        if "" in forms:
            save(out, name, ep, names, args, ys)
        save(out, name + "_core", ep.run_decompositions(), names, args, ys)
        print(f"{name}: {sum(p.numel() for p in model.parameters())} "
              "parameters")


def save(out, name, program, names, args, ys):
    """The archive, each input as NAME.npy (names in inputs.txt) and the
    outputs in order as expected0.npy, expected1.npy, ..."""
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    torch.export.save(program, os.path.join(d, "model.pt2"))
    with open(os.path.join(d, "inputs.txt"), "w") as f:
        for input_name, x in zip(names, args):
            np.save(os.path.join(d, input_name + ".npy"), x.numpy())
            f.write(input_name + "\n")
    for i, y in enumerate(ys):
        np.save(os.path.join(d, f"expected{i}.npy"), y.numpy())


if __name__ == "__main__":
    main()
