#include "tensor_args.h"

#include "tensor_io.h"
#include "tensor_values.h"

#include <algorithm>
#include <sys/stat.h>

namespace kiln::runner {
namespace {

bool fileExists(const std::string &path) {
  struct stat info;
  return ::stat(path.c_str(), &info) == 0;
}

std::string nameList(const kiln_tensor_desc *descs, uint32_t count) {
  std::string names;
  for (uint32_t i = 0; i < count; ++i)
    names += (i ? ", " : "") + std::string(descs[i].name);
  return names;
}

// The runtime checks this too; checking here lets the message name the file.
/// Dim `d` of `desc` as the model names it: its extent, or its symbol.
std::string dimName(const kiln_artifact_descriptor &descriptor,
                    const kiln_tensor_desc &desc, int32_t d) {
  int32_t symbol = desc.symbols ? desc.symbols[d] : -1;
  if (symbol >= 0)
    return descriptor.symbols[symbol].name;
  return std::to_string(desc.shape[d]);
}

void checkMatches(const kiln_artifact_descriptor &descriptor,
                  const kiln_tensor_desc &desc, const Tensor &tensor,
                  const std::string &path) {
  std::string where =
      "input '" + std::string(desc.name) + "' (from '" + path + "'): ";
  auto dtype = static_cast<kiln_dtype>(desc.dtype);
  if (tensor.dtype() != dtype)
    throw Error(where + "expected " + kiln_dtype_name(dtype) + ", got " +
                kiln_dtype_name(tensor.dtype()));
  // A symbolic dim (-1) takes any extent here; the runtime checks it
  // against its range and the other inputs.
  const std::vector<int64_t> &shape = tensor.shape();
  bool matches = shape.size() == static_cast<size_t>(desc.rank);
  for (int32_t d = 0; matches && d < desc.rank; ++d)
    matches = desc.shape[d] < 0 || desc.shape[d] == shape[d];
  if (!matches) {
    std::string expected = "[";
    for (int32_t i = 0; i < desc.rank; ++i)
      expected += (i ? "," : "") + dimName(descriptor, desc, i);
    throw Error(where + "expected shape " + expected + "], got " +
                shapeText(tensor));
  }
}

/// The shape of a random input: symbolic dims from --dim.
std::vector<int64_t> randomShape(const kiln_artifact_descriptor &descriptor,
                                 const kiln_tensor_desc &desc,
                                 const RunnerOptions &options) {
  std::vector<int64_t> shape(desc.shape, desc.shape + desc.rank);
  for (int32_t d = 0; d < desc.rank; ++d) {
    int32_t symbol = desc.symbols ? desc.symbols[d] : -1;
    if (symbol < 0)
      continue;
    std::string name = descriptor.symbols[symbol].name;
    auto it = std::find_if(options.dims.begin(), options.dims.end(),
                           [&](const auto &dim) { return dim.first == name; });
    if (it == options.dims.end())
      throw Error("input '" + std::string(desc.name) + "' dim " +
                  std::to_string(d) + " is the symbolic dim '" + name +
                  "': give --dim " + name + "=N or --input " + desc.name +
                  "=FILE");
    shape[d] = it->second;
  }
  return shape;
}

} // namespace

std::vector<TensorFile>
resolveTensorFiles(const std::vector<TensorFileArg> &args,
                   const kiln_tensor_desc *descs, uint32_t count,
                   const char *kind) {
  std::vector<TensorFile> files;
  std::vector<bool> taken(count, false);
  std::vector<std::string> positional;
  for (const TensorFileArg &arg : args) {
    size_t eq = arg.text.find('=');
    if (eq == std::string::npos) {
      positional.push_back(arg.text);
      continue;
    }
    std::string name = arg.text.substr(0, eq);
    uint32_t index = 0;
    while (index < count && name != descs[index].name)
      ++index;
    if (index == count) {
      if (fileExists(arg.text)) { // a file name that happens to contain '='
        positional.push_back(arg.text);
        continue;
      }
      throw Error("unknown " + std::string(kind) + " '" + name + "' (model " +
                  kind + "s: " + nameList(descs, count) + ")");
    }
    if (taken[index])
      throw Error(std::string(kind) + " '" + name + "' given twice");
    taken[index] = true;
    files.push_back({index, arg.text.substr(eq + 1)});
  }
  uint32_t next = 0;
  for (const std::string &path : positional) {
    while (next < count && taken[next])
      ++next;
    if (next == count)
      throw Error("more " + std::string(kind) + " files than model " + kind +
                  "s (" + std::to_string(count) + ": " +
                  nameList(descs, count) + ")");
    taken[next] = true;
    files.push_back({next, path});
  }
  return files;
}

std::vector<std::pair<std::string, Tensor>>
loadInputs(const kiln_artifact_descriptor &descriptor,
           const RunnerOptions &options) {
  std::vector<TensorFile> files = resolveTensorFiles(
      options.inputs, descriptor.inputs, descriptor.num_inputs, "input");
  std::vector<Tensor> tensors(descriptor.num_inputs);
  for (const TensorFile &file : files) {
    Tensor tensor = bfloat16FromBits(
        io::readTensorFile(file.path).tensor,
        static_cast<kiln_dtype>(descriptor.inputs[file.index].dtype));
    checkMatches(descriptor, descriptor.inputs[file.index], tensor, file.path);
    tensors[file.index] = std::move(tensor);
  }
  std::mt19937_64 rng(options.seed);
  std::vector<std::pair<std::string, Tensor>> inputs;
  for (uint32_t i = 0; i < descriptor.num_inputs; ++i) {
    const kiln_tensor_desc &desc = descriptor.inputs[i];
    if (!tensors[i]) {
      if (!options.randomInputs)
        throw Error("missing input '" + std::string(desc.name) +
                    "' (give --input " + desc.name +
                    "=FILE, or --random-inputs)");
      tensors[i] = randomTensor(static_cast<kiln_dtype>(desc.dtype),
                                randomShape(descriptor, desc, options), rng);
    }
    inputs.emplace_back(desc.name, std::move(tensors[i]));
  }
  return inputs;
}

std::vector<std::pair<std::string, const Tensor *>>
inputRefs(const std::vector<std::pair<std::string, Tensor>> &inputs) {
  std::vector<std::pair<std::string, const Tensor *>> refs;
  for (const auto &[name, tensor] : inputs)
    refs.emplace_back(name, &tensor);
  return refs;
}

} // namespace kiln::runner
