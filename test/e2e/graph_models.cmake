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
