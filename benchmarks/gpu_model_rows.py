#!/usr/bin/env python3
"""The whole-model rows of issue 18 (docs/gpu-performance.md): BERT-base
(seq 512 batch 8, and seq 128 batch 1), GPT-2-small blocks (seq 1024 batch
4), ResNet-50 and ViT-B/16 (batch 32) and ResNet-18 (batch 1), as torch
modules that both sides use: `export` writes the ONNX model Kiln compiles,
benchmarks/gpu_peers.py builds the same module for torch eager and
torch.compile.

    gpu_model_rows.py OUT_DIR [NAME...]   OUT_DIR/NAME/model.onnx + spec

The weights are random blocks of 1021 values repeated through each
parameter (a different block per parameter; batch norms are identities):
the work is the same as with trained weights, and the artifacts (350 MB for
BERT-base) compress with xz to about 1 MB, so that they fit a device call.
"""
import os
import sys
import warnings

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "test", "e2e", "models"))


def bert(batch, seq):
    import export_graph_models as g
    return (g.Bert(layers=12, hidden=768, heads=12, ffn=3072),
            [("x", (batch, seq, 768)), ("mask", (batch, 1, 1, seq))])


def gpt2(batch, seq):
    import export_graph_models as g
    return (g.Gpt2(layers=12, hidden=768, heads=12, seq=seq),
            [("x", (batch, seq, 768))])


def torchvision_model(name, batch):
    import torchvision
    return (getattr(torchvision.models, name)(weights=None),
            [("x", (batch, 3, 224, 224))])


# name -> (module and input shapes, --gpu-precision, torch.compile mode).
# The peer for the large rows is mode="max-autotune", whose Triton
# autotuning takes minutes per model: more than a device call holds for
# all rows, so they use the default mode; the launch-bound row uses CUDA
# graphs (reduce-overhead) as the issue asks.
ROWS = {
    "bert_base_s512_b8": (lambda: bert(8, 512), "bf16", "default"),
    "gpt2_small_s1024_b4": (lambda: gpt2(4, 1024), "bf16", "default"),
    "resnet50_b32": (lambda: torchvision_model("resnet50", 32), "bf16",
                     "default"),
    "vit_b16_b32": (lambda: torchvision_model("vit_b_16", 32), "bf16",
                    "default"),
    "bert_base_s128_b1": (lambda: bert(1, 128), "bf16", "reduce-overhead"),
    "resnet18_b1": (lambda: torchvision_model("resnet18", 1), "bf16",
                    "reduce-overhead"),
}


def make(name):
    """The row's module (eval, periodic weights) and its input shapes."""
    torch.manual_seed(0)
    module, inputs = ROWS[name][0]()
    module = module.eval()
    with torch.no_grad():
        # Batch norms as identities, so that folding them into the
        # convolutions keeps the weights periodic (and compressible).
        for m in module.modules():
            if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
                m.weight.fill_(1.0)
                m.bias.fill_(0.0)
        norms = {id(p) for m in module.modules()
                 if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)
                 for p in m.parameters()}
        for i, p in enumerate(module.parameters()):
            if id(p) in norms:
                continue
            gen = torch.Generator().manual_seed(i)
            block = torch.randn(1021, generator=gen) * 0.02
            flat = p.view(-1)
            reps = (flat.numel() + 1020) // 1021
            flat.copy_(block.repeat(reps)[:flat.numel()])
    return module, inputs


def example(shape, name):
    # The attention mask input is additive: zeros keep every key.
    return torch.zeros(shape) if name == "mask" else torch.randn(shape)


def export(name, out):
    module, inputs = make(name)
    os.makedirs(out, exist_ok=True)
    args = tuple(example(shape, n) for n, shape in inputs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, os.path.join(out, "model.onnx"),
                          input_names=[n for n, _ in inputs],
                          output_names=["y"], opset_version=17, dynamo=False)
    _, precision, mode = ROWS[name]
    with open(os.path.join(out, "spec"), "w") as f:
        f.write(f"model:{name} {precision} {mode}\n")


def main():
    out = sys.argv[1]
    for name in sys.argv[2:] or ROWS:
        export(name, os.path.join(out, name))


if __name__ == "__main__":
    main()
