#!/usr/bin/env python3
"""Compiles a model for HIP (gfx90a, gfx942) and checks the code objects.

From the artifact: the .kiln.gpu section is a clang offload bundle with one
code object per arch; each is an AMDGPU ELF (llvm-readelf: machine AMDGPU,
the arch in e_flags); every tiled contraction kernel (a kernel of MatMul,
Gemm or Conv nodes that stages tiles in LDS) and every flash-attention
kernel (MatMul and Softmax nodes in one kernel) disassembles to v_mfma
instructions on both archs; no kernel spills VGPRs or uses scratch; the
--report JSON and `kiln inspect` list every kernel for both archs.

usage: check_hip_assembly.py KILN MODEL.onnx WORK_DIR LLVM_TOOLS_DIR [flags...]
"""
import json
import os
import re
import shutil
import struct
import subprocess
import sys

ARCHS = ["gfx90a", "gfx942"]
# ONNX node names (torch's exports: /MatMul, /Conv; ours: matmul).
CONTRACTIONS = re.compile(r"matmul|gemm|conv", re.I)
SOFTMAX = re.compile(r"softmax", re.I)


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def unbundle(data):
    """The code objects of a clang offload bundle, by arch."""
    magic = b"__CLANG_OFFLOAD_BUNDLE__"
    assert data[: len(magic)] == magic, "not an offload bundle"
    (count,) = struct.unpack_from("<Q", data, len(magic))
    at, objects = len(magic) + 8, {}
    for _ in range(count):
        offset, size, id_size = struct.unpack_from("<QQQ", data, at)
        ident = data[at + 24 : at + 24 + id_size].decode()
        at += 24 + id_size
        if ident.startswith("hipv4-amdgcn-amd-amdhsa--"):
            objects[ident.split("--", 1)[1]] = data[offset : offset + size]
        else:
            assert ident.startswith("host-") and size == 0, ident
    return objects


def kernel_code(disassembly):
    """Instruction text of each kernel symbol in llvm-objdump -d output."""
    code, name = {}, None
    for line in disassembly.splitlines():
        label = re.match(r"^[0-9a-f]+ <(\w+)>:$", line)
        if label:
            name = label.group(1)
            code[name] = []
        elif name and line.startswith("\t"):
            code[name].append(line.strip())
    return code


def main():
    kiln, model, work, tools = sys.argv[1:5]
    flags = sys.argv[5:]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    so = os.path.join(work, "model.so")
    report = os.path.join(work, "report.json")
    run(kiln, "compile", model, "-o", so, "--target=hip",
        "--gpu-arch=" + ",".join(ARCHS), "--report=" + report, *flags)
    gpu = json.load(open(report))["gpu"]
    assert gpu["platform"] == "hip" and gpu["archs"] == ",".join(ARCHS), gpu
    kernels = gpu["kernels"]
    for k in kernels:
        assert [r["arch"] for r in k["resources"]] == ARCHS, k
        for r in k["resources"]:
            assert r["spill_bytes"] == 0 and r["stack_bytes"] == 0, (
                f"{k['kernel']} ({', '.join(k['onnx_nodes'])}) on {r['arch']}: "
                f"{r['spill_bytes']} B spilled, {r['stack_bytes']} B scratch")
            assert 1 <= r["occupancy_waves_per_simd"] <= 8, r
    inspect = run(kiln, "inspect", so)
    assert re.search(rf"^gpu: +hip, archs {','.join(ARCHS)}, {len(kernels)} "
                     "kernels", inspect, re.M), inspect
    assert len(re.findall(r" VGPR .* waves/SIMD$", inspect, re.M)) == \
        len(ARCHS) * len(kernels)

    image = os.path.join(work, "image.bundle")
    run(os.path.join(tools, "llvm-objcopy"), "--dump-section",
        ".kiln.gpu=" + image, so, os.path.join(work, "stripped.so"))
    objects = unbundle(open(image, "rb").read())
    assert sorted(objects) == sorted(ARCHS), sorted(objects)
    attention = [k["kernel"] for k in kernels
                 if any(SOFTMAX.search(n) for n in k["onnx_nodes"]) and
                 any(CONTRACTIONS.search(n) for n in k["onnx_nodes"])]
    tiled = [k["kernel"] for k in kernels
             if k["shared_bytes"] > 0 and k["kernel"] not in attention and
             any(CONTRACTIONS.search(n) for n in k["onnx_nodes"])]
    for arch, obj in objects.items():
        path = os.path.join(work, arch + ".hsaco")
        open(path, "wb").write(obj)
        header = run(os.path.join(tools, "llvm-readelf"), "-h", path)
        assert re.search(r"Machine:\s+EM_AMDGPU", header), header
        assert re.search(rf"Flags:\s+0x[0-9a-f]+, {arch}\b", header), header
        code = kernel_code(run(os.path.join(tools, "llvm-objdump"), "-d",
                               "--mcpu=" + arch, path))
        for k in kernels:
            assert k["kernel"] in code, f"{k['kernel']} missing on {arch}"
        for name in tiled + attention:
            mfmas = [i for i in code[name] if i.startswith("v_mfma_")]
            assert mfmas, f"{name} has no MFMA on {arch}"
    print(f"PASS: {len(kernels)} kernels for {', '.join(ARCHS)}, none spills "
          f"or uses scratch; {len(tiled)} contraction and {len(attention)} "
          "attention kernels on MFMA")


if __name__ == "__main__":
    main()
