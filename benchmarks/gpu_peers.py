#!/usr/bin/env python3
"""Times the torch peer of each GPU speed row (benchmarks/gpu_models.py) on
the GPU: torch.matmul (cuBLAS) for gemm:N:DTYPE, the flash backend of
scaled_dot_product_attention for attention:B:H:S:D:CAUSAL:DTYPE. Median
milliseconds of CUDA-event-timed runs, inputs on the device.

    gpu_peers.py MODELS_DIR [NAME...]
                                 prints "NAME MS TFLOPS" per row, or for
                                 a whole-model row (model:NAME, from
                                 benchmarks/gpu_model_rows.py) "NAME
                                 EAGER_MS COMPILED_MS" with the row's
                                 torch.compile mode
"""
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "scripts"))
import gpu_check_torch  # noqa: E402 (the shared timing)


def median_ms(fn):
    return gpu_check_torch.median_ms(fn, runs=20, warmup=3)


def flops(peer):
    kind, *args = peer.split(":")
    if kind == "model":
        return None
    if kind == "gemm":
        n = int(args[0])
        return 2.0 * n ** 3
    b, h, s, d, causal = map(int, args[:5])
    total = 4.0 * b * h * s * s * d
    return total / 2 if causal else total


def workload(peer):
    kind, *args = peer.split(":")
    if kind == "gemm":
        n, dtype = int(args[0]), args[1]
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        t = torch.bfloat16 if dtype == "bf16" else torch.float32
        a = torch.randn(n, n, device="cuda", dtype=t)
        b = torch.randn(n, n, device="cuda", dtype=t)
        return lambda: torch.matmul(a, b)
    b, h, s, d, causal = map(int, args[:5])
    q, k, v = (torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
               for _ in range(3))
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return F.scaled_dot_product_attention(q, k, v,
                                                  is_causal=bool(causal))
    return run


def model_times(name, precision, mode):
    """Eager and torch.compile(mode) median ms of a whole-model row
    (benchmarks/gpu_model_rows.py), under autocast at bf16/fp16."""
    import gpu_model_rows
    module, inputs = gpu_model_rows.make(name)
    args = [gpu_model_rows.example(shape, n).cuda() for n, shape in inputs]
    return gpu_check_torch.time_module(module.cuda(), args, precision, mode,
                                       runs=20, warmup=3)


def main():
    root, only = sys.argv[1], set(sys.argv[2:])
    for name in sorted(os.listdir(root)):
        if only and name not in only:
            continue
        spec = os.path.join(root, name, "spec")
        if not os.path.exists(spec):
            continue
        peer, precision, *mode = open(spec).read().split()
        try:
            if peer.startswith("model:"):
                eager, compiled = model_times(peer[6:], precision, mode[0])
                print(f"{name} {eager:.4f} {compiled:.4f}", flush=True)
                continue
            ms = median_ms(workload(peer))
            print(f"{name} {ms:.4f} {flops(peer) / ms / 1e9:.1f}", flush=True)
        except Exception as e:  # a failed peer leaves its row's cell empty
            print(f"{name} - - ({type(e).__name__}: {e})", flush=True)
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
