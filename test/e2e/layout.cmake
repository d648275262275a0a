# The convolution layout passes (kiln-conv-layout, kiln-sink-transposes).
# Included from test/e2e/CMakeLists.txt.
#
# 1. The NHWC lowering gives the same numbers: every ONNX backend test with a
#    convolution or pool in its name, and the example CNN, compiled with the
#    layout forced to NHWC (KILN_CONV_LAYOUT=nhwc) and checked against the
#    test data / onnxruntime as their NCHW twins are.
# 2. Winograd: check_winograd.py's models in every mode against onnxruntime
#    (the ONNX backend tests give their filters as inputs, which Winograd,
#    like the direct kernel, does not take).
# 3. ResNet-18 (torchvision export, random weights) at -O2 ends with at most
#    two conversions (the input and the pooled output): layout_conversions in
#    its --report, the cost model's NHWC decision and the conversions left in
#    the KILN_LOGS=layout log (check_layout.py), and its NHWC convolutions
#    take their bias/ReLU/residual-add epilogues: epilogues_fused == 17
#    (16 convolutions and the final Gemm). Numerics of that compile are
#    models.resnet18's.

foreach(set ${KILN_ONNX_SETS})
  file(GLOB tests LIST_DIRECTORIES true ${KILN_ONNX_TESTDATA}/${set}/test_*)
  foreach(test_dir ${tests})
    get_filename_component(name ${test_dir} NAME)
    string(TOLOWER "${name}" lower)
    if(NOT lower MATCHES "conv|pool")
      continue()
    endif()
    add_test(NAME layout.nhwc.onnx.${set}.${name}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_onnx_test.sh $<TARGET_FILE:kiln>
              ${test_dir} ${CMAKE_CURRENT_BINARY_DIR}/work/layout/${set}/${name}
              ${KILN_ONNX_XFAIL} ${set}/${name})
    set_tests_properties(layout.nhwc.onnx.${set}.${name} PROPERTIES
      TIMEOUT 300 LABELS "onnx;layout" ENVIRONMENT KILN_CONV_LAYOUT=nhwc)
  endforeach()
endforeach()

# Winograd F(2x2, 3x3), F(4x4, 3x3), off and the cost model's choice on odd
# sizes, channel counts and paddings with bias, ReLU and residual epilogues,
# against onnxruntime within 1e-4 (check_winograd.py).
add_test(NAME models.winograd
  COMMAND python3 ${CMAKE_CURRENT_SOURCE_DIR}/check_winograd.py
          $<TARGET_FILE:kiln> ${CMAKE_CURRENT_BINARY_DIR}/work/winograd/model)
set_tests_properties(models.winograd PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS "models;layout")

add_test(NAME layout.nhwc.examples.cnn
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
          ${PROJECT_SOURCE_DIR}/examples/cnn
          ${CMAKE_CURRENT_BINARY_DIR}/work/layout/examples/cnn)
set_tests_properties(layout.nhwc.examples.cnn PROPERTIES
  LABELS layout ENVIRONMENT KILN_CONV_LAYOUT=nhwc)

set(work ${CMAKE_CURRENT_BINARY_DIR}/work/layout/resnet18)
add_test(NAME models.layout.resnet18.report
  COMMAND bash -c "python3 '${CMAKE_CURRENT_SOURCE_DIR}/models/export_torchvision.py' resnet18 '${work}/onnx' || exit $?; python3 '${CMAKE_CURRENT_SOURCE_DIR}/check_layout.py' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/report' 2 17")
set_tests_properties(models.layout.resnet18.report PROPERTIES
  SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "models;layout")
