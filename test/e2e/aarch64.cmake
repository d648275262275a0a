# aarch64 under qemu: the runtime and kiln-run cross-built with Debian's
# g++-aarch64-linux-gnu (runtime/cmake/aarch64-linux-gnu.toolchain.cmake),
# artifacts compiled with --target=aarch64-linux-gnu by the host kiln, run by
# qemu-aarch64 and compared with the same references as on x86-64.
# Subset: the examples and ONNX's pytorch-converted, pytorch-operator and
# simple tests (the 932 node tests run on x86-64 only, for CI time).
find_program(KILN_QEMU_AARCH64 qemu-aarch64)
find_program(KILN_AARCH64_CXX aarch64-linux-gnu-g++)
if(NOT KILN_QEMU_AARCH64 OR NOT KILN_AARCH64_CXX)
  message(STATUS "aarch64 tests off: needs qemu-user and g++-aarch64-linux-gnu")
  return()
endif()

include(ExternalProject)
set(KILN_AARCH64_BUILD ${PROJECT_BINARY_DIR}/aarch64)
ExternalProject_Add(kiln_aarch64_runtime
  SOURCE_DIR ${PROJECT_SOURCE_DIR}
  BINARY_DIR ${KILN_AARCH64_BUILD}
  CMAKE_ARGS -DKILN_RUNTIME_ONLY=ON -DCMAKE_BUILD_TYPE=Release
             -DCMAKE_TOOLCHAIN_FILE=${PROJECT_SOURCE_DIR}/runtime/cmake/aarch64-linux-gnu.toolchain.cmake
  BUILD_COMMAND ${CMAKE_COMMAND} --build ${KILN_AARCH64_BUILD} --target kiln-run
  INSTALL_COMMAND ""
  BUILD_ALWAYS ON)

set(qemu_run "${KILN_QEMU_AARCH64} -L /usr/aarch64-linux-gnu ${KILN_AARCH64_BUILD}/bin/kiln-run")
set(aarch64_env "KILN_COMPILE_FLAGS=--target=aarch64-linux-gnu" "KILN_RUN=${qemu_run}")

foreach(example cnn transformer)
  add_test(NAME aarch64.examples.${example}
    COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
            ${PROJECT_SOURCE_DIR}/examples/${example}
            ${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/examples/${example})
  set_tests_properties(aarch64.examples.${example} PROPERTIES
    ENVIRONMENT "${aarch64_env}" LABELS aarch64)
endforeach()

# --precision=bf16 on aarch64: bf16 weights extended to f32 as loaded
# (within relative L2 1e-2 of onnxruntime's fp32 output).
add_test(NAME aarch64.examples.transformer_bf16
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
          ${PROJECT_SOURCE_DIR}/examples/transformer
          ${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/examples/transformer_bf16)
set_tests_properties(aarch64.examples.transformer_bf16 PROPERTIES
  ENVIRONMENT "KILN_COMPILE_FLAGS=--target=aarch64-linux-gnu --precision=bf16;KILN_REL_L2=1e-2;KILN_RUN=${qemu_run}"
  LABELS aarch64)

# ... and says so in the manifest that `kiln inspect` reads on x86-64.
add_test(NAME aarch64.inspect_shows_precision
  COMMAND bash -c "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64' && '$<TARGET_FILE:kiln>' compile '${PROJECT_SOURCE_DIR}/examples/transformer/model.onnx' -o '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/bf16.so' --target=aarch64-linux-gnu --precision=bf16 && '$<TARGET_FILE:kiln>' inspect '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/bf16.so' | grep -x 'precision: bf16'")
set_tests_properties(aarch64.inspect_shows_precision PROPERTIES LABELS aarch64)

# The same CNN tuned for Neoverse V1 (SVE) on qemu's `-cpu max`.
add_test(NAME aarch64.examples.cnn_neoverse_v1
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh $<TARGET_FILE:kiln>
          ${PROJECT_SOURCE_DIR}/examples/cnn
          ${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/examples/cnn_v1)
set_tests_properties(aarch64.examples.cnn_neoverse_v1 PROPERTIES
  ENVIRONMENT "KILN_COMPILE_FLAGS=--target=aarch64-linux-gnu --cpu=neoverse-v1;KILN_RUN=${KILN_QEMU_AARCH64} -cpu max -L /usr/aarch64-linux-gnu ${KILN_AARCH64_BUILD}/bin/kiln-run"
  LABELS aarch64)

# The runtime-only install for aarch64, with the embedding examples built
# against it (pkg-config and CMake) and run under qemu.
add_test(NAME aarch64.install
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_install_aarch64.sh
          $<TARGET_FILE:kiln> ${PROJECT_SOURCE_DIR}
          ${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/install ${KILN_QEMU_AARCH64})
set_tests_properties(aarch64.install PROPERTIES LABELS aarch64 TIMEOUT 600)

# An artifact for one architecture is refused by the other's runtime.
add_test(NAME aarch64.rejects_x86_artifact
  COMMAND bash -c "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64' && '$<TARGET_FILE:kiln>' compile '${PROJECT_SOURCE_DIR}/examples/cnn/model.onnx' -o '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/x86.so' && ${qemu_run} '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/x86.so' --random-inputs 2>&1 | grep -F \"was built for x86_64, but this machine is aarch64\"")
add_test(NAME aarch64.x86_rejects_aarch64_artifact
  COMMAND bash -c "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64' && '$<TARGET_FILE:kiln>' compile '${PROJECT_SOURCE_DIR}/examples/cnn/model.onnx' -o '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/arm.so' --target=aarch64-linux-gnu && '$<TARGET_FILE:kiln>' run '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/arm.so' --random-inputs 2>&1 | grep -F \"was built for aarch64, but this machine is x86_64\"")
set_tests_properties(aarch64.rejects_x86_artifact aarch64.x86_rejects_aarch64_artifact
  PROPERTIES LABELS aarch64)

foreach(set pytorch-converted pytorch-operator simple)
  file(GLOB tests LIST_DIRECTORIES true ${KILN_ONNX_TESTDATA}/${set}/test_*)
  foreach(test_dir ${tests})
    get_filename_component(name ${test_dir} NAME)
    add_test(NAME aarch64.onnx.${set}.${name}
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/run_onnx_test.sh $<TARGET_FILE:kiln>
              ${test_dir} ${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/${set}/${name}
              ${KILN_ONNX_XFAIL} ${set}/${name})
    set_tests_properties(aarch64.onnx.${set}.${name} PROPERTIES
      ENVIRONMENT "${aarch64_env}" TIMEOUT 300 LABELS aarch64)
  endforeach()
endforeach()

# `kiln inspect` tells the target of an artifact this machine cannot load.
add_test(NAME aarch64.inspect_shows_target
  COMMAND bash -c "mkdir -p '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64' && '$<TARGET_FILE:kiln>' compile '${PROJECT_SOURCE_DIR}/examples/cnn/model.onnx' -o '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/inspect.so' --target=aarch64-linux-gnu && '$<TARGET_FILE:kiln>' inspect '${CMAKE_CURRENT_BINARY_DIR}/work/aarch64/inspect.so' | grep -x 'triple:    aarch64-unknown-linux-gnu'")
set_tests_properties(aarch64.inspect_shows_target PROPERTIES LABELS aarch64)
