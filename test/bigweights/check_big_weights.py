#!/usr/bin/env python3
"""Weights beyond 2 GB: compile and run a model with SIZE_MB of weights.

  check_big_weights.py KILN LIBKILN_RT WORK_DIR [SIZE_MB]   (default 3072)

Makes a chain of [4096, 4096] f32 MatMuls whose weights are ONNX external
data (make_model.py), compiles it with `kiln compile` and checks:
  - the compile's peak RSS is at most 1.5x the weights (they are written
    straight into the artifact, never through LLVM IR constants);
  - the artifact holds them in a `.kiln.weights` section that no segment
    loads, page-aligned in the file;
  - two sessions of the loaded model give numpy's float64 result (within
    1e-3 relative + 1e-4 absolute) and the same bytes as each other, while
    the process's RSS holds the weights once (the runtime maps them, it
    does not copy them per session).
Skips (exit 77) when the machine lacks the memory or disk for it. Prints
the figures docs/reliability.md records.
"""
import ctypes
import os
import shutil
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model  # noqa: E402

SKIP = 77
GIB = 1 << 30


def mem_available():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 0


def rss_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def compile_model(kiln, model, artifact):
    """Runs kiln compile; returns (seconds, peak RSS bytes)."""
    start = time.monotonic()
    proc = subprocess.Popen([kiln, "compile", model, "-o", artifact],
                            stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - start
    err = proc.stderr.read().decode()
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"FAIL: kiln compile exited with "
                 f"{os.waitstatus_to_exitcode(status)}:\n{err}")
    return seconds, usage.ru_maxrss * 1024


