// kilnRunMain / kilnBenchMain end to end on the fake artifacts.
#include <catch.hpp>

#include "test_support.h"

#include "output_files.h"
#include "runner.h"
#include "tensor_io.h"

#include <fstream>
#include <sys/stat.h>

using kiln::Tensor;
using kiln::test::CommandResult;
using kiln::test::fixturePath;
using kiln::test::runCommand;
using kiln::test::scratchPath;

namespace {

// x = [[0,1,2],[3,4,5]] - 2, and y = x + 1, as .npy files.
void writeAddOneData(const std::string &xPath, const std::string &yPath,
                     float yOffset = 0) {
  Tensor x = Tensor::create(KILN_DTYPE_F32, {2, 3});
  Tensor y = Tensor::create(KILN_DTYPE_F32, {2, 3});
  for (int i = 0; i < 6; ++i) {
    x.data<float>()[i] = static_cast<float>(i) - 2;
    y.data<float>()[i] = static_cast<float>(i) - 1 + yOffset;
  }
  kiln::io::writeNpy(xPath, x);
  kiln::io::writeNpy(yPath, y);
}

CommandResult run(const std::vector<std::string> &args) {
  std::vector<std::string> argv = {"kiln run"};
  argv.insert(argv.end(), args.begin(), args.end());
  return runCommand(kilnRunMain, argv);
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("run with --expect passes on the right answer", "[runner]") {
  std::string x = scratchPath("x.npy"), y = scratchPath("y.npy");
  writeAddOneData(x, y);
  CommandResult result = run({fixturePath("add_one"), "--input", "x=" + x,
                              "--expect", y, "--threads", "2"});
  INFO(result.out << result.err);
  CHECK(result.exitCode == 0);
  CHECK(contains(result.out,
                 "output 'y': float32 [2,3] min=-1 max=4 mean=1.5\n"));
  CHECK(contains(result.out, "run time: "));
  CHECK(contains(result.out, "ms (2 threads)\n"));
  CHECK(contains(
      result.out,
      "expect 'y': PASS (max abs error 0, max rel error 0, rel L2 error 0)\n"));
  CHECK(result.err.empty());

  // By order, with --flag=value spelling.
  result = run({fixturePath("add_one"), "--input=" + x, "--expect=y=" + y});
  CHECK(result.exitCode == 0);
}

TEST_CASE("run with --expect fails on a wrong answer", "[runner]") {
  std::string x = scratchPath("x.npy"), y = scratchPath("y_wrong.npy");
  writeAddOneData(x, y, /*yOffset=*/0.01f);
  CommandResult result = run({fixturePath("add_one"), "--input", x, "--expect",
                              y, "--atol", "0", "--rtol", "1e-3"});
  INFO(result.out << result.err);
  CHECK(result.exitCode == 1);
  CHECK(contains(result.out, "expect 'y': FAIL (max abs error 0.01"));
  CHECK(contains(result.out, "elements outside tolerance"));
  // Loose enough tolerances pass.
  result = run(
      {fixturePath("add_one"), "--input", x, "--expect", y, "--atol", "0.02"});
  CHECK(result.exitCode == 0);
}

TEST_CASE("--expect checks dtype and shape", "[runner]") {
  std::string x = scratchPath("x.npy"), y = scratchPath("y.npy");
  writeAddOneData(x, y);
  std::string ints = scratchPath("y_int.npy");
  kiln::io::writeNpy(ints, Tensor::create(KILN_DTYPE_I64, {2, 3}));
  CommandResult result =
      run({fixturePath("add_one"), "--input", x, "--expect", ints});
  CHECK(result.exitCode == 1);
  CHECK(
      contains(result.out, "expect 'y': FAIL (dtype float32, expected int64)"));
  std::string wide = scratchPath("y_wide.npy");
  kiln::io::writeNpy(wide, Tensor::create(KILN_DTYPE_F32, {3, 2}));
  result = run({fixturePath("add_one"), "--input", x, "--expect", wide});
  CHECK(result.exitCode == 1);
  CHECK(contains(result.out, "expect 'y': FAIL (shape [2,3], expected [3,2])"));
}

TEST_CASE("run reports bad inputs as one error line", "[runner]") {
  std::string x = scratchPath("x.npy"), y = scratchPath("y.npy");
  writeAddOneData(x, y);
  CommandResult result = run({fixturePath("add_one"), "--input", "z=" + x});
  CHECK(result.exitCode == 1);
  CHECK(result.err == "error: unknown input 'z' (model inputs: x)\n");
  result = run({fixturePath("add_one")});
  CHECK(result.err ==
        "error: missing input 'x' (give --input x=FILE, or --random-inputs)\n");
  result = run({fixturePath("add_one"), "--input", x, "--input", x});
  CHECK(result.err == "error: more input files than model inputs (1: x)\n");
  std::string ints = scratchPath("x_int.npy");
  kiln::io::writeNpy(ints, Tensor::create(KILN_DTYPE_I64, {2, 3}));
  result = run({fixturePath("add_one"), "--input", ints});
  CHECK(result.err == "error: input 'x' (from '" + ints +
                          "'): expected float32, got int64\n");
  std::string shortX = scratchPath("x_short.npy");
  kiln::io::writeNpy(shortX, Tensor::create(KILN_DTYPE_F32, {2}));
  result = run({fixturePath("add_one"), "--input", shortX});
  CHECK(result.err == "error: input 'x' (from '" + shortX +
                          "'): expected shape [2,3], got [2]\n");
  result =
      run({fixturePath("add_one"), "--random-inputs", "--expect", "nope=" + y});
  CHECK(result.err == "error: unknown output 'nope' (model outputs: y)\n");
  result = run({fixturePath("add_one_bad_abi"), "--random-inputs"});
  CHECK(result.exitCode == 1);
  CHECK(result.err == "error: '" + fixturePath("add_one_bad_abi") +
                          "' uses kiln ABI version 7, this runtime supports "
                          "version " +
                          std::to_string(KILN_ABI_VERSION) + "\n");
  result = run({fixturePath("add_one_fails"), "--random-inputs"});
  CHECK(result.err == "error: the model's entry point failed with code 3\n");
}

TEST_CASE("usage errors exit with 2, --help with 0", "[runner]") {
  CommandResult result = run({});
  CHECK(result.exitCode == 2);
  CHECK(result.err == "error: no model given (see kiln run --help)\n");
  result = run({fixturePath("add_one"), "--bogus"});
  CHECK(result.exitCode == 2);
  CHECK(contains(result.err, "error: unknown option '--bogus'"));
  result = run({fixturePath("add_one"), "--threads", "many"});
  CHECK(result.exitCode == 2);
  CHECK(contains(result.err,
                 "error: --threads expects a whole number up to 1024, got "
                 "'many'"));
  result = run({fixturePath("add_one"), "--input"});
  CHECK(result.exitCode == 2);
  CHECK(contains(result.err, "error: --input needs a value"));
  result = run({fixturePath("add_one"), "--repeat", "3"}); // a bench option
  CHECK(result.exitCode == 2);
  result = run({fixturePath("add_one"), "--expcet", "y.npy"});
  CHECK(result.exitCode == 2);
  CHECK(result.err == "error: unknown option '--expcet'; did you mean "
                      "'--expect'? (see kiln run --help)\n");
  result = run({"--help"});
  CHECK(result.exitCode == 0);
  CHECK(contains(result.out, "usage: kiln run MODEL.so [options]"));
  CHECK(contains(result.out, "\nOutputs:\n  --output-dir DIR    write each"));
  CHECK(contains(result.out, "--expect NAME=FILE"));
  CHECK(!contains(result.out, "--repeat")); // bench's
}

TEST_CASE("options can come from a response file", "[runner]") {
  std::string args = scratchPath("args.txt");
  {
    std::ofstream file(args);
    file << "--random-inputs\n--seed 3\n";
  }
  CommandResult fromFile = run({fixturePath("add_one"), "@" + args});
  CommandResult direct =
      run({fixturePath("add_one"), "--random-inputs", "--seed", "3"});
  auto firstLine = [](const std::string &out) {
    return out.substr(0, out.find('\n')); // the output summary, not timing
  };
  CHECK(fromFile.exitCode == 0);
  CHECK(firstLine(fromFile.out) == firstLine(direct.out));
  CHECK(contains(fromFile.out, "output 'y': float32 [2,3]"));
  CommandResult missing = run({fixturePath("add_one"), "@/no/such/args"});
  CHECK(missing.exitCode == 2);
  CHECK(contains(missing.err,
                 "error: cannot read the response file '/no/such/args'"));
}

TEST_CASE("random inputs are reproducible from the seed", "[runner]") {
  auto outputLine = [](const std::string &seed) {
    CommandResult result =
        run({fixturePath("add_one"), "--random-inputs", "--seed", seed});
    CHECK(result.exitCode == 0);
    return result.out.substr(0, result.out.find('\n'));
  };
  CHECK(outputLine("1") == outputLine("1"));
  CHECK(outputLine("1") != outputLine("2"));
  // Floats in [-1, 1) plus one.
  CommandResult result = run({fixturePath("add_one"), "--random-inputs"});
  CHECK(contains(result.out, "output 'y': float32 [2,3] min=0."));
}

TEST_CASE("--output-dir writes sanitized .npy files", "[runner]") {
  std::string dir = scratchPath("outputs/nested");
  CommandResult result =
      run({fixturePath("two_inputs"), "--random-inputs", "--output-dir", dir});
  INFO(result.out << result.err);
  REQUIRE(result.exitCode == 0);
  CHECK(contains(result.out, "output 'out/sum:0': float32 [2,2]"));
  CHECK(contains(result.out, "output '..': int64 [] min="));
  CHECK(contains(result.out, "wrote " + dir + "/out_sum_0.npy\n"));
  CHECK(contains(result.out, "wrote " + dir + "/_..npy\n"));
  Tensor count = kiln::io::readNpy(dir + "/_..npy");
  CHECK(count.dtype() == KILN_DTYPE_I64);
  CHECK(count.rank() == 0);

  // Feeding the written output back in by name, and checking against it.
  result = run({fixturePath("two_inputs"), "--random-inputs", "--expect",
                "out/sum:0=" + dir + "/out_sum_0.npy"});
  CHECK(result.exitCode == 0);
  CHECK(contains(result.out, "expect 'out/sum:0': PASS"));
}

TEST_CASE("--output-dir never overwrites an input", "[runner]") {
  std::string dir = scratchPath("clobber");
  ::mkdir(dir.c_str(), 0777);
  std::string x = dir + "/y.npy", unused = scratchPath("unused.npy");
  writeAddOneData(x, unused);
  CommandResult result =
      run({fixturePath("add_one"), "--input", "x=" + x, "--output-dir", dir});
  CHECK(result.exitCode == 1);
  CHECK(result.err == "error: refusing to overwrite '" + dir +
                          "/y.npy': it is an input of this run ('" + x +
                          "')\n");
  // The input is intact.
  CHECK(kiln::io::readNpy(x).data<float>()[0] == -2.0f);
}

TEST_CASE("output file names are safe", "[runner]") {
  using kiln::runner::sanitizeFileName;
  CHECK(sanitizeFileName("logits") == "logits");
  CHECK(sanitizeFileName("a/b:0") == "a_b_0");
  CHECK(sanitizeFileName("..") == "_.");
  CHECK(sanitizeFileName(".hidden") == "_hidden");
  CHECK(sanitizeFileName("") == "output");
  CHECK(sanitizeFileName("x y\n") == "x_y_");
}

TEST_CASE("bench prints latency and memory", "[runner]") {
  CommandResult result = runCommand(
      kilnBenchMain, {"kiln bench", fixturePath("add_one"), "--repeat", "7",
                      "--warmup", "1", "--threads", "2"});
  INFO(result.err);
  CHECK(result.exitCode == 0);
  CHECK(contains(result.out, "(2 threads, 1 warmup, 7 runs)\n"));
  CHECK(contains(result.out, "latency: median "));
  CHECK(contains(result.out, "peak RSS: "));
  result = runCommand(kilnBenchMain,
                      {"kiln bench", fixturePath("add_one"), "--expect", "y"});
  CHECK(result.exitCode == 2); // not a bench option
  result = runCommand(kilnBenchMain,
                      {"kiln bench", fixturePath("add_one"), "--repeat", "0"});
  CHECK(result.exitCode == 2);
}
