#!/usr/bin/env python3
"""Compiles a model with --report and checks the report against the
expect.json written next to it by export_graph_models.py: each counter
"==N" exactly or ">=N" at least; a kernel list whose entries name the ONNX
nodes they cover, one kernel covering each "kernels_covering" node list;
and, when attention was fused, a kernel (the attention
loop nest) covering the fused nodes.

    check_report.py KILN MODEL_DIR WORK_DIR
"""
import json
import os
import subprocess
import sys

kiln, model_dir, work = sys.argv[1:4]
os.makedirs(work, exist_ok=True)
report_path = os.path.join(work, "report.json")
env = dict(os.environ, KILN_LOGS="fusion")
proc = subprocess.run([kiln, "compile", os.path.join(model_dir, "model.onnx"),
                       "-o", os.path.join(work, "report-check.so"),
                       "--report=" + report_path], env=env,
                      stderr=subprocess.PIPE, text=True)
sys.stderr.write(proc.stderr)
if proc.returncode != 0:
    sys.exit("check_report: compile failed")
with open(report_path) as f:
    report = json.load(f)
with open(os.path.join(model_dir, "expect.json")) as f:
    expect = json.load(f)

failures = []
covering = expect.pop("kernels_covering", [])
for counter, want in expect.items():
    got = report.get(counter)
    op, n = want[:2], int(want[2:])
    ok = got is not None and (got == n if op == "==" else got >= n)
    print(f"check_report: {counter} = {got} (want {want})"
          f"{'' if ok else '  <-- FAIL'}")
    if not ok:
        failures.append(counter)

kernels = report.get("kernels", [])
print(f"check_report: {len(kernels)} kernels")
if not kernels:
    failures.append("kernels (empty)")
for k in kernels:
    if not isinstance(k.get("kernel"), str) or \
            not isinstance(k.get("onnx_nodes"), list):
        failures.append(f"malformed kernel entry {k}")
for nodes in covering:
    found = [k["kernel"] for k in kernels
             if set(nodes) <= set(k.get("onnx_nodes", []))]
    print(f"check_report: kernel covering {nodes}: {found or 'none'}")
    if not found:
        failures.append(f"no kernel covers {nodes}")
if report.get("attention_fused", 0) > 0 and not any(
        k["kernel"].endswith(("for", "forall", "parallel")) and len(k["onnx_nodes"]) >= 3
        for k in kernels):
    failures.append("no attention kernel covering its ONNX nodes")
if failures:
    sys.exit("check_report: FAILED: " + ", ".join(failures))
print("check_report: ok")
