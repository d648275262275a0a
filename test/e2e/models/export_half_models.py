#!/usr/bin/env python3
"""Half-precision models (f16 or bf16 inputs and outputs) with numpy's
reference, for the GPU tests: f16/bf16 models run their contractions (and,
on AMD, their attention) on matrix cores natively.

    export_half_models.py float16|bfloat16 OUT_DIR [matmul|sliced_matmul|attention]

matmul: MatMul + bias + Relu. sliced_matmul: products of slices of the
inputs, one large enough for 128x128 tiles. attention: softmax(q kᵀ · scale) v on
[1, 2, 70, 40] q, k, v (a sequence that is not a multiple of the kernels'
tiles, a head size that is not a multiple of 16), as torch exports it.
OUT_DIR gets model.onnx, one NAME.npy per input and expected_NAME.npy
(computed in float64 from the same values) in the model's type: float16
arrays, or for bfloat16 (which numpy lacks) uint16 arrays of the bits, as
`kiln run` reads them. Exits 77 without numpy/onnx.
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


def stored(values, dtype):
    """`values` as `kiln run` reads the model's type."""
    if dtype == "float16":
        return values.astype(np.float16)
    return (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)


def tensor(name, values, dtype):
    if dtype == "float16":
        return numpy_helper.from_array(values.astype(np.float16), name)
    return helper.make_tensor(name, TensorProto.BFLOAT16, values.shape,
                              stored(values, dtype).tobytes(), raw=True)


def matmul(dtype, elem, rng):
    m, k, n = 96, 160, 80
    x = rounded(rng.standard_normal((m, k)), dtype)
    w = rounded(rng.standard_normal((k, n)) / np.sqrt(k), dtype)
    b = rounded(rng.standard_normal(n) * 0.1, dtype)
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
         helper.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
         helper.make_node("Relu", ["xwb"], ["y"], name="relu")],
        "half_matmul",
        [helper.make_tensor_value_info("x", elem, [m, k])],
        [helper.make_tensor_value_info("y", elem, [m, n])],
        [tensor("w", w, dtype), tensor("b", b, dtype)])
    y = np.maximum(x.astype(np.float64) @ w + b, 0)
    return graph, {"x": x}, {"y": y}


def sliced_matmul(dtype, elem, rng):
    """Products of slices: y from rows 1.. of x (9 x 11 tiles of 128, so
    both operands by cp.async in three stages, with edges in every dim), z
    from columns 1.. of u (rows off a 16-byte boundary in u; bufferization
    copies such a slice to a buffer of its own before the kernel)."""
    m, k, n = 1040, 72, 1288
    x = rounded(rng.standard_normal((m + 1, k)), dtype)
    w = rounded(rng.standard_normal((k, n)) / np.sqrt(k), dtype)
    u = rounded(rng.standard_normal((96, 161)), dtype)
    v = rounded(rng.standard_normal((160, 80)) / np.sqrt(160), dtype)

    def const(name, values):
        return helper.make_node("Constant", [], [name], name=name,
                                value=numpy_helper.from_array(
                                    np.array(values, np.int64), name))
    graph = helper.make_graph(
        [const("one", [1]), const("end", [1 << 30]), const("rows", [0]),
         const("cols", [1]),
         helper.make_node("Slice", ["x", "one", "end", "rows"], ["xs"],
                          name="slice_rows"),
         helper.make_node("MatMul", ["xs", "w"], ["y"], name="matmul_rows"),
         helper.make_node("Slice", ["u", "one", "end", "cols"], ["us"],
                          name="slice_cols"),
         helper.make_node("MatMul", ["us", "v"], ["z"], name="matmul_cols")],
        "half_sliced_matmul",
        [helper.make_tensor_value_info("x", elem, [m + 1, k]),
         helper.make_tensor_value_info("w", elem, [k, n]),
         helper.make_tensor_value_info("u", elem, [96, 161]),
         helper.make_tensor_value_info("v", elem, [160, 80])],
        [helper.make_tensor_value_info("y", elem, [m, n]),
         helper.make_tensor_value_info("z", elem, [96, 80])])
    return graph, {"x": x, "w": w, "u": u, "v": v}, {
        "y": x[1:].astype(np.float64) @ w,
        "z": u[:, 1:].astype(np.float64) @ v}


def attention(dtype, elem, rng):
    shape = [1, 2, 70, 40]
    q, k, v = (rounded(rng.standard_normal(shape), dtype) for _ in range(3))
    scale = rounded(np.array(1 / np.sqrt(shape[-1])), dtype)
    graph = helper.make_graph(
        [helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2],
                          name="/Transpose"),
         helper.make_node("MatMul", ["q", "kt"], ["s"], name="/MatMul"),
         helper.make_node("Mul", ["s", "scale"], ["ss"], name="/Mul"),
         helper.make_node("Softmax", ["ss"], ["p"], axis=-1, name="/Softmax"),
         helper.make_node("MatMul", ["p", "v"], ["y"], name="/MatMul_1")],
        "half_attention",
        [helper.make_tensor_value_info(n, elem, shape) for n in "qkv"],
        [helper.make_tensor_value_info("y", elem, shape)],
        [tensor("scale", scale, dtype)])
    s = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2)
    s *= float(scale)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    return graph, {"q": q, "k": k, "v": v}, {"y": p @ v}


def main():
    dtype, out = sys.argv[1], sys.argv[2]
    kind = sys.argv[3] if len(sys.argv) > 3 else "matmul"
    elem = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.BFLOAT16
    rng = np.random.default_rng(0)
    graph, inputs, outputs = {"matmul": matmul,
                              "sliced_matmul": sliced_matmul,
                              "attention": attention}[kind](dtype, elem, rng)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    os.makedirs(out, exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for name, values in inputs.items():
        np.save(os.path.join(out, name + ".npy"), stored(values, dtype))
    for name, values in outputs.items():
        np.save(os.path.join(out, "expected_" + name + ".npy"),
                stored(rounded(values, dtype), dtype))


if __name__ == "__main__":
    main()
