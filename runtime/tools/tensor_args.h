// Turns --input/--expect arguments into (tensor index, file) pairs once the
// model's names are known, and loads the model's inputs.
#ifndef KILN_TOOLS_TENSOR_ARGS_H
#define KILN_TOOLS_TENSOR_ARGS_H

#include "runner_options.h"

#include "kiln/runtime.hpp"

#include <random>
#include <string>
#include <utility>
#include <vector>

namespace kiln::runner {

struct TensorFile {
  uint32_t index; // in descriptor order
  std::string path;
};

// "NAME=FILE" when NAME is one of `descs`' names; otherwise "FILE" (which
// may contain '=') for the next tensor in descriptor order that was not
// named. `kind` is "input" or "output", for messages. Throws kiln::Error.
std::vector<TensorFile>
resolveTensorFiles(const std::vector<TensorFileArg> &args,
                   const kiln_tensor_desc *descs, uint32_t count,
                   const char *kind);

// The model's inputs in descriptor order: from files, else random (if
// options.randomInputs), else an error naming the missing input.
std::vector<std::pair<std::string, Tensor>>
loadInputs(const kiln_artifact_descriptor &descriptor,
           const RunnerOptions &options);

// Pointers for Session::run.
std::vector<std::pair<std::string, const Tensor *>>
inputRefs(const std::vector<std::pair<std::string, Tensor>> &inputs);

} // namespace kiln::runner

#endif // KILN_TOOLS_TENSOR_ARGS_H
