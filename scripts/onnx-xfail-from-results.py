#!/usr/bin/env python3
"""Turns a ctest run of the ONNX backend tests into expected-failure lines.

    ctest -L onnx -j2 --output-on-failure > log.txt
    scripts/onnx-xfail-from-results.py log.txt > new-lines.txt

Prints "<set>/<test>  <reason>" for each failing test, the reason being the
first error the test printed. Used to record what fails after a change; the
list in test/e2e/onnx_xfail.txt is meant to shrink, so review before adding.
"""
import re
import sys

current, reasons, failed = None, {}, []
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"Test +#\d+: onnx\.([\w.-]+)\.(test_\S+) \.+\**(Passed|Failed)", line)
    if m:
        if m.group(3) == "Failed":
            failed.append(f"{m.group(1)}/{m.group(2)}")
        current = f"{m.group(1)}/{m.group(2)}"
        continue
    if current and current not in reasons and line.startswith("error: "):
        text = line[len("error: "):].strip()
        text = re.sub(r" at node '[^']*'( \(\w+\))?", "", text)
        text = re.sub(r"^unsupported ONNX op '(\w+)' \(opset \d+\)", r"unsupported op \1", text)
        reasons[current] = text[:120]
    if current and current not in reasons and "FAIL" in line and "expect" in line:
        reasons[current] = "wrong results"
for t in failed:
    print(f"{t:<60} {reasons.get(t, 'fails')}")
