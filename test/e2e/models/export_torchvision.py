#!/usr/bin/env python3
"""Exports a torchvision model to ONNX with a sample input and onnxruntime's
output, for the end-to-end model tests.

    export_torchvision.py resnet18 OUT_DIR [--opset 17] [--batch 1]

Weights are random (seeded): nothing is downloaded. Exits 77 (ctest's skip
code here) when torch, torchvision or onnxruntime are not installed.
"""
import argparse
import os
import sys

try:
    import numpy as np
    import onnxruntime as ort
    import torch
    import torchvision
except ImportError as e:  # optional test dependencies
    print(f"skipping: {e}")
    sys.exit(77)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--opset", type=int, default=17)
    p.add_argument("--batch", type=int, default=1)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, "model.onnx")
    torch.manual_seed(0)
    model = getattr(torchvision.models, a.model)(weights=None).eval()
    x = torch.randn(a.batch, 3, 224, 224)
    if not os.path.exists(path):
        torch.onnx.export(model, (x,), path, input_names=["input"],
                          output_names=["output"], opset_version=a.opset, dynamo=False)
    np.save(os.path.join(a.out, "input.npy"), x.numpy())
    sess = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    (y,) = sess.run(None, {"input": x.numpy()})
    np.save(os.path.join(a.out, "expected_output.npy"), y)
    print(f"{path}: opset {a.opset}, output {y.shape}, onnxruntime {ort.__version__}")


if __name__ == "__main__":
    main()
