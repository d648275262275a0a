#!/usr/bin/env python3
"""Two contractions big enough for the tensor-core kernel's 128x128 tiles
(at least 96 of them), with sizes that are not multiples of the tiles or
of the 32-deep steps, and numpy's float64 reference, for the GPU tests:

    y = a @ b                                MatMul
    z = Gemm(at, bt, transA=1, transB=1)     the same from transposed
                                             operands
    w = Relu(a @ b2) @ c                     c a constant weight: the
                                             second product (10 x 10
                                             tiles) reads the first's ReLU
                                             epilogue, which at bf16/fp16
                                             rounds where it is computed

    export_large_matmul.py OUT_DIR

OUT_DIR gets model.onnx, NAME.npy per input and expected_NAME.npy per
output. Exits 77 without numpy/onnx.
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

M, K, N, K2 = 1250, 70, 1270, 72


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(np.float32)
    b = (rng.standard_normal((K, N)) / np.sqrt(K)).astype(np.float32)
    at = rng.standard_normal((K, M)).astype(np.float32)
    bt = (rng.standard_normal((N, K)) / np.sqrt(K)).astype(np.float32)
    b2 = (rng.standard_normal((K, K2)) / np.sqrt(K)).astype(np.float32)
    c = (rng.standard_normal((K2, N)) / np.sqrt(K2)).astype(np.float32)
    f = TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["a", "b"], ["y"], name="matmul"),
         helper.make_node("Gemm", ["at", "bt"], ["z"], name="gemm_tt",
                          transA=1, transB=1),
         helper.make_node("MatMul", ["a", "b2"], ["p"], name="matmul_small"),
         helper.make_node("Relu", ["p"], ["h"], name="relu"),
         helper.make_node("MatMul", ["h", "c"], ["w"], name="matmul_rounded")],
        "large_matmul",
        [helper.make_tensor_value_info("a", f, [M, K]),
         helper.make_tensor_value_info("b", f, [K, N]),
         helper.make_tensor_value_info("at", f, [K, M]),
         helper.make_tensor_value_info("bt", f, [N, K]),
         helper.make_tensor_value_info("b2", f, [K, K2])],
        [helper.make_tensor_value_info("y", f, [M, N]),
         helper.make_tensor_value_info("z", f, [M, N]),
         helper.make_tensor_value_info("w", f, [M, N])],
        [numpy_helper.from_array(c, "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for name, value in (("a", a), ("b", b), ("at", at), ("bt", bt),
                        ("b2", b2)):
        np.save(os.path.join(out, name + ".npy"), value)
    y = a.astype(np.float64) @ b.astype(np.float64)
    z = at.T.astype(np.float64) @ bt.T.astype(np.float64)
    np.save(os.path.join(out, "expected_y.npy"), y.astype(np.float32))
    np.save(os.path.join(out, "expected_z.npy"), z.astype(np.float32))
    h = np.maximum(a.astype(np.float64) @ b2.astype(np.float64), 0)
    w = h @ c.astype(np.float64)
    np.save(os.path.join(out, "expected_w.npy"), w.astype(np.float32))


if __name__ == "__main__":
    main()
