# Whole models through the graph passes (kiln-merge-contractions,
# kiln-fuse-attention, kiln-concat-in-place, the kernel report): torch
# exports (test/e2e/models/export_graph_models.py) checked against
# onnxruntime (rtol 1e-4), and the --report counters checked against each
# model's expect.json (check_report.py). Needs python3 with torch and
# onnxruntime; skipped (exit 77) without them. Included from
# test/e2e/CMakeLists.txt.

set(KILN_GRAPH_EXPORT ${CMAKE_CURRENT_SOURCE_DIR}/models/export_graph_models.py)
foreach(model bert_encoder bert_opset14 gpt2_blocks inception_block
              concat_chain)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/graph_models/${model})
  set(export "python3 '${KILN_GRAPH_EXPORT}' ${model} '${work}/onnx' || exit $?")
  add_test(NAME models.graph.${model}
    COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/run'")
  add_test(NAME models.graph.${model}.report
    COMMAND bash -c "${export}; python3 '${CMAKE_CURRENT_SOURCE_DIR}/check_report.py' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/report'")
  set_tests_properties(models.graph.${model} models.graph.${model}.report
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS models
    RESOURCE_LOCK graph_models.${model})
endforeach()

# --precision=bf16 (bf16 matmul weights, check_bf16.sh): natively with
# vdpbf16ps where this CPU has AVX512-BF16, and converted to f32 for a CPU
# without it (--cpu=x86-64-v3), each within relative L2 1e-2 of onnxruntime.
foreach(model bert_encoder gpt2_blocks)
  foreach(mode native converted)
    set(work ${CMAKE_CURRENT_BINARY_DIR}/work/bf16/${model}-${mode})
    add_test(NAME models.bf16.${model}.${mode}
      COMMAND bash -c "python3 '${KILN_GRAPH_EXPORT}' ${model} '${work}/onnx' >/dev/null || exit $?; '${CMAKE_CURRENT_SOURCE_DIR}/check_bf16.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/run' ${mode}")
    set_tests_properties(models.bf16.${model}.${mode} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS models)
  endforeach()
endforeach()

# ONNX QDQ models (onnxruntime.quantization) as int8 products on VNNI
# (check_int8.py): every weight matmul and convolution fused, outputs within
# 2 quantization steps of onnxruntime's int8 run.
foreach(model mlp convnet branches resnet18 bert_encoder gpt2_blocks)
  add_test(NAME models.int8.${model}
    COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_int8.py
            $<TARGET_FILE:kiln> ${CMAKE_CURRENT_BINARY_DIR}/work/int8/${model} ${model})
  set_tests_properties(models.int8.${model} PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS models)
endforeach()
