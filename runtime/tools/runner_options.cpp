// Command-line options of the run and bench commands: one table declares
// each option (spelling, value, group, the commands that take it, its help,
// what it sets); the parser and the --help text both come from it. The
// runner has no LLVM (it is also the runtime-only kiln-run), so this is its
// own small layer rather than llvm::cl.
#include "runner_options.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>

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

enum Takers { kRun = 1, kBench = 2, kBoth = 3 };

struct OptionSpec {
  const char *flag;
  const char *value; // "" for a switch
  const char *group; // the help section
  int commands;      // Takers
  const char *help;  // lines separated by '\n'
  std::function<void(RunnerOptions &, const std::string &flag,
                     const std::string &value)>
      apply;
};

const std::vector<OptionSpec> &optionTable() {
  static const std::vector<OptionSpec> table = {
      {"--input", "NAME=FILE", "Inputs", kBoth,
       "use FILE (.npy or .pb) for input NAME;\n"
       "--input FILE: for the next input in model order",
       [](RunnerOptions &o, const std::string &, const std::string &v) {
         o.inputs.push_back({v});
       }},
      {"--random-inputs", "", "Inputs", kBoth,
       "random values for inputs not given (bench: always):\n"
       "floats in [-1,1), integers in [0,10), random bools",
       [](RunnerOptions &o, const std::string &, const std::string &) {
         o.randomInputs = true;
       }},
      {"--seed", "N", "Inputs", kBoth, "random seed (default 0)",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.seed = parseUnsigned(f, v, UINT64_MAX);
       }},
      {"--dim", "NAME=N", "Inputs", kBoth,
       "extent N of symbolic dim NAME (\"batch\", \"seq\") for\n"
       "random inputs",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         size_t eq = v.find('=');
         if (eq == std::string::npos || eq == 0)
           throw UsageError(f + " takes NAME=N (got '" + v + "')");
         o.dims.emplace_back(
             v.substr(0, eq),
             int64_t(parseUnsigned(f, v.substr(eq + 1), INT64_MAX)));
       }},
      {"--output-dir", "DIR", "Outputs", kRun,
       "write each output to DIR/<name>.npy",
       [](RunnerOptions &o, const std::string &, const std::string &v) {
         if (v.empty())
           throw UsageError("--output-dir needs a directory");
         o.outputDir = v;
       }},
      {"--expect", "NAME=FILE", "Outputs", kRun,
       "compare output NAME with FILE;\n"
       "--expect FILE: the next output in model order",
       [](RunnerOptions &o, const std::string &, const std::string &v) {
         o.expects.push_back({v});
       }},
      {"--rtol", "X", "Outputs", kRun,
       "pass if |actual - expected| <= atol + rtol * |expected|\n"
       "(defaults: rtol 1e-3, atol 1e-7)",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.rtol = parseTolerance(f, v);
       }},
      {"--atol", "Y", "Outputs", kRun, "the absolute tolerance of --rtol",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.atol = parseTolerance(f, v);
       }},
      {"--rel-l2", "X", "Outputs", kRun,
       "pass if ||actual - expected|| <= X * ||expected||\n"
       "(L2 norms) instead, for tf32/bf16/fp16 math",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.relL2 = parseTolerance(f, v);
       }},
      {"--threads", "N", "Execution", kBoth,
       "worker threads (default: all cores)",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.threads = static_cast<uint32_t>(parseUnsigned(f, v, 1024));
       }},
      {"--repeat", "N", "Execution", kBench, "timed runs (default 50)",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.repeat = static_cast<int>(parseUnsigned(f, v, 1000000));
         if (o.repeat == 0)
           throw UsageError("--repeat must be at least 1");
       }},
      {"--warmup", "N", "Execution", kBench, "untimed runs first (default 5)",
       [](RunnerOptions &o, const std::string &f, const std::string &v) {
         o.warmup = static_cast<int>(parseUnsigned(f, v, 1000000));
       }},
      {"--help", "", "General", kBoth, "show this text",
       [](RunnerOptions &o, const std::string &, const std::string &) {
         o.help = true;
       }},
  };
  return table;
}

int takerOf(Command command) {
  return command == Command::Bench ? kBench : kRun;
}

