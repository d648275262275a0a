#!/usr/bin/env python3
"""NCHW vs NHWC convolutions on this machine, in GFLOP/s.

    benchmarks/conv_layouts.py [--build build] [--threads 2] [--repeat 20]
                               [--rounds 2] [--work /tmp/kiln-conv-layouts]
                               [--only conv3x3_64_56x56,dw3x3_32_112x112]

The same convolutions (ResNet-18/-50 3x3, 1x1 and 7x7-stem shapes,
MobileNetV2 depthwise 3x3s; batch 1, zero padding through tensor.pad, a
constant filter, an f32 input) are written as hand-written linalg in both
layouts: conv_2d_nchw_fchw / depthwise_conv_2d_nchw_chw (the path the ONNX
importer takes today: im2col into panels, or plain loops for depthwise) and
conv_2d_nhwc_hwcf / depthwise_conv_2d_nhwc_hwc (kiln-tile-nhwc-convolutions).
The hidden Catch2 case "[.conv_bench]" of kiln_backend_tests compiles them
into artifacts; each is then timed with `kiln bench` (median of --repeat runs
after warm-up; --stat min takes its fastest run instead, steadier when other
work loads the machine), the two layouts alternating for --rounds rounds,
the best figure per layout kept. GFLOP/s counts 2 flops per multiply-add of
the convolution (padding taps included).

Only the Kiln build is needed. Not part of the tests (timings are not tests).
"""
import argparse
import os
import re
import subprocess
import sys


def bench(kiln, artifact, threads, repeat, stat):
    out = subprocess.run(
        [kiln, "bench", artifact, "--threads", str(threads), "--repeat",
         str(repeat)], check=True, capture_output=True, text=True).stdout
    match = re.search(stat + r" ([0-9.]+) ms", out)
    if not match:
        sys.exit(f"unexpected kiln bench output for {artifact}:\n{out}")
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", default="/tmp/kiln-conv-layouts")
    parser.add_argument("--only", default="")
    parser.add_argument("--stat", choices=("median", "min"), default="median")
    args = parser.parse_args()

    os.makedirs(args.work, exist_ok=True)
    tests = os.path.join(args.build, "bin", "kiln_backend_tests")
    kiln = os.path.join(args.build, "bin", "kiln")
    subprocess.run([tests, "[.conv_bench]"], check=True,
                   env={**os.environ, "KILN_CONV_BENCH_DIR": args.work},
                   stdout=subprocess.DEVNULL)
    cases = []
    with open(os.path.join(args.work, "manifest.txt")) as manifest:
        for line in manifest:
            name, flops = line.split()
            cases.append((name, int(flops)))
    only = set(filter(None, args.only.split(",")))
    if only:
        cases = [c for c in cases if c[0] in only]

    print(f"{'convolution':<28}{'NCHW ms':>9}{'GFLOP/s':>9}"
          f"{'NHWC ms':>9}{'GFLOP/s':>9}{'speed-up':>10}")
    for name, flops in cases:
        best = {}
        for _ in range(args.rounds):
            for layout in ("nchw", "nhwc"):
                ms = bench(kiln, os.path.join(args.work, f"{name}_{layout}.so"),
                           args.threads, args.repeat, args.stat)
                best[layout] = min(best.get(layout, ms), ms)
        gflops = {k: flops / (v * 1e6) for k, v in best.items()}
        print(f"{name:<28}{best['nchw']:>9.3f}{gflops['nchw']:>9.1f}"
              f"{best['nhwc']:>9.3f}{gflops['nhwc']:>9.1f}"
              f"{best['nchw'] / best['nhwc']:>9.2f}x", flush=True)


if __name__ == "__main__":
    main()