def weights_section(path):
    """(offset, size, flags) of .kiln.weights, read from the section
    headers."""
    with open(path, "rb") as f:
        header = f.read(64)
        assert header[:4] == b"\x7fELF" and header[4] == 2, "not ELF64"
        shoff, = struct.unpack_from("<Q", header, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", header, 0x3A)
        f.seek(shoff)
        table = f.read(shentsize * shnum)
        sections = [struct.unpack_from("<IIQQQQIIQQ", table, i * shentsize)
                    for i in range(shnum)]
        names = sections[shstrndx]
        f.seek(names[4])
        strtab = f.read(names[5])
    for s in sections:
        name = strtab[s[0]:strtab.index(b"\0", s[0])].decode()
        if name == ".kiln.weights":
            return s[4], s[5], s[2]
    return None


RUN_TWO_SESSIONS = r'''
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
P, S = ctypes.c_void_p, ctypes.c_size_t
lib.kiln_last_error.restype = ctypes.c_char_p
lib.kiln_tensor_data.restype = P
lib.kiln_tensor_data.argtypes = [P]
lib.kiln_tensor_destroy.argtypes = [P]
lib.kiln_session_destroy.argtypes = [P]
lib.kiln_model_free.argtypes = [P]
lib.kiln_model_load.argtypes = [ctypes.c_char_p, ctypes.POINTER(P)]
lib.kiln_session_create.argtypes = [P, P, ctypes.POINTER(P)]
lib.kiln_tensor_wrap.argtypes = [ctypes.c_int, ctypes.c_int32,
                                 ctypes.POINTER(ctypes.c_int64), P, S,
                                 ctypes.POINTER(P)]
lib.kiln_session_run.argtypes = [P, P, S, ctypes.POINTER(P), S]
def check(status, what):
    if status != 0:
        sys.exit(f"FAIL: {what}: {lib.kiln_last_error().decode()}")
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
x = np.load(sys.argv[3])
expected = np.load(sys.argv[4])
before = rss()
model = ctypes.c_void_p()
check(lib.kiln_model_load(sys.argv[2].encode(), ctypes.byref(model)), "load")
class Named(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("tensor", ctypes.c_void_p)]
shape = (ctypes.c_int64 * 2)(*x.shape)
tensor = ctypes.c_void_p()
check(lib.kiln_tensor_wrap(1, 2, shape, x.ctypes.data, x.nbytes,
                           ctypes.byref(tensor)), "wrap")
named = Named(b"x", tensor)
results = []
sessions = []
for s in range(2):
    session = ctypes.c_void_p()
    check(lib.kiln_session_create(model, None, ctypes.byref(session)),
          "session")
    sessions.append(session)
for session in sessions:
    out = (ctypes.c_void_p * 1)()
    check(lib.kiln_session_run(session, ctypes.addressof(named), 1, out, 1),
          "run")
    y = np.empty(expected.shape, np.float32)
    ctypes.memmove(y.ctypes.data, lib.kiln_tensor_data(out[0]), y.nbytes)
    lib.kiln_tensor_destroy(out[0])
    results.append(y)
grown = rss() - before
error = np.abs(results[0] - expected)
bound = 1e-4 + 1e-3 * np.abs(expected)
if not np.all(error <= bound):
    sys.exit(f"FAIL: max abs error {error.max():.3g} vs numpy")
if results[0].tobytes() != results[1].tobytes():
    sys.exit("FAIL: the two sessions disagree")
for session in sessions:
    lib.kiln_session_destroy(session)
lib.kiln_model_free(model)
print(f"{grown} {error.max():.3g}")
'''


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kiln, runtime, work = sys.argv[1:4]
    size_mb = int(sys.argv[4]) if len(sys.argv) > 4 else 3072
    need = size_mb << 20
    os.makedirs(work, exist_ok=True)
    free_disk = shutil.disk_usage(work).free
    if mem_available() < 2 * need + 2 * GIB or free_disk < 2.2 * need + GIB:
        print(f"skipped: {size_mb} MB of weights need "
              f"{(2 * need + 2 * GIB) / GIB:.1f} GB of available memory and "
              f"{(2.2 * need + GIB) / GIB:.1f} GB of disk; this machine has "
              f"{mem_available() / GIB:.1f} GB and {free_disk / GIB:.1f} GB")
        sys.exit(SKIP)
    shutil.rmtree(work)
    os.makedirs(work)
    try:
        weights = make_model.make(work, size_mb)
        model = os.path.join(work, "model.onnx")
        artifact = os.path.join(work, "model.so")
        seconds, peak = compile_model(kiln, model, artifact)
        ratio = peak / weights
        print(f"compile: {weights / GIB:.2f} GiB of weights in {seconds:.1f} s,"
              f" peak RSS {peak / GIB:.2f} GiB ({ratio:.2f}x the weights)")
        if ratio > 1.5:
            sys.exit(f"FAIL: peak RSS {ratio:.2f}x the weights, over 1.5x")

        section = weights_section(artifact)
        if not section:
            sys.exit("FAIL: no .kiln.weights section")
        offset, size, flags = section
        print(f"artifact: {os.path.getsize(artifact) / GIB:.2f} GiB, "
              f".kiln.weights at offset {offset}, {size} bytes, flags {flags}")
        if flags & 0x2:  # SHF_ALLOC
            sys.exit("FAIL: .kiln.weights is loaded by dlopen (SHF_ALLOC)")
        if size < weights or offset % 4096:
            sys.exit("FAIL: .kiln.weights too small or not page-aligned")

        run = subprocess.run(
            [sys.executable, "-c", RUN_TWO_SESSIONS, runtime, artifact,
             os.path.join(work, "x.npy"), os.path.join(work, "y.npy")],
            capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"FAIL: the two-session run exited with "
                     f"{run.returncode}: {run.stdout}{run.stderr}")
        grown, error = run.stdout.split()
        grown = int(grown)
        print(f"run: two sessions agree, max abs error {error} vs numpy; "
              f"RSS grew {grown / GIB:.2f} GiB "
              f"({grown / weights:.2f}x the weights)")
        if grown > 1.3 * weights:
            sys.exit("FAIL: the sessions hold more than one copy of the "
                     "weights")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("PASS")


if __name__ == "__main__":
    main()
