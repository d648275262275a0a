#!/usr/bin/env python3
"""Updates test/e2e/onnx_xfail.txt from a ctest log of the ONNX tests.

    cd build && ctest -L onnx -j2 --output-on-failure > /tmp/onnx.log
    scripts/onnx-xfail-update.py /tmp/onnx.log test/e2e/onnx_xfail.txt

Removes the lines of tests that now pass ("UNEXPECTED PASS") and prints every
failing test that is not listed (a regression to fix, or, after review, to
list with its reason via --add).
"""
import re
import sys

log, path = sys.argv[1], sys.argv[2]
add = "--add" in sys.argv
passed_now, new_failures, reason, current = set(), [], {}, None
for line in open(log, errors="replace"):
    m = re.search(r"Test +#\d+: (?:aarch64\.)?onnx\.([\w.-]+)\.(test_\S+) \.+\**(Passed|Failed)", line)
    if m:
        current = f"{m.group(1)}/{m.group(2)}"
        continue
    if not current:
        continue
    if line.startswith("UNEXPECTED PASS: "):
        passed_now.add(current)
    elif line.startswith("FAIL: "):
        new_failures.append(current)
    elif line.startswith("error: ") and current not in reason:
        text = re.sub(r" at node '[^']*'( \(\w+\))?", "", line[7:].strip())
        reason[current] = re.sub(r"^unsupported ONNX op '(\w+)' \(opset \d+\)", r"unsupported op \1", text)[:120]
    elif "expect" in line and "FAIL" in line and current not in reason:
        reason[current] = "wrong results"

lines = [l for l in open(path) if l.split()[:1] and l.split()[0] in passed_now] 
kept = [l for l in open(path) if not (l.split()[:1] and l.split()[0] in passed_now)]
for t in sorted(set(new_failures)):
    print(f"NEW FAILURE {t}: {reason.get(t, 'fails')}")
    if add:
        kept.append(f"{t:<60} {reason.get(t, 'fails')}\n")
open(path, "w").writelines(kept)
print(f"removed {len(lines)} lines for tests that now pass; {len(set(new_failures))} unlisted failures")
