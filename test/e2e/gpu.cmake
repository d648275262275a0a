# GPU code generation checked without a GPU (docs/gpu.md). Every model is
# compiled for CUDA sm_80 and sm_90a (ptxas assembles every kernel; that
# artifact is not run), and the same kernels compiled for this CPU
# (--gpu-emulate) run in the runtime's GPU emulator against the reference
# outputs. Included from test/e2e/CMakeLists.txt.

find_program(KILN_PTXAS ptxas PATHS $ENV{CUDA_ROOT}/bin /usr/local/cuda/bin)
set(KILN_GPU_EMULATE "KILN_COMPILE_FLAGS=--target=cuda --gpu-emulate")
if(KILN_PTXAS)
  set(KILN_GPU_ASSEMBLE
      "KILN_ASSEMBLE_FLAGS=--target=cuda --gpu-arch=sm_80,sm_90a")
else()
  message(WARNING "ptxas not found (CUDA toolkit): the GPU tests only "
                  "emulate, nothing is assembled for sm_80/sm_90a")
  set(KILN_GPU_ASSEMBLE "KILN_ASSEMBLE_FLAGS=")
endif()

# Both expected-failure lists apply on the GPU.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  ${KILN_ONNX_XFAIL} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_xfail.txt)
file(READ ${KILN_ONNX_XFAIL} cpu_xfail)
file(READ ${CMAKE_CURRENT_SOURCE_DIR}/gpu_xfail.txt gpu_xfail)
set(KILN_GPU_XFAIL ${CMAKE_CURRENT_BINARY_DIR}/gpu_xfail_all.txt)
file(WRITE ${KILN_GPU_XFAIL} "${cpu_xfail}\n${gpu_xfail}")

foreach(set ${KILN_ONNX_SETS})
  file(GLOB tests LIST_DIRECTORIES true ${KILN_ONNX_TESTDATA}/${set}/test_*)
  foreach(test_dir ${tests})
    get_filename_component(name ${test_dir} NAME)
    add_test(NAME gpu.onnx.${set}.${name}
      COMMAND ${CMAKE_COMMAND} -E env ${KILN_GPU_EMULATE} ${KILN_GPU_ASSEMBLE}
              ${CMAKE_CURRENT_SOURCE_DIR}/run_onnx_test.sh $<TARGET_FILE:kiln>
              ${test_dir} ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/${set}/${name}
              ${KILN_GPU_XFAIL} ${set}/${name})
    set_tests_properties(gpu.onnx.${set}.${name} PROPERTIES
      TIMEOUT 300 LABELS "onnx;gpu")
  endforeach()
endforeach()

# The examples: emulated against onnxruntime, and assembled with no kernel
# spilling registers on either architecture.
foreach(example cnn transformer)
  set(dir ${PROJECT_SOURCE_DIR}/examples/${example})
  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/examples/${example})
  add_test(NAME gpu.examples.${example}
    COMMAND ${CMAKE_COMMAND} -E env ${KILN_GPU_EMULATE}
            ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
            ${dir} ${work}/emulated)
  add_test(NAME gpu.examples.${example}.assemble
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_assembly.sh
            $<TARGET_FILE:kiln> ${dir}/model.onnx ${work}/cuda)
  set_tests_properties(gpu.examples.${example} gpu.examples.${example}.assemble
    PROPERTIES LABELS gpu)
endforeach()
