# GPU code generation checked without a GPU (docs/gpu.md). Every model is
# compiled for CUDA sm_80 and sm_90a (ptxas assembles every kernel) and for
# HIP gfx90a and gfx942 (code objects; these artifacts are not run), and the
# same kernels compiled for this CPU (--gpu-emulate) run in the runtime's GPU
# emulator against the reference outputs. Included from
# test/e2e/CMakeLists.txt; the HIP-specific tests are in hip.cmake.

find_program(KILN_PTXAS ptxas PATHS $ENV{CUDA_ROOT}/bin /usr/local/cuda/bin)
set(KILN_GPU_EMULATE "KILN_COMPILE_FLAGS=--target=cuda --gpu-emulate")
set(assemble)
if(KILN_PTXAS)
  list(APPEND assemble "--target=cuda --gpu-arch=sm_80,sm_90a")
else()
  message(WARNING "ptxas not found (CUDA toolkit): the GPU tests only "
                  "emulate, nothing is assembled for sm_80/sm_90a")
endif()
# HIP code objects need ROCm's device libraries (rocm-device-libs).
set(KILN_HIP_BUILDS OFF)
if(EXISTS ${KILN_ROCM_DEVICE_LIBS}/ocml.bc)
  set(KILN_HIP_BUILDS ON)
  list(APPEND assemble "--target=hip --gpu-arch=gfx90a,gfx942")
else()
  message(WARNING "no ROCm device libraries: nothing is built for HIP")
endif()
list(JOIN assemble "|" assemble)
set(KILN_GPU_ASSEMBLE "KILN_ASSEMBLE_FLAGS=${assemble}")

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

# Whole models (the graph-pass exports, the attention exports, ResNet-18):
# emulated against onnxruntime, and assembled with no kernel spilling.
# They share the CPU tests' exports (and their locks).
set(KILN_GPU_MODELS)
foreach(model bert_encoder bert_opset14 gpt2_blocks inception_block
              concat_chain)
  list(APPEND KILN_GPU_MODELS
       "graph.${model}\;${CMAKE_CURRENT_BINARY_DIR}/work/graph_models/${model}\;python3 '${KILN_GRAPH_EXPORT}' ${model}\;graph_models.${model}")
endforeach()
foreach(entry ${KILN_ATTENTION_MODELS})
  list(GET entry 0 model)
  list(APPEND KILN_GPU_MODELS
       "attention.${model}\;${CMAKE_CURRENT_BINARY_DIR}/work/attention/${model}\;python3 '${KILN_ATTENTION_EXPORT}' ${model}\;attention.${model}")
endforeach()
list(APPEND KILN_GPU_MODELS
     "resnet18\;${CMAKE_CURRENT_BINARY_DIR}/work/models/resnet18\;python3 '${CMAKE_CURRENT_SOURCE_DIR}/models/export_torchvision.py' resnet18\;models.resnet18")
