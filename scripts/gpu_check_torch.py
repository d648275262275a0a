#!/usr/bin/env python3
"""Times the torch version of a gpu-check model on the GPU: eager and
torch.compile (default mode), median milliseconds over 100 runs with CUDA
events, inputs and outputs on the device. The model is rebuilt exactly as
its export defines it (same module and shapes; the weights need not
match, only the work).

    gpu_check_torch.py SOURCE MODEL_DIR [PRECISION]
        prints "EAGER_MS COMPILE_MS"; PRECISION tf32 allows TF32 matmuls,
        bf16/fp16 run under torch.autocast (as --gpu-precision does)
    gpu_check_torch.py --bundle BUNDLE
        every model of a gpu-check bundle in one process (reads each
        model's `source` and `precision`): "NAME EAGER_MS COMPILE_MS" lines

SOURCE is the bundle's `source` entry: cnn, transformer, a graph model
(test/e2e/models/export_graph_models.py), attention:NAME, resnet18.
"""
import contextlib
import os
import sys
import types

import numpy as np
import torch

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(root, "test", "e2e", "models"))
sys.path.insert(0, os.path.join(root, "examples"))


def build(source):
    """The module and its forward's input names, in order."""
    # The export scripts import onnxruntime, which the GPU machine may lack;
    # only their module definitions are used here.
    for name in ("onnxruntime", "onnx"):
        try:
            __import__(name)
        except ImportError:
            sys.modules[name] = types.ModuleType(name)
    torch.manual_seed(0)
    if source == "resnet18":
        import torchvision
        return torchvision.models.resnet18(weights=None), ["input"]
    if source.startswith("attention:"):
        import export_attention
        _, make, names, _ = export_attention.MODELS[source.split(":", 1)[1]]
        return make(), names
    if source == "cnn":
        import make_examples
        return make_examples.SmallCNN(), ["image"]
    if source == "transformer":
        import make_examples
        return make_examples.TransformerBlock(), ["tokens"]
    import export_graph_models
    make, names, _, _ = export_graph_models.MODELS[source]
    return make(), names


def median_ms(fn, runs=100, warmup=10):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, stop = torch.cuda.Event(True), torch.cuda.Event(True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return sorted(times)[len(times) // 2]


def time_module(module, inputs, precision, mode="default", **timing):
    """Eager and torch.compile(mode) median milliseconds of `module` on
    device `inputs` at `precision` (tf32 allows TF32 matmuls, bf16/fp16 run
    under autocast); `timing` goes to median_ms."""
    torch.backends.cuda.matmul.allow_tf32 = precision == "tf32"
    torch.backends.cudnn.allow_tf32 = precision == "tf32"
    autocast = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    context = (torch.autocast("cuda", dtype=autocast) if autocast
               else contextlib.nullcontext())
    with torch.no_grad(), context:
        eager = median_ms(lambda: module(*inputs), **timing)
        torch._dynamo.reset()
        compiled = torch.compile(module, mode=mode)
        return eager, median_ms(lambda: compiled(*inputs), **timing)


def time_model(source, model_dir, precision):
    """Eager and torch.compile median milliseconds of one model."""
    model, names = build(source)
    inputs = [torch.from_numpy(np.load(os.path.join(model_dir, n + ".npy")))
              .cuda() for n in names]
    return time_module(model.eval().cuda(), inputs, precision)


def main():
    if sys.argv[1] == "--bundle":
        # One process for every model of a bundle (torch's import and
        # warm-up once): "NAME EAGER_MS COMPILE_MS" per model.
        models = os.path.join(sys.argv[2], "models")
        for name in sorted(os.listdir(models)):
            d = os.path.join(models, name)
            source = open(os.path.join(d, "source")).read().strip()
            precision = open(os.path.join(d, "precision")).read().strip()
            try:
                eager, compiled = time_model(source, d, precision)
                print(f"{name} {eager:.3f} {compiled:.3f}", flush=True)
            except Exception as e:  # the row keeps empty torch cells
                print(f"{name} - - ({type(e).__name__}: {e})", flush=True)
        return
    source, model_dir = sys.argv[1], sys.argv[2]
    precision = sys.argv[3] if len(sys.argv) > 3 else "fp32"
    eager, compiled = time_model(source, model_dir, precision)
    print(f"{eager:.3f} {compiled:.3f}")


if __name__ == "__main__":
    main()
