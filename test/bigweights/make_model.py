#!/usr/bin/env python3
"""Writes an ONNX model whose weights (external data) total about SIZE_MB.

The model is a chain of MatMuls, y = tanh(x W_0) W_1 ..., each W a
[D, D] float32 matrix stored in the external data file `weights.bin`
next to the model. Also writes the input `x.npy` and numpy's float64
result `y.npy`, so a test can compare Kiln's output with an independent
reference without reading the weights back through onnx.

  make_model.py OUT_DIR SIZE_MB [D]
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper


def make(out_dir, size_mb, dim=4096):
    """Writes the model, its weights, x.npy and y.npy; returns the weight
    bytes."""
    count = max(1, (size_mb << 20) // (dim * dim * 4))
    os.makedirs(out_dir, exist_ok=True)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((4, dim)).astype(np.float32)
    ref = x.astype(np.float64)

    nodes, inits = [], []
    offset = 0
    prev = "x"
    with open(os.path.join(out_dir, "weights.bin"), "wb") as f:
        for i in range(count):
            w = (rng.standard_normal((dim, dim), dtype=np.float32) /
                 np.float32(np.sqrt(dim)))
            raw = w.tobytes()
            f.write(raw)
            t = TensorProto(name=f"w{i}", data_type=TensorProto.FLOAT,
                            dims=[dim, dim])
            t.data_location = TensorProto.EXTERNAL
            for key, value in (("location", "weights.bin"),
                               ("offset", str(offset)),
                               ("length", str(len(raw)))):
                entry = t.external_data.add()
                entry.key, entry.value = key, value
            offset += len(raw)
            inits.append(t)
            mm = f"mm{i}"
            nodes.append(helper.make_node("MatMul", [prev, f"w{i}"], [mm],
                                          name=mm))
            ref = ref @ w.astype(np.float64)
            if i + 1 < count:
                nodes.append(helper.make_node("Tanh", [mm], [f"t{i}"],
                                              name=f"tanh{i}"))
                ref = np.tanh(ref)
                prev = f"t{i}"
            else:
                prev = mm
            del w, raw
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(
        nodes, "big_weights",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, dim])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, dim])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, os.path.join(out_dir, "model.onnx"))
    np.save(os.path.join(out_dir, "x.npy"), x)
    np.save(os.path.join(out_dir, "y.npy"), ref.astype(np.float32))
    return offset


def main():
    dim = int(sys.argv[3]) if len(sys.argv) > 3 else 4096
    size = make(sys.argv[1], int(sys.argv[2]), dim)
    print(f"[{dim}, {dim}] f32 weights, {size / 2**20:.0f} MiB")


if __name__ == "__main__":
    main()
