#!/usr/bin/env python3
"""Compiles a model at -O2 with --report and KILN_LOGS=layout and checks the
layout passes: the cost model chose NHWC for at least one chain, at most
MAX_CONVERSIONS layout conversions are left (the report's
layout_conversions), and the log names exactly that many. With EPILOGUES,
the report's epilogues_fused must be exactly that (elementwise consumers the
NHWC and contraction kernels applied in their register tiles).

    check_layout.py KILN MODEL.onnx WORK_DIR MAX_CONVERSIONS [EPILOGUES]
"""
import json
import os
import re
import subprocess
import sys

kiln, model, work, most = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
epilogues = int(sys.argv[5]) if len(sys.argv) > 5 else None
os.makedirs(work, exist_ok=True)
report_path = os.path.join(work, "report.json")
env = dict(os.environ, KILN_LOGS="layout")
env.pop("KILN_CONV_LAYOUT", None)
proc = subprocess.run([kiln, "compile", model, "-o",
                       os.path.join(work, "model.so"),
                       "--report=" + report_path], env=env,
                      stderr=subprocess.PIPE, text=True)
sys.stderr.write(proc.stderr)
if proc.returncode != 0:
    sys.exit("check_layout: compile failed")
with open(report_path) as f:
    report = json.load(f)

failures = []
chosen = re.findall(r"\[kiln:layout\] chain of .* -> NHWC$", proc.stderr,
                    re.MULTILINE)
left = re.findall(r"\[kiln:layout\] conversion left at '([^']*)'",
                  proc.stderr)
got = report.get("layout_conversions")
print(f"check_layout: {len(chosen)} chain(s) NHWC, layout_conversions = {got}"
      f" (want <= {most}), conversions left at {left}")
if not chosen:
    failures.append("no chain chosen NHWC")
if got is None or got > most:
    failures.append(f"layout_conversions {got} > {most}")
if got != len(left):
    failures.append(f"report says {got} conversions, the log names {len(left)}")
if epilogues is not None:
    fused = report.get("epilogues_fused")
    print(f"check_layout: epilogues_fused = {fused} (want {epilogues})")
    if fused != epilogues:
        failures.append(f"epilogues_fused {fused} != {epilogues}")
if failures:
    sys.exit("check_layout: FAIL: " + "; ".join(failures))
print("check_layout: PASS")
