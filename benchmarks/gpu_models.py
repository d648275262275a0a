#!/usr/bin/env python3
"""Writes the ONNX models of issue 18's GPU speed rows (no references: the
speed rows are timed on random inputs; their numerics are covered by the
gpu-check models).

    gpu_models.py OUT_DIR     OUT_DIR/NAME/model.onnx + OUT_DIR/NAME/spec

Each spec line is "PEER PRECISION": the torch workload that
benchmarks/gpu_peers.py times beside it (gemm:N:DTYPE or
attention:B:H:S:D:CAUSAL:DTYPE) and the --gpu-precision to compile with.
"""
import os
import sys
import warnings

import onnx
from onnx import TensorProto, helper


def gemm(n, elem):
    a = helper.make_tensor_value_info("a", elem, [n, n])
    b = helper.make_tensor_value_info("b", elem, [n, n])
    y = helper.make_tensor_value_info("y", elem, [n, n])
    graph = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"],
                                                name="matmul")],
                              f"gemm{n}", [a, b], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def attention(shape, causal, path):
    import torch
    import torch.nn.functional as F

    class Sdpa(torch.nn.Module):
        def forward(self, q, k, v):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)

    # fp32 operands compiled at --gpu-precision=bf16: torch's bf16 export
    # computes the scale through Casts that the attention matcher does not
    # follow yet.
    inputs = tuple(torch.randn(*shape) for _ in range(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Sdpa(), inputs, path, input_names=["q", "k", "v"],
                          output_names=["out"], opset_version=17, dynamo=False)


def main():
    out = sys.argv[1]
    bf16, f32 = TensorProto.BFLOAT16, TensorProto.FLOAT
    rows = {}
    for n in (2048, 4096, 8192):
        rows[f"gemm{n}-bf16"] = (gemm(n, bf16), f"gemm:{n}:bf16", "bf16")
    for n in (4096, 8192):
        rows[f"gemm{n}-tf32"] = (gemm(n, f32), f"gemm:{n}:tf32", "tf32")
    shape = (4, 16, 4096, 64)
    for causal in (False, True):
        name = "attention-causal-bf16" if causal else "attention-bf16"
        rows[name] = (None, "attention:%d:%d:%d:%d:%d:bf16" % (*shape, causal),
                      "bf16")
    for name, (model, peer, precision) in rows.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        path = os.path.join(d, "model.onnx")
        if model is None:
            attention(shape, "causal" in name, path)
        else:
            onnx.save(model, path)
        with open(os.path.join(d, "spec"), "w") as f:
            f.write(f"{peer} {precision}\n")


if __name__ == "__main__":
    main()
