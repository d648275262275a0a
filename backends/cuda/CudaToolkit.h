//===- CudaToolkit.h - ptxas and fatbinary from the CUDA toolkit -*- C++
//-*-===//
//
// Kiln emits PTX itself (LLVM's NVPTX backend) and needs the CUDA toolkit
// only to assemble it: ptxas (PTX -> cubin, with its resource report) and
// fatbinary (cubins + PTX -> one fatbin), plus libdevice for math.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_BACKENDS_CUDA_CUDATOOLKIT_H
#define KILN_BACKENDS_CUDA_CUDATOOLKIT_H

#include "backends/common/KernelTable.h"

#include "llvm/ADT/StringRef.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::kiln {

struct CudaToolkit {
  std::string root; ///< Folder with bin/ptxas.
  std::string ptxas, fatbinary, libdevice;

  /// Finds the toolkit: `hint` if given, else CUDA_ROOT, CUDA_HOME, the
  /// folder above ptxas on PATH, /usr/local/cuda. On failure `error` says
  /// where it looked.
  static FailureOr<CudaToolkit> find(llvm::StringRef hint, std::string &error);
};

/// Assembles `ptx` for `arch` into `cubin` with `ptxas -v` and returns the
/// resources of each kernel, by name.
FailureOr<std::map<std::string, KernelResources>>
assemblePtx(const CudaToolkit &toolkit, llvm::StringRef ptx,
            llvm::StringRef arch, int optLevel, std::string &cubin,
            std::string &error);

/// One fatbin of `cubins` (arch, bytes) and `ptx` for `ptxArch` (empty: no
/// PTX).
FailureOr<std::string>
bundleFatbin(const CudaToolkit &toolkit,
             const std::vector<std::pair<std::string, std::string>> &cubins,
             llvm::StringRef ptxArch, llvm::StringRef ptx, std::string &error);

/// Parses ptxas -v output (exposed for tests).
std::map<std::string, KernelResources> parsePtxasReport(llvm::StringRef text,
                                                        llvm::StringRef arch);

} // namespace mlir::kiln

#endif // KILN_BACKENDS_CUDA_CUDATOOLKIT_H
