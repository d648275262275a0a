# Attention fusion end to end (kiln-fuse-attention + the flash lowering):
# small torch exports (test/e2e/models/export_attention.py) checked against
# onnxruntime, and the fusion log checked for a fused attention (or, for the
# negative model, none). Needs python3 with torch and onnxruntime; skipped
# (exit 77) without them. Included from test/e2e/CMakeLists.txt.

set(KILN_ATTENTION_EXPORT ${CMAKE_CURRENT_SOURCE_DIR}/models/export_attention.py)

# name;fused|unfused. The raw MultiheadAttention and causal SDPA exports
# (Mod and Trilu in their shape arithmetic) and their "_folded" twins
# (onnxruntime's ONNX-only constant folding) carry the same attention.
set(KILN_ATTENTION_MODELS
  "bhsd_div\;fused" "bhsd_mul\;fused" "bhsd_additive_mask\;fused"
  "bshd_hf\;fused" "bshd_hf_min_mask\;fused" "causal_where\;fused"
  "bmm_3d\;fused"
  "mha_folded\;fused" "sdpa_causal_folded\;fused" "sdpa_mask\;fused"
  "bhsd_head128\;fused"
  "negative_softmax_axis\;unfused" "mha\;fused" "sdpa_causal\;fused")

foreach(entry ${KILN_ATTENTION_MODELS})
  list(GET entry 0 model)
  list(GET entry 1 want)
  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/attention/${model})
  set(export "python3 '${KILN_ATTENTION_EXPORT}' ${model} '${work}/onnx' || exit $?")
  add_test(NAME attention.${model}
    COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/run'")
  add_test(NAME attention.${model}.fusion
    COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/check_fusion.sh' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' ${want} '${work}/fusion'")
  set_tests_properties(attention.${model} attention.${model}.fusion PROPERTIES
    SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS attention
    RESOURCE_LOCK attention.${model})
endforeach()
