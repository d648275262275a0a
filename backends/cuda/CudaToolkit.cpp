//===- CudaToolkit.cpp - ptxas and fatbinary from the CUDA toolkit --------===//
#include "backends/cuda/CudaToolkit.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <optional>
#include <vector>

using namespace mlir;
using namespace mlir::kiln;

namespace {
bool hasTool(llvm::StringRef root, llvm::StringRef tool) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "bin", tool);
  return llvm::sys::fs::can_execute(path);
}

std::string toolPath(llvm::StringRef root, llvm::StringRef tool) {
  llvm::SmallString<256> path(root);
  llvm::sys::path::append(path, "bin", tool);
  return path.str().str();
}

/// A temporary file that is removed when this goes out of scope.
struct TempFile {
  llvm::SmallString<128> path;
  std::optional<llvm::FileRemover> remover;

  LogicalResult create(llvm::StringRef prefix, llvm::StringRef suffix,
                       std::string &error) {
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile(prefix, suffix, path)) {
      error = "cannot create a temporary file: " + ec.message();
      return failure();
    }
    remover.emplace(path);
    return success();
  }
  LogicalResult write(llvm::StringRef bytes, std::string &error) {
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec)
      os << bytes;
    if (ec || os.has_error()) {
      error = ("cannot write '" + path + "'").str();
      return failure();
    }
    return success();
  }
  FailureOr<std::string> read(std::string &error) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
    if (!buffer) {
      error = ("cannot read '" + path + "'").str();
      return failure();
    }
    return (*buffer)->getBuffer().str();
  }
};

/// Runs `args` (args[0] the program) with stderr to `log`; fails with the
/// tool's own output as the error.
LogicalResult run(llvm::ArrayRef<llvm::StringRef> args, TempFile &log,
                  std::string &error) {
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log.path.str(),
                                                log.path.str()};
  std::string message;
  int status = llvm::sys::ExecuteAndWait(args[0], args, std::nullopt, redirects,
                                         0, 0, &message);
  if (status == 0)
    return success();
  std::string ignored;
  FailureOr<std::string> output = log.read(ignored);
  error = (llvm::sys::path::filename(args[0]) + " failed").str();
  if (!message.empty())
    error += ": " + message;
  if (succeeded(output) && !output->empty())
    error += ":\n" + llvm::StringRef(*output).trim().str();
  return failure();
}
} // namespace

FailureOr<CudaToolkit> CudaToolkit::find(llvm::StringRef hint,
                                         std::string &error) {
  std::vector<std::string> candidates;
  if (!hint.empty())
    candidates.push_back(hint.str());
  for (const char *var : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(var); value && *value)
      candidates.push_back(value);
  if (auto ptxas = llvm::sys::findProgramByName("ptxas"))
    candidates.push_back(
        llvm::sys::path::parent_path(llvm::sys::path::parent_path(*ptxas))
            .str());
  candidates.push_back("/usr/local/cuda");
  if (!hint.empty())
    candidates.resize(1); // An explicit folder is the only one tried.
  for (const std::string &root : candidates) {
    if (!hasTool(root, "ptxas") || !hasTool(root, "fatbinary"))
      continue;
    CudaToolkit toolkit;
    toolkit.root = root;
    toolkit.ptxas = toolPath(root, "ptxas");
    toolkit.fatbinary = toolPath(root, "fatbinary");
    llvm::SmallString<256> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      toolkit.libdevice = libdevice.str().str();
    return toolkit;
  }
  error = "--target=cuda needs the CUDA toolkit's ptxas and fatbinary; "
          "looked in " +
          llvm::join(candidates, ", ") +
          " (set CUDA_ROOT to the toolkit folder)";
  return failure();
}

