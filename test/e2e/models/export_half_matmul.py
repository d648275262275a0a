#!/usr/bin/env python3
"""A half-precision MatMul + bias + Relu model (f16 or bf16 inputs and
outputs) with numpy's reference, for the GPU tests: f16/bf16 models run
their contractions on tensor cores natively.

    export_half_matmul.py float16|bfloat16 OUT_DIR

OUT_DIR gets model.onnx, x.npy and expected_y.npy (computed in float64
from the same values) in the model's type: float16 arrays, or for bfloat16
(which numpy lacks) uint16 arrays of the bits, as `kiln run` reads them.
Exits 77 without numpy/onnx.
"""
import os
import sys

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:  # optional test dependencies
    print(f"skipping: {e}")
    sys.exit(77)


def rounded(values, dtype):
    """float32 values exactly representable in `dtype`."""
    if dtype == "float16":
        return values.astype(np.float16).astype(np.float32)
    bits = values.astype(np.float32).view(np.uint32)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000  # to nearest even
    return bits.astype(np.uint32).view(np.float32)


def main():
    dtype, out = sys.argv[1], sys.argv[2]
    elem = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.BFLOAT16
    rng = np.random.default_rng(0)
    m, k, n = 96, 160, 80
    x = rounded(rng.standard_normal((m, k)), dtype)
    w = rounded(rng.standard_normal((k, n)) / np.sqrt(k), dtype)
    b = rounded(rng.standard_normal(n) * 0.1, dtype)

    def tensor(name, values):
        if dtype == "float16":
            return numpy_helper.from_array(values.astype(np.float16), name)
        t = helper.make_tensor(name, elem, values.shape,
                               (values.view(np.uint32) >> 16).astype(np.uint16).tobytes(),
                               raw=True)
        return t

    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
         helper.make_node("Relu", ["xwb"], ["y"], name="relu")],
        "half_matmul",
        [helper.make_tensor_value_info("x", elem, [m, k])],
        [helper.make_tensor_value_info("y", elem, [m, n])],
        [tensor("w", w), tensor("b", b)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    y = rounded(np.maximum(x.astype(np.float64) @ w + b, 0), dtype)
    for name, values in (("x", x), ("expected_y", y)):
        stored = (values.astype(np.float16) if dtype == "float16" else
                  (values.view(np.uint32) >> 16).astype(np.uint16))
        np.save(os.path.join(out, name + ".npy"), stored)


if __name__ == "__main__":
    main()