foreach(entry ${KILN_GPU_MODELS})
  list(GET entry 0 name)
  list(GET entry 1 work)
  list(GET entry 2 export)
  list(GET entry 3 lock)
  set(export "${export} '${work}/onnx' >/dev/null || exit $?")
  add_test(NAME gpu.models.${name}
    COMMAND bash -c "${export}; KILN_COMPILE_FLAGS='--target=cuda --gpu-emulate' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/gpu-emulated'")
  add_test(NAME gpu.models.${name}.assemble
    COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_assembly.sh' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/gpu-cuda'")
  set_tests_properties(gpu.models.${name} gpu.models.${name}.assemble
    PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "gpu;models"
    RESOURCE_LOCK ${lock})
endforeach()

# Tensor-core kernels (--gpu-precision): emulated (the emulator runs
# mma.sync as a warp-collective product) within 1e-2 relative L2 error of
# onnxruntime's fp32 outputs, and assembled without spills.
foreach(precision tf32 bf16 fp16)
  set(flags "--target=cuda --gpu-emulate --gpu-precision=${precision}")
  foreach(example cnn transformer)
    add_test(NAME gpu.${precision}.examples.${example}
      COMMAND ${CMAKE_COMMAND} -E env "KILN_COMPILE_FLAGS=${flags}"
              KILN_REL_L2=1e-2 ${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh
              $<TARGET_FILE:kiln> ${PROJECT_SOURCE_DIR}/examples/${example}
              ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/${precision}/${example})
    add_test(NAME gpu.${precision}.examples.${example}.assemble
      COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_assembly.sh
              $<TARGET_FILE:kiln> ${PROJECT_SOURCE_DIR}/examples/${example}/model.onnx
              ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/${precision}/${example}-cuda
              --gpu-precision=${precision})
    set_tests_properties(gpu.${precision}.examples.${example}
      gpu.${precision}.examples.${example}.assemble PROPERTIES LABELS gpu)
  endforeach()
  set(models graph.bert_encoder graph.gpt2_blocks)
  if(precision STREQUAL "bf16")
    list(APPEND models resnet18) # the widest error: 8-bit mantissas
  endif()
  if(NOT precision STREQUAL "tf32")
    # Attention on tensor cores (AttentionMma.cpp): causal, additive and
    # padding masks (-inf, and finfo.min hiding every key of a sequence),
    # Sq != Sk with dv != d, head 128.
    list(APPEND models attention.sdpa_causal attention.bhsd_additive_mask
         attention.bshd_hf attention.bshd_hf_min_mask attention.bhsd_mul
         attention.bhsd_head128)
  endif()
  foreach(entry ${KILN_GPU_MODELS})
    list(GET entry 0 name)
    if(NOT name IN_LIST models)
      continue()
    endif()
    list(GET entry 1 work)
    list(GET entry 2 export)
    list(GET entry 3 lock)
    add_test(NAME gpu.${precision}.models.${name}
      COMMAND bash -c "${export} '${work}/onnx' >/dev/null || exit $?; KILN_REL_L2=1e-2 KILN_COMPILE_FLAGS='${flags}' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/gpu-${precision}'")
    set_tests_properties(gpu.${precision}.models.${name} PROPERTIES
      SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS "gpu;models"
      RESOURCE_LOCK ${lock})
  endforeach()
endforeach()

# Contractions large enough for the tensor-core kernel's 128x128 tiles,
# with ragged edges: emulated at each precision against numpy's float64
# product within 1e-2 relative L2 error, and assembled without spills.
set(work ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/large_matmul)
set(export "python3 '${CMAKE_CURRENT_SOURCE_DIR}/models/export_large_matmul.py' '${work}/onnx' || exit $?")
foreach(precision tf32 bf16 fp16)
  add_test(NAME gpu.${precision}.models.large_matmul
    COMMAND bash -c "${export}; KILN_REL_L2=1e-2 KILN_COMPILE_FLAGS='--target=cuda --gpu-emulate --gpu-precision=${precision}' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/${precision}'")
  add_test(NAME gpu.${precision}.models.large_matmul.assemble
    COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_assembly.sh' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/${precision}-cuda' --gpu-precision=${precision}")
  set_tests_properties(gpu.${precision}.models.large_matmul
    gpu.${precision}.models.large_matmul.assemble PROPERTIES
    SKIP_RETURN_CODE 77 LABELS "gpu;models" RESOURCE_LOCK gpu.large_matmul)
endforeach()

# Half-precision models: their contractions and attention run on tensor
# cores natively (mma.sync with f32 accumulation), emulated against numpy
# within 1e-2 relative L2 error, and assembled without spills.
foreach(kind matmul sliced_matmul attention)
  foreach(type float16 bfloat16)
    set(name half_${kind}_${type})
    set(work ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/${name})
    set(export "python3 '${CMAKE_CURRENT_SOURCE_DIR}/models/export_half_models.py' ${type} '${work}/onnx' ${kind} || exit $?")
    add_test(NAME gpu.models.${name}
      COMMAND bash -c "${export}; KILN_REL_L2=1e-2 KILN_COMPILE_FLAGS='--target=cuda --gpu-emulate' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/emulated'")
    add_test(NAME gpu.models.${name}.assemble
      COMMAND bash -c "${export}; '${CMAKE_CURRENT_SOURCE_DIR}/check_gpu_assembly.sh' '$<TARGET_FILE:kiln>' '${work}/onnx/model.onnx' '${work}/cuda'")
    set(tests gpu.models.${name} gpu.models.${name}.assemble)
    if(kind STREQUAL "matmul")
      # Below sm_80 the same contractions are SIMT kernels computing in f32.
      add_test(NAME gpu.models.${name}.sm_75
        COMMAND bash -c "${export}; KILN_REL_L2=1e-2 KILN_COMPILE_FLAGS='--target=cuda --gpu-emulate --gpu-arch=sm_75' '${CMAKE_CURRENT_SOURCE_DIR}/run_example.sh' '$<TARGET_FILE:kiln>' '${work}/onnx' '${work}/sm_75'")
      list(APPEND tests gpu.models.${name}.sm_75)
    endif()
    set_tests_properties(${tests} PROPERTIES
      SKIP_RETURN_CODE 77 LABELS "gpu;models" RESOURCE_LOCK gpu.${name})
  endforeach()
endforeach()

# A toolkit whose ptxas lacks --split-compile still assembles.
add_test(NAME gpu.old_ptxas
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/check_old_ptxas.sh $<TARGET_FILE:kiln>
          ${CMAKE_CURRENT_SOURCE_DIR}/autotune/matmul.onnx
          ${CMAKE_CURRENT_BINARY_DIR}/work/gpu/old_ptxas)
set_tests_properties(gpu.old_ptxas PROPERTIES SKIP_RETURN_CODE 77
  LABELS gpu)

# GPU flags the compiler refuses, each with its message.
set(gpu_model ${CMAKE_CURRENT_SOURCE_DIR}/autotune/matmul.onnx)
add_test(NAME gpu.flags.precision_needs_sm80
  COMMAND kiln compile ${gpu_model} -o unused.so --target=cuda
          --gpu-arch=sm_90a,sm_75 --gpu-precision=tf32)
set_tests_properties(gpu.flags.precision_needs_sm80 PROPERTIES
  PASS_REGULAR_EXPRESSION "^error: --gpu-precision=tf32 runs on the tensor cores of sm_80 and newer, and --gpu-arch includes sm_75; drop it from --gpu-arch or compile with fp32\n$")
add_test(NAME gpu.flags.precision_needs_O1
  COMMAND kiln compile ${gpu_model} -o unused.so --target=cuda -O0
          --gpu-precision=bf16)
set_tests_properties(gpu.flags.precision_needs_O1 PROPERTIES
  PASS_REGULAR_EXPRESSION "^error: --gpu-precision=bf16 selects the tensor-core kernels of -O1 and up; -O0 computes in fp32\n$")
add_test(NAME gpu.flags.unknown_arch
  COMMAND kiln compile ${gpu_model} -o unused.so --target=cuda
          --gpu-arch=sm_61)
set_tests_properties(gpu.flags.unknown_arch PROPERTIES
  PASS_REGULAR_EXPRESSION "^error: unknown --gpu-arch 'sm_61' for --target=cuda; accepted: sm_75 to sm_121")
add_test(NAME gpu.flags.needs_gpu_target
  COMMAND kiln compile ${gpu_model} -o unused.so --gpu-precision=tf32)
set_tests_properties(gpu.flags.needs_gpu_target PROPERTIES
  PASS_REGULAR_EXPRESSION "^error: --gpu-precision needs a GPU target \\(--target=cuda or --target=hip\\)\n$")
set_tests_properties(gpu.flags.precision_needs_sm80
  gpu.flags.precision_needs_O1 gpu.flags.unknown_arch
  gpu.flags.needs_gpu_target PROPERTIES LABELS gpu)
