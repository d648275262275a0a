#!/usr/bin/env python3
"""Writes the seed corpora of the fuzz targets into test/fuzz/corpus/.

    make_seeds.py [ONNX_TESTDATA_DIR]   (default /usr/share/libonnx-testdata/data)

Seeds are small valid and near-valid inputs: .npy files of every dtype the
runner reads (and the layouts it refuses), ONNX TensorProto .pb files and
small models from ONNX's backend test data, ELF headers, KILN_LOGS specs,
and tiny torch.export .pt2 archives (with torch installed).
Inputs a fuzzing run finds are added next to them as crash-NAME files;
`ctest -L fuzz` replays the folders. Needs numpy and onnx.
"""
import glob
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/libonnx-testdata/data"


def folder(name):
    path = os.path.join(HERE, "corpus", name)
    os.makedirs(path, exist_ok=True)
    return path


def write(name, file, data):
    with open(os.path.join(folder(name), file), "wb") as f:
        f.write(data)


def npy_bytes(array, **kw):
    import io
    buffer = io.BytesIO()
    np.save(buffer, array, **kw)
    return buffer.getvalue()


def main():
    arrays = {
        "f32": np.arange(6, dtype=np.float32).reshape(2, 3),
        "f16": np.arange(4, dtype=np.float16),
        "i64_scalar": np.array(7, dtype=np.int64),
        "bool": np.array([True, False, True]),
        "u8_empty": np.zeros((0, 3), dtype=np.uint8),
        "f64_3d": np.ones((2, 1, 2)),
        "i32": np.array([[1, -2]], dtype=np.int32),
        "big_endian": np.arange(3, dtype=">f4"),
        "fortran": np.asfortranarray(np.ones((2, 3), np.float32)),
    }
    for name, array in arrays.items():
        write("npy", name + ".npy", npy_bytes(array))
    write("npy", "truncated.npy", npy_bytes(arrays["f32"])[:70])
    write("npy", "object.npy",
          npy_bytes(np.array([1, "a"], dtype=object), allow_pickle=True))

    pbs = sorted(glob.glob(os.path.join(DATA, "node", "*", "test_data_set_0",
                                        "*.pb")), key=os.path.getsize)
    picked = {}
    for pb in pbs:
        size = os.path.getsize(pb)
        if size > 512:
            break
        key = os.path.basename(os.path.dirname(os.path.dirname(pb)))
        if len(picked) < 24 and key.split("_")[1] not in picked:
            picked[key.split("_")[1]] = pb
    for key, pb in picked.items():
        with open(pb, "rb") as f:
            write("onnx_tensor", key + ".pb", f.read())

    models = sorted(glob.glob(os.path.join(DATA, "node", "*", "model.onnx")),
                    key=os.path.getsize)
    ops = {}
    for model in models:
        name = os.path.basename(os.path.dirname(model))
        op = name.split("_")[1]
        if os.path.getsize(model) <= 400 and op not in ops:
            ops[op] = model
    for op, model in list(ops.items())[:40]:
        with open(model, "rb") as f:
            write("onnx_import", op + ".onnx", f.read())
    pipeline_seeds(models)

    elf = bytearray(64)
    elf[:4] = b"\x7fELF"
    elf[4], elf[5], elf[6] = 2, 1, 1
    for name, kind, machine in (("x86_64_so", 3, 62), ("aarch64_so", 3, 183),
                                ("x86_64_exe", 2, 62), ("i386", 3, 3)):
        header = bytearray(elf)
        header[16:18] = kind.to_bytes(2, "little")
        header[18:20] = machine.to_bytes(2, "little")
        if name == "i386":
            header[4] = 1
        write("elf_header", name, bytes(header))
    write("elf_header", "text", b"not an ELF file\n")

    for i, spec in enumerate(["all", "+fusion,graph", "-gpu", "help",
                              "lowering,+import,output_code", "bogus",
                              ",,", "+all,-fusion"]):
        write("logs", f"spec{i}", spec.encode())

    pt2_seeds()


def pipeline_seeds(models):
    """Models of one node each, of distinct ops, small enough that the -O0
    pipeline compiles each in well under a second (onnx_pipeline)."""
    ops = {}
    for model in models:
        op = os.path.basename(os.path.dirname(model)).split("_")[1]
        if os.path.getsize(model) <= 1000 and op not in ops:
            ops[op] = model
    for op, model in list(ops.items())[:80]:
        with open(model, "rb") as f:
            write("onnx_pipeline", op + ".onnx", f.read())


def pt2_seeds():
    """Tiny .pt2 archives: an MLP, a conv net and an attention block, each
    as exported and after run_decompositions()."""
    try:
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
    except ImportError:
        print("no torch: pt2_import seeds not written")
        return

    class Conv(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            y = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            return self.fc(F.adaptive_avg_pool2d(y, 1).flatten(1))

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.qkv = nn.Linear(8, 24)
            self.norm = nn.LayerNorm(8)

        def forward(self, x):
            q, k, v = self.qkv(self.norm(x)).split(8, dim=-1)
            shape = (x.shape[0], x.shape[1], 2, 4)
            q, k, v = (z.view(shape).transpose(1, 2) for z in (q, k, v))
            a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return F.gelu(a.transpose(1, 2).reshape(x.shape))

    torch.manual_seed(0)
    models = {
        "mlp": (nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)),
                torch.randn(2, 4)),
        "conv": (Conv(), torch.randn(1, 3, 8, 8)),
        "attention": (Attention(), torch.randn(1, 4, 8)),
    }
    import io
    for name, (model, x) in models.items():
        ep = torch.export.export(model.eval(), (x,))
        for suffix, program in (("", ep), ("_core", ep.run_decompositions())):
            buffer = io.BytesIO()
            torch.export.save(program, buffer)
            write("pt2_import", name + suffix + ".pt2", buffer.getvalue())


if __name__ == "__main__":
    main()
