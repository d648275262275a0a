#!/usr/bin/env python3
"""The torch side of benchmarks/run.py's .pt2 rows, one step per process.

    torch_peers.py export   MODEL WORK   model.pt2 (torch.export.save),
                                         model.onnx, input.npy, expected.npy
    torch_peers.py inductor MODEL WORK THREADS REPEAT
                                         torch.compile (CPU, default mode)
    torch_peers.py aoti     MODEL WORK   aoti_compile_and_package of the
                                         exported program -> aoti.pt2
    torch_peers.py aoti_run MODEL WORK THREADS REPEAT
                                         aoti_load_package + runs

Each timing step prints one JSON line: compile_s (the first call for
torch.compile, which compiles then), load_s, median_ms and rss_mb (VmHWM).
MODEL is resnet18 (batch 1, 224x224) or bert4 (a 4-layer BERT-base-style
encoder, seq 128), the same weights as run.py's ONNX rows.
"""
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def model_and_input(name):
    import run  # the ONNX rows' models and weights
    torch.manual_seed(0)
    torch.backends.mha.set_fastpath_enabled(False)
    if name == "resnet18":
        import torchvision
        model = torchvision.models.resnet18(weights=None)
        run.realistic_weights(model)
        x = torch.randn(1, 3, 224, 224)
    elif name == "bert4":
        import torch.nn as nn
        d = 768
        layer = nn.TransformerEncoderLayer(d, 12, 4 * d, dropout=0.0,
                                           activation="gelu",
                                           batch_first=True)
        model = nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)
        run.realistic_weights(model)
        g = torch.Generator().manual_seed(1)
        with torch.no_grad():
            for m in model.modules():
                if isinstance(m, nn.MultiheadAttention):
                    m.in_proj_weight.normal_(0, d ** -0.5, generator=g)
        x = torch.randn(1, 128, d)
    else:
        raise ValueError(name)
    return model.eval(), x


def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed(fn, x, repeat):
    with torch.no_grad():
        for _ in range(3):
            fn(x)
        times = []
        for _ in range(repeat):
            t = time.perf_counter()
            fn(x)
            times.append((time.perf_counter() - t) * 1e3)
    return float(np.median(times))


def main():
    step, name, work = sys.argv[1:4]
    model, x = model_and_input(name)
    if step == "export":
        import run
        with torch.no_grad():
            ep = torch.export.export(model, (x,))
            torch.export.save(ep, os.path.join(work, "model.pt2"))
            run.torch_export(model, (x,), os.path.join(work, "model.onnx"))
            np.save(os.path.join(work, "input.npy"), x.numpy())
            np.save(os.path.join(work, "expected.npy"), model(x).numpy())
        return
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    repeat = int(sys.argv[5]) if len(sys.argv) > 5 else 20
    torch.set_num_threads(threads)
    if step == "inductor":
        compiled = torch.compile(model)
        with torch.no_grad():
            t = time.perf_counter()
            compiled(x)
            compile_s = time.perf_counter() - t
        print(json.dumps({"compile_s": compile_s,
                          "median_ms": timed(compiled, x, repeat),
                          "rss_mb": rss_mb()}))
    elif step == "aoti":
        with torch.no_grad():
            ep = torch.export.export(model, (x,))
            t = time.perf_counter()
            torch._inductor.aoti_compile_and_package(
                ep, package_path=os.path.join(work, "aoti.pt2"))
        print(json.dumps({"compile_s": time.perf_counter() - t}))
    elif step == "aoti_run":
        t = time.perf_counter()
        loaded = torch._inductor.aoti_load_package(
            os.path.join(work, "aoti.pt2"))
        load_s = time.perf_counter() - t
        with torch.no_grad():
            got = loaded(x)
        expected = np.load(os.path.join(work, "expected.npy"))
        error = float(np.abs(got.numpy() - expected).max() /
                      np.abs(expected).max())
        print(json.dumps({"load_s": load_s, "error": error,
                          "median_ms": timed(loaded, x, repeat),
                          "rss_mb": rss_mb()}))
    else:
        raise ValueError(step)


if __name__ == "__main__":
    main()
