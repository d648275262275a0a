# The HIP backend checked without an AMD GPU (docs/gpu.md, "HIP"). Every
# ONNX test is built for gfx90a and gfx942 by gpu.cmake (KILN_ASSEMBLE_FLAGS);
# here the kernels whose tiles differ on AMD (wave64 MFMA contractions and
# convolutions, normalizations, attention) run emulated with HIP's tile
# parameters against the reference outputs, and the examples and whole
# models are built for both archs and their code objects checked
# (check_hip_assembly.py: AMDGPU ELF per arch, MFMA in the contraction
# kernels, no scratch or spills). Included after gpu.cmake.
if(NOT KILN_HIP_BUILDS)
  return()
endif()

set(hip_emulate "KILN_COMPILE_FLAGS=--target=hip --gpu-emulate")
set(hip_check ${CMAKE_CURRENT_SOURCE_DIR}/check_hip_assembly.py)

foreach(set ${KILN_ONNX_SETS})
  file(GLOB tests LIST_DIRECTORIES true ${KILN_ONNX_TESTDATA}/${set}/test_*)
  foreach(test_dir ${tests})
    get_filename_component(name ${test_dir} NAME)
    string(TOLOWER "${name}" lower)
    if(NOT lower MATCHES "matmul|gemm|conv|einsum|attention|layer_?norm|softmax|linear")
      continue()
    endif()
    add_test(NAME gpu.hip.onnx.${set}.${name}
      COMMAND ${CMAKE_COMMAND} -E env ${hip_emulate}
              ${CMAKE_CURRENT_SOURCE_DIR}/run_onnx_test.sh $<TARGET_FILE:kiln>
              ${test_dir} ${CMAKE_CURRENT_BINARY_DIR}/work/hip/${set}/${name}
              ${KILN_GPU_XFAIL} ${set}/${name})
    set_tests_properties(gpu.hip.onnx.${set}.${name} PROPERTIES
      TIMEOUT 300 LABELS "onnx;gpu;hip")
  endforeach()
endforeach()

foreach(example cnn transformer)
  set(dir ${PROJECT_SOURCE_DIR}/examples/${example})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/hip/examples/${example})
  add_test(NAME gpu.hip.examples.${example}
    COMMAND ${CMAKE_COMMAND} -E env ${hip_emulate}
            ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
            ${dir} ${work}/emulated)
  add_test(NAME gpu.hip.examples.${example}.assemble
    COMMAND python3 ${hip_check} $<TARGET_FILE:kiln> ${dir}/model.onnx
            ${work}/hip ${LLVM_TOOLS_BINARY_DIR})
  set_tests_properties(gpu.hip.examples.${example}
    gpu.hip.examples.${example}.assemble PROPERTIES LABELS "gpu;hip")
  # Reduced-precision MFMA operands within 1e-2 relative L2 error.
  foreach(precision bf16 fp16)
    add_test(NAME gpu.hip.${precision}.examples.${example}
      COMMAND ${CMAKE_COMMAND} -E env
              "KILN_COMPILE_FLAGS=--target=hip --gpu-emulate --gpu-precision=${precision}"
              KILN_REL_L2=1e-2 ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh
              $<TARGET_FILE:kiln> ${dir} ${work}/${precision})
    set_tests_properties(gpu.hip.${precision}.examples.${example}
      PROPERTIES LABELS "gpu;hip")
  endforeach()
endforeach()

# The whole models of the CUDA tests (gpu.cmake's KILN_GPU_MODELS).
foreach(entry ${KILN_GPU_MODELS})
  list(GET entry 0 name)
  list(GET entry 1 work)
  list(GET entry 2 export)
  list(GET entry 3 lock)
  set(export "${export} '${work}/onnx' >/dev/null || exit $?")
  add_test(NAME gpu.hip.models.${name}
    COMMAND bash -c "${export}; KILN_COMPILE_FLAGS='--target=hip --gpu-emulate' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/hip-emulated'")
  add_test(NAME gpu.hip.models.${name}.assemble
    COMMAND bash -c "${export}; python3 '${hip_check}' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/hip' '${LLVM_TOOLS_BINARY_DIR}'")
  set_tests_properties(gpu.hip.models.${name} gpu.hip.models.${name}.assemble
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "gpu;hip;models"
    RESOURCE_LOCK ${lock})
endforeach()

# Half-precision models: MFMA on their own f16/bf16 operands (the matmul
# shares its export with gpu.cmake's, hence the lock).
foreach(kind matmul attention)
  foreach(type float16 bfloat16)
    set(name half_${kind}_${type})
    set(work ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/${name})
    set(export "python3 '${CMAKE_CURRENT_SOURCE_DIR}/models/export_half_models.py' ${type} '${work}/onnx' ${kind} || exit $?")
    add_test(NAME gpu.hip.models.${name}
      COMMAND bash -c "${export}; KILN_REL_L2=1e-2 KILN_COMPILE_FLAGS='--target=hip --gpu-emulate' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/hip-emulated'")
    add_test(NAME gpu.hip.models.${name}.assemble
      COMMAND bash -c "${export}; python3 '${hip_check}' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/hip' '${LLVM_TOOLS_BINARY_DIR}'")
    set_tests_properties(gpu.hip.models.${name} gpu.hip.models.${name}.assemble
      PROPERTIES SKIP_RETURN_CODE 77 LABELS "gpu;hip;models"
      RESOURCE_LOCK gpu.${name})
  endforeach()
endforeach()
