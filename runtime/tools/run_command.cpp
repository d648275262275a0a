// `run`: one run of an artifact, with input files or random inputs, an
// optional comparison against expected outputs, and optional .npy outputs.
#include "runner.h"

#include "command_main.h"
#include "output_files.h"
#include "tensor_args.h"
#include "tensor_compare.h"
#include "tensor_io.h"
#include "tensor_values.h"

#include <chrono>
#include <cstdio>

namespace kiln::runner {
namespace {

// Compares each --expect file with its output; prints one line per output
// and returns whether all passed.
bool checkExpectations(const kiln_artifact_descriptor &descriptor,
                       const RunnerOptions &options,
                       const std::vector<Tensor> &outputs) {
  std::vector<TensorFile> files = resolveTensorFiles(
      options.expects, descriptor.outputs, descriptor.num_outputs, "output");
  bool allPass = true;
  for (const TensorFile &file : files) {
    const Tensor &actual = outputs[file.index];
    Tensor expected =
        bfloat16FromBits(io::readTensorFile(file.path).tensor, actual.dtype());
    Comparison comparison = compareTensors(actual, expected, options.rtol,
                                           options.atol, options.relL2);
    allPass = allPass && comparison.pass;
    std::printf("expect '%s': %s\n", descriptor.outputs[file.index].name,
                describe(comparison, actual, expected).c_str());
  }
  return allPass;
}

void writeOutputs(const kiln_artifact_descriptor &descriptor,
                  const RunnerOptions &options,
                  const std::vector<Tensor> &outputs) {
  std::vector<std::string> paths =
      outputFilePaths(options.outputDir, descriptor);
  std::vector<std::string> readFiles;
  for (const auto *args : {&options.inputs, &options.expects})
    for (const TensorFileArg &arg : *args) {
      readFiles.push_back(arg.text);
      if (size_t eq = arg.text.find('='); eq != std::string::npos)
        readFiles.push_back(arg.text.substr(eq + 1));
    }
  readFiles.push_back(options.model);
  checkNoOverwrite(paths, readFiles);
  createDirectories(options.outputDir);
  for (size_t i = 0; i < outputs.size(); ++i) {
    io::writeNpy(paths[i], outputs[i]);
    std::printf("wrote %s\n", paths[i].c_str());
  }
}

int run(const RunnerOptions &options) {
  Model model(options.model);
  const kiln_artifact_descriptor &descriptor = model.descriptor();
  std::vector<std::pair<std::string, Tensor>> inputs =
      loadInputs(descriptor, options);
  // Resolve --expect names before the run, so a typo fails fast.
  resolveTensorFiles(options.expects, descriptor.outputs,
                     descriptor.num_outputs, "output");
  Session session(model, options.threads);

  auto start = std::chrono::steady_clock::now();
  std::vector<Tensor> outputs = session.run(inputRefs(inputs));
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;

  for (uint32_t i = 0; i < descriptor.num_outputs; ++i)
    std::printf("output '%s': %s\n", descriptor.outputs[i].name,
                summarize(outputs[i]).c_str());
  std::printf("run time: %.3f ms (%u threads)\n", elapsed.count(),
              session.numThreads());
  bool pass = checkExpectations(descriptor, options, outputs);
  if (!options.outputDir.empty())
    writeOutputs(descriptor, options, outputs);
  std::fflush(stdout);
  return pass ? 0 : 1;
}

} // namespace
} // namespace kiln::runner

int kilnRunMain(int argc, char **argv, const KilnModelPreparer &prepare) {
  return kiln::runner::commandMain(kiln::runner::Command::Run, argc, argv,
                                   kiln::runner::run, prepare);
}

int kilnRunMain(int argc, char **argv) {
  return kilnRunMain(argc, argv, nullptr);
}
