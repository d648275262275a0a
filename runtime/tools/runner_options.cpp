#include "runner_options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace kiln::runner {
namespace {

uint64_t parseUnsigned(const std::string &flag, const std::string &value,
                       uint64_t max) {
  char *end = nullptr;
  errno = 0;
  unsigned long long number = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE ||
      number > max)
    throw UsageError(flag + " expects a whole number up to " +
                     std::to_string(max) + ", got '" + value + "'");
  return number;
}

double parseTolerance(const std::string &flag, const std::string &value) {
  char *end = nullptr;
  double number = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !std::isfinite(number) || number < 0)
    throw UsageError(flag + " expects a non-negative number, got '" + value +
                     "'");
  return number;
}

} // namespace

std::string usageText(Command command, const std::string &program) {
  if (command == Command::Bench)
    return "usage: " + program +
           " MODEL.so [options]\n"
           "Measures the latency of a Kiln artifact on random inputs.\n"
           "  --threads N         worker threads (default: all cores)\n"
           "  --repeat N          timed runs (default 50)\n"
           "  --warmup N          untimed runs first (default 5)\n"
           "  --input NAME=FILE   use FILE (.npy or .pb) for input NAME;\n"
           "  --input FILE        or for the next input in model order\n"
           "  --random-inputs     random values for inputs not given "
           "(implied)\n"
           "  --seed N            random seed (default 0)\n"
           "  --help              show this text\n";
  return "usage: " + program +
         " MODEL.so [options]\n"
         "Runs a Kiln artifact once and prints a summary of each output.\n"
         "  --input NAME=FILE   use FILE (.npy or .pb) for input NAME;\n"
         "  --input FILE        or for the next input in model order\n"
         "  --random-inputs     random values for inputs not given: floats in\n"
         "                      [-1,1), integers in [0,10), random bools\n"
         "  --seed N            random seed (default 0)\n"
         "  --output-dir DIR    write each output to DIR/<name>.npy\n"
         "  --expect NAME=FILE  compare output NAME with FILE;\n"
         "  --expect FILE       or the next output in model order\n"
         "  --rtol X --atol Y   pass if |actual - expected| <= atol + rtol * "
         "|expected|\n"
         "                      (defaults 1e-3 and 1e-7)\n"
         "  --rel-l2 X          pass if ||actual - expected|| <= X * "
         "||expected||\n"
         "                      (L2 norms) instead, for tf32/bf16/fp16 math\n"
         "  --threads N         worker threads (default: all cores)\n"
         "  --help              show this text\n"
         "Exit code: 0 success, 1 error or --expect mismatch, 2 usage error.\n";
}

RunnerOptions parseRunnerOptions(Command command, int argc, char **argv) {
  RunnerOptions options;
  options.command = command;
  options.program = argc > 0 && argv[0] ? argv[0] : "kiln-run";
  bool bench = command == Command::Bench;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      if (!options.model.empty())
        throw UsageError("unexpected argument '" + arg + "'");
      options.model = arg;
      continue;
    }
    // --flag=value or --flag value.
    std::string flag = arg, value;
    bool inlineValue = false;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = arg.substr(0, eq);
      value = arg.substr(eq + 1);
      inlineValue = true;
    }
    auto takeValue = [&]() -> std::string {
      if (inlineValue)
        return value;
      if (i + 1 >= argc)
        throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    auto noValue = [&] {
      if (inlineValue)
        throw UsageError(flag + " takes no value");
    };
    if (flag == "--help" || flag == "-h") {
      options.help = true;
    } else if (flag == "--input") {
      options.inputs.push_back({takeValue()});
    } else if (flag == "--random-inputs") {
      noValue();
      options.randomInputs = true;
    } else if (flag == "--seed") {
      options.seed = parseUnsigned(flag, takeValue(), UINT64_MAX);
    } else if (flag == "--threads") {
      options.threads =
          static_cast<uint32_t>(parseUnsigned(flag, takeValue(), 1024));
    } else if (!bench && flag == "--output-dir") {
      options.outputDir = takeValue();
      if (options.outputDir.empty())
        throw UsageError("--output-dir needs a directory");
    } else if (!bench && flag == "--expect") {
      options.expects.push_back({takeValue()});
    } else if (!bench && flag == "--rtol") {
      options.rtol = parseTolerance(flag, takeValue());
    } else if (!bench && flag == "--atol") {
      options.atol = parseTolerance(flag, takeValue());
    } else if (!bench && flag == "--rel-l2") {
      options.relL2 = parseTolerance(flag, takeValue());
    } else if (bench && flag == "--repeat") {
      options.repeat =
          static_cast<int>(parseUnsigned(flag, takeValue(), 1000000));
      if (options.repeat == 0)
        throw UsageError("--repeat must be at least 1");
    } else if (bench && flag == "--warmup") {
      options.warmup =
          static_cast<int>(parseUnsigned(flag, takeValue(), 1000000));
    } else {
      throw UsageError("unknown option '" + flag + "'");
    }
  }
  if (bench)
    options.randomInputs = true;
  if (!options.help && options.model.empty())
    throw UsageError("no model given");
  return options;
}

} // namespace kiln::runner
