//===- BackendTestSupport.h - Compile, load and run test artifacts --------===//
#ifndef KILN_TEST_UNIT_BACKEND_BACKENDTESTSUPPORT_H
#define KILN_TEST_UNIT_BACKEND_BACKENDTESTSUPPORT_H

#include "backends/common/Artifact.h"
#include "kiln/abi.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace kiln_test {

/// A temporary directory removed (with its files) on destruction.
struct TempDir {
  TempDir();
  ~TempDir();
  std::string path;
  std::string file(const std::string &name) const { return path + "/" + name; }
};

/// An artifact compiled from MLIR and opened with dlopen.
struct LoadedArtifact {
  ~LoadedArtifact();
  TempDir dir;
  std::string path;
  void *handle = nullptr;
  const kiln_artifact_descriptor *descriptor = nullptr;
  /// The bytes of the .kiln.weights section, read from the file as the
  /// runtime maps them (runtime->weights), 64-byte aligned.
  void *weights = nullptr;
  /// parallel_for calls the last run() made.
  mutable int lastParallelCalls = 0;

  /// Runs the entry with a fresh 64-byte aligned arena (filled with garbage,
  /// so reads of uninitialized arena memory show up). `threads` > 1 hands
  /// the entry a parallel_for running that many std::threads; 1 gives no
  /// pool, 0 neither pool nor parallel_for (only the weights). Returns the
  /// entry's status.
  int32_t run(const std::vector<const void *> &inputs,
              const std::vector<void *> &outputs, int threads = 3) const;
};

/// Parses `mlirSource`, runs the CPU pipeline for `target` (host if empty)
/// and writes and loads the artifact. Fails the current test (REQUIRE) on any
/// error. `winograd`: the pipeline's Winograd mode (CpuCodegenOptions).
std::unique_ptr<LoadedArtifact>
compileAndLoad(const std::string &mlirSource,
               const mlir::kiln::ArtifactSpec &spec, int optLevel = 2,
               int64_t winograd = -1);

/// The `size` bytes of the artifact's .kiln.weights section in fresh
/// 64-byte aligned memory (free it), as the runtime maps them; NULL for 0.
/// Fails the current test if the section is missing or of another size.
void *readWeightsSection(const std::string &path, uint64_t size);

/// Compiles without loading (e.g. for another architecture); returns the
/// error text, empty on success.
std::string compileToFile(const std::string &mlirSource,
                          const mlir::kiln::ArtifactSpec &spec,
                          const mlir::kiln::CpuTarget &target,
                          const std::string &outputPath, int optLevel = 2,
                          int64_t winograd = -1);

/// "tensor<D0xD1x...xf32>".
std::string tensorType(const std::vector<int64_t> &shape);

/// Every element within `tolerance * (1 + |want|)` (the first five misses
/// are reported).
void checkClose(const std::vector<float> &got, const std::vector<double> &want,
                double tolerance = 1e-4);

/// `{-# dialect_resources: {builtin: {name: "0x..."}} #-}` for the blobs.
std::string resourceSection(
    const std::vector<std::pair<std::string, std::vector<char>>> &blobs);

template <typename T> std::vector<char> bytesOf(const std::vector<T> &values) {
  const char *data = reinterpret_cast<const char *>(values.data());
  return std::vector<char>(data, data + values.size() * sizeof(T));
}

/// Runs an LLVM tool from the build's LLVM (llvm-nm, llvm-readelf) and
/// returns its stdout.
std::string runLLVMTool(const std::string &tool, const std::string &args);

/// Symbols `llvm-nm -D` lists for `path` with `flag` (e.g.
/// "--defined-only", "--undefined-only").
std::vector<std::string> dynamicSymbols(const std::string &path,
                                        const std::string &flag);

/// The geometry of an NHWC convolution for the references below: square
/// filter, the same stride and dilation in both directions, `pad` zeros on
/// every side. `f` filters (unused when depthwise: one per channel).
struct NhwcConvShape {
  int64_t batch, h, w, c, k, f, stride, dilation, pad;
  bool depthwise;
  int64_t outH() const {
    return (h + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  }
  int64_t outW() const {
    return (w + 2 * pad - dilation * (k - 1) - 1) / stride + 1;
  }
  int64_t outC() const { return depthwise ? c : f; }
};

/// `x` [N, H, W, C] convolved with `filter` ([KH, KW, C, F], or [KH, KW, C]
/// when depthwise) in double precision: [N, OH, OW, F or C].
std::vector<double> nhwcConvReference(const NhwcConvShape &s,
                                      const std::vector<float> &x,
                                      const std::vector<float> &filter);

/// Deterministic pseudo-random floats in [lo, hi).
std::vector<float> randomFloats(size_t count, unsigned seed, float lo = -1,
                                float hi = 1);

} // namespace kiln_test

#endif // KILN_TEST_UNIT_BACKEND_BACKENDTESTSUPPORT_H