/// Edit distance, for suggesting the nearest spelling.
size_t distance(const std::string &a, const std::string &b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

[[noreturn]] void unknownOption(Command command, const std::string &flag) {
  const OptionSpec *nearest = nullptr;
  size_t best = 3; // at most 2 edits away
  for (const OptionSpec &spec : optionTable())
    if (spec.commands & takerOf(command))
      if (size_t d = distance(flag, spec.flag); d < best) {
        best = d;
        nearest = &spec;
      }
  std::string message = "unknown option '" + flag + "'";
  if (nearest)
    message += "; did you mean '" + std::string(nearest->flag) + "'?";
  throw UsageError(message);
}

/// argv with each @FILE replaced by FILE's whitespace-separated words
/// (response files, as LLVM's tools and GCC read them; nested ones too).
std::vector<std::string> expandResponseFiles(int argc, char **argv) {
  std::vector<std::string> args;
  std::function<void(const std::string &, int)> add =
      [&](const std::string &arg, int depth) {
        if (arg.size() < 2 || arg[0] != '@') {
          args.push_back(arg);
          return;
        }
        std::ifstream file(arg.substr(1));
        if (!file)
          throw UsageError("cannot read the response file '" + arg.substr(1) +
                           "'");
        if (depth > 8)
          throw UsageError("response files nest too deeply at '" + arg + "'");
        std::string word;
        while (file >> word)
          add(word, depth + 1);
      };
  for (int i = 1; i < argc; ++i)
    add(argv[i], 0);
  return args;
}

} // namespace

std::string usageText(Command command, const std::string &program) {
  bool bench = command == Command::Bench;
  std::string text = "usage: " + program + " MODEL.so [options]\n";
  text += bench ? "Measures the latency of a Kiln artifact on random inputs "
                  "(or the given ones).\n"
                : "Runs a Kiln artifact once and prints a summary of each "
                  "output.\n";
  std::vector<std::string> groups;
  for (const OptionSpec &spec : optionTable())
    if ((spec.commands & takerOf(command)) &&
        std::find(groups.begin(), groups.end(), spec.group) == groups.end())
      groups.push_back(spec.group);
  for (const std::string &group : groups) {
    text += "\n" + group + ":\n";
    for (const OptionSpec &spec : optionTable()) {
      if (!(spec.commands & takerOf(command)) || group != spec.group)
        continue;
      std::string head = "  " + std::string(spec.flag);
      if (*spec.value)
        head += " " + std::string(spec.value);
      head.resize(std::max<size_t>(head.size() + 2, 22), ' ');
      std::string help = spec.help;
      size_t start = 0;
      for (bool first = true; start <= help.size(); first = false) {
        size_t end = help.find('\n', start);
        if (end == std::string::npos)
          end = help.size();
        text += (first ? head : std::string(head.size(), ' ')) +
                help.substr(start, end - start) + "\n";
        start = end + 1;
      }
    }
  }
  if (!bench)
    text += "\nExit code: 0 success, 1 error or --expect mismatch, 2 usage "
            "error.\n";
  return text;
}

RunnerOptions parseRunnerOptions(Command command, int argc, char **argv) {
  RunnerOptions options;
  options.command = command;
  options.program = argc > 0 && argv[0] ? argv[0] : "kiln-run";
  std::vector<std::string> args = expandResponseFiles(argc, argv);
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string &arg = args[i];
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
    if (flag == "-h")
      flag = "--help";
    auto spec = std::find_if(
        optionTable().begin(), optionTable().end(), [&](const OptionSpec &s) {
          return flag == s.flag && (s.commands & takerOf(command));
        });
    if (spec == optionTable().end())
      unknownOption(command, flag);
    if (!*spec->value) {
      if (inlineValue)
        throw UsageError(flag + " takes no value");
    } else if (!inlineValue) {
      if (i + 1 >= args.size())
        throw UsageError(flag + " needs a value");
      value = args[++i];
    }
    spec->apply(options, flag, value);
  }
  if (command == Command::Bench)
    options.randomInputs = true;
  if (!options.help && options.model.empty())
    throw UsageError("no model given");
  return options;
}

} // namespace kiln::runner
