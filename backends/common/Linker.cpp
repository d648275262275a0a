//===- Linker.cpp - ld.lld as a subprocess
//---------------------------------===//
#include "backends/common/Linker.h"

#include "kiln/abi.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

#ifndef KILN_LLD_PATH
#error "KILN_LLD_PATH must name ld.lld (set by backends/common/CMakeLists.txt)"
#endif

using namespace mlir;
using namespace mlir::kiln;

/// The target's shared libc/libm, if installed (natively or as a Debian
/// cross library), so the artifact records them as DT_NEEDED.
static SmallVector<std::string> findSystemLibraries(const CpuTarget &target) {
  llvm::Triple triple(target.triple);
  std::string multiarch = (triple.getArchName() + "-linux-gnu").str();
  const std::string dirs[] = {"/lib/" + multiarch, "/usr/lib/" + multiarch,
                              "/usr/" + multiarch + "/lib"};
  SmallVector<std::string> found;
  for (StringRef name : {"libm.so.6", "libc.so.6"}) {
    for (const std::string &dir : dirs) {
      SmallString<128> path(dir);
      llvm::sys::path::append(path, name);
      if (llvm::sys::fs::is_regular_file(path)) {
        found.push_back(std::string(path));
        break;
      }
    }
  }
  return found;
}

static LogicalResult writeTempFile(StringRef prefix, StringRef suffix,
                                   StringRef contents,
                                   SmallVectorImpl<char> &path,
                                   std::string &error) {
  int fd;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile(prefix, suffix, fd, path)) {
    error = "cannot create a temporary file: " + ec.message();
    return failure();
  }
  llvm::raw_fd_ostream out(fd, /*shouldClose=*/true);
  out << contents;
  out.close();
  if (out.has_error()) {
    error = "cannot write a temporary file: " + out.error().message();
    out.clear_error();
    return failure();
  }
  return success();
}

LogicalResult mlir::kiln::linkSharedLibrary(StringRef objectPath,
                                            StringRef outputPath,
                                            const CpuTarget &target,
                                            std::string &error) {
  SmallString<128> scriptPath, logPath;
  std::string script = std::string("{\n  global: ") + KILN_ARTIFACT_SYMBOL +
                       ";\n  local: *;\n};\n";
  if (failed(writeTempFile("kiln-exports", "map", script, scriptPath, error)))
    return failure();
  llvm::FileRemover scriptRemover(scriptPath);
  if (failed(writeTempFile("kiln-lld", "log", "", logPath, error)))
    return failure();
  llvm::FileRemover logRemover(logPath);

  std::string versionScript = ("--version-script=" + scriptPath).str();
  SmallVector<StringRef> args = {KILN_LLD_PATH,
                                 "-shared",
                                 "--eh-frame-hdr",
                                 "-z",
                                 "noexecstack",
                                 "-z",
                                 "relro",
                                 "-z",
                                 "now",
                                 "--hash-style=gnu",
                                 versionScript,
                                 "-o",
                                 outputPath,
                                 objectPath};
  SmallVector<std::string> libraries = findSystemLibraries(target);
  if (libraries.size() == 2) {
    args.push_back("--no-undefined");
    args.push_back("--as-needed");
    for (const std::string &lib : libraries)
      args.push_back(lib);
  }

  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string execError;
  int status = llvm::sys::ExecuteAndWait(KILN_LLD_PATH, args, std::nullopt,
                                         redirects, 0, 0, &execError);
  if (status == 0)
    return success();
  error = "linking with " KILN_LLD_PATH " failed";
  if (!execError.empty())
    error += ": " + execError;
  if (auto log = llvm::MemoryBuffer::getFile(logPath);
      log && (*log)->getBufferSize())
    error += ":\n" + (*log)->getBuffer().rtrim().str();
  return failure();
}