std::map<std::string, KernelResources>
mlir::kiln::parsePtxasReport(llvm::StringRef text, llvm::StringRef arch) {
  // ptxas info    : Compiling entry function 'k' for 'sm_90a'
  // ptxas info    : Function properties for k
  //     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  // ptxas info    : Used 20 registers, used 1 barriers, 8192 bytes smem, ...
  std::map<std::string, KernelResources> kernels;
  KernelResources *current = nullptr;
  auto numberBefore = [](llvm::StringRef line, llvm::StringRef what) {
    size_t at = line.find(what);
    if (at == llvm::StringRef::npos)
      return int64_t(0);
    llvm::StringRef before = line.take_front(at).rtrim();
    size_t start = before.find_last_of(" ,:");
    int64_t value = 0;
    before.drop_front(start == llvm::StringRef::npos ? 0 : start + 1)
        .trim()
        .getAsInteger(10, value);
    return value;
  };
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    size_t entry = line.find("Compiling entry function '");
    if (entry != llvm::StringRef::npos) {
      llvm::StringRef rest =
          line.drop_front(entry + strlen("Compiling entry function '"));
      std::string name =
          rest.take_until([](char c) { return c == '\''; }).str();
      current = &kernels[name];
      current->arch = arch.str();
      continue;
    }
    if (!current)
      continue;
    if (line.contains("bytes stack frame")) {
      current->localBytes = numberBefore(line, "bytes stack frame");
      current->spillStoreBytes = numberBefore(line, "bytes spill stores");
      current->spillLoadBytes = numberBefore(line, "bytes spill loads");
    } else if (line.contains("Used ") && line.contains(" registers")) {
      current->registers = numberBefore(line, "registers");
      current->sharedBytes = numberBefore(line, "bytes smem");
    }
  }
  return kernels;
}

FailureOr<std::map<std::string, KernelResources>>
mlir::kiln::assemblePtx(const CudaToolkit &toolkit, llvm::StringRef ptx,
                        llvm::StringRef arch, int optLevel, std::string &cubin,
                        std::string &error) {
  TempFile input, output, log;
  if (failed(input.create("kiln", "ptx", error)) ||
      failed(output.create("kiln", "cubin", error)) ||
      failed(log.create("kiln", "log", error)) ||
      failed(input.write(ptx, error)))
    return failure();
  std::string archFlag = ("-arch=" + arch).str();
  std::string optFlag = "-O" + std::to_string(optLevel);
  // Kernels are optimized in parallel over all cores (--split-compile 0):
  // BERT-base's 190 kernels took 5.4 s per arch in one thread, 3.0 s on 2
  // cores, with the same -v report (registers, spills, shared memory). A
  // ptxas too old for the option assembles in one thread.
  std::vector<llvm::StringRef> args = {
      toolkit.ptxas, archFlag,   optFlag, "--split-compile", "0",
      "-v",          input.path, "-o",    output.path};
  if (failed(run(args, log, error))) {
    if (llvm::StringRef(error).find("split-compile") == llvm::StringRef::npos)
      return failure();
    args.erase(args.begin() + 3, args.begin() + 5);
    if (failed(run(args, log, error)))
      return failure();
  }
  FailureOr<std::string> bytes = output.read(error);
  FailureOr<std::string> report = log.read(error);
  if (failed(bytes) || failed(report))
    return failure();
  cubin = std::move(*bytes);
  return parsePtxasReport(*report, arch);
}

FailureOr<std::string> mlir::kiln::bundleFatbin(
    const CudaToolkit &toolkit,
    const std::vector<std::pair<std::string, std::string>> &cubins,
    llvm::StringRef ptxArch, llvm::StringRef ptx, std::string &error) {
  std::vector<TempFile> files(cubins.size() + 1);
  TempFile output, log;
  if (failed(output.create("kiln", "fatbin", error)) ||
      failed(log.create("kiln", "log", error)))
    return failure();
  std::vector<std::string> images;
  auto smOf = [](llvm::StringRef arch) {
    return arch.drop_front(strlen("sm_")).str();
  };
  for (size_t i = 0; i < cubins.size(); ++i) {
    if (failed(files[i].create("kiln", "cubin", error)) ||
        failed(files[i].write(cubins[i].second, error)))
      return failure();
    images.push_back("--image3=kind=elf,sm=" + smOf(cubins[i].first) +
                     ",file=" + files[i].path.str().str());
  }
  if (!ptx.empty()) {
    TempFile &file = files.back();
    if (failed(file.create("kiln", "ptx", error)) ||
        failed(file.write(ptx, error)))
      return failure();
    images.push_back("--image3=kind=ptx,sm=" + smOf(ptxArch) +
                     ",file=" + file.path.str().str());
  }
  std::string create = ("--create=" + output.path).str();
  std::vector<llvm::StringRef> args = {toolkit.fatbinary, "-64", create};
  for (const std::string &image : images)
    args.push_back(image);
  if (failed(run(args, log, error)))
    return failure();
  return output.read(error);
}
