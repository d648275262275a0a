// Embedding Kiln from C++ (the header-only RAII wrapper): load a compiled
// artifact, feed every input with zeros (symbolic dims at their smallest
// allowed extent, at least 1), run it on 2 threads and print the outputs'
// shapes. Failures arrive as kiln::Error with the runtime's message.
//
//   find_package(KilnRuntime REQUIRED)
//   target_link_libraries(run_model_cpp Kiln::runtime)
#include "kiln/runtime.hpp"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s MODEL.so\n", argv[0]);
    return 2;
  }
  try {
    kiln::Model model(argv[1]);
    kiln::Session session(model, /*numThreads=*/2);
    const kiln_artifact_descriptor &d = model.descriptor();
    std::vector<kiln::Tensor> tensors;
    std::vector<std::pair<std::string, const kiln::Tensor *>> inputs;
    tensors.reserve(d.num_inputs);
    for (uint32_t i = 0; i < d.num_inputs; ++i) {
      const kiln_tensor_desc &in = d.inputs[i];
      std::vector<int64_t> shape(in.shape, in.shape + in.rank);
      for (int32_t k = 0; k < in.rank; ++k)
        if (shape[k] < 0)
          shape[k] = std::max<int64_t>(1, d.symbols[in.symbols[k]].min);
      tensors.push_back(
          kiln::Tensor::create(static_cast<kiln_dtype>(in.dtype), shape));
      inputs.emplace_back(in.name, &tensors.back());
    }
    std::vector<kiln::Tensor> outputs = session.run(inputs);
    for (uint32_t i = 0; i < d.num_outputs; ++i) {
      const kiln_tensor *t = outputs[i].get();
      std::printf("output '%s': %s [", d.outputs[i].name,
                  kiln_dtype_name(kiln_tensor_dtype(t)));
      for (int32_t k = 0; k < kiln_tensor_rank(t); ++k)
        std::printf("%s%lld", k ? "," : "",
                    static_cast<long long>(kiln_tensor_shape(t)[k]));
      std::printf("]\n");
    }
  } catch (const kiln::Error &e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
