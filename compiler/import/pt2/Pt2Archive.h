//===- Pt2Archive.h - A torch.export .pt2 archive, read in C++ --*- C++ -*-===//
//
// The pieces of a `torch.export.save` archive Kiln needs: the exported
// program (models/<name>.json, schema major 8, parsed with LLVM's JSON
// library) and the parameters, buffers and tensor constants, each a view
// (dtype, sizes, strides, storage offset) of a raw storage entry read in
// place from the mapped archive. Anything pickled, AOTInductor-only
// packages, legacy layouts and other schema majors are refused with the
// entry they concern.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_PT2_PT2ARCHIVE_H
#define KILN_COMPILER_IMPORT_PT2_PT2ARCHIVE_H

#include "compiler/import/pt2/ZipArchive.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/JSON.h"

#include <optional>

namespace mlir::kiln::pt2 {

/// The schema's TensorMeta: `sizes` holds -1 where `symbols` names a
/// symbolic size (its sympy expression).
struct TensorMeta {
  int64_t dtype = 0; ///< the schema's ScalarType code (7: float32)
  llvm::SmallVector<int64_t> sizes, strides;
  llvm::SmallVector<std::string> symbols;
  int64_t storageOffset = 0;
};

/// A parameter, buffer or constant: the bytes of its whole storage and the
/// view of them the tensor is.
struct Payload {
  std::string entry; ///< archive entry, for messages
  llvm::StringRef storage;
  TensorMeta meta;
};

/// A sympy size as a reader wants it: each `Symbol('s77', positive=True,
/// ...)` as `s77`, a lone symbol or inside an expression.
std::string compactSympy(llvm::StringRef expr);

/// Reads a TensorMeta object; `what` names it in errors.
llvm::Expected<TensorMeta> parseTensorMeta(const llvm::json::Object &meta,
                                           llvm::StringRef what);

class Pt2Archive {
public:
  /// Opens, checks and parses `path`. Errors are one line naming the file
  /// and the entry.
  static llvm::Expected<std::unique_ptr<Pt2Archive>> open(llvm::StringRef path);
  /// The same on an archive's bytes in memory (kept alive by the caller);
  /// `path` names it in messages.
  static llvm::Expected<std::unique_ptr<Pt2Archive>>
  fromBytes(llvm::StringRef bytes, llvm::StringRef path);

  /// models/<name>.json's top-level object and its graph.
  const llvm::json::Object &program() const { return *program_; }
  const llvm::json::Object &graph() const { return *graph_; }
  const llvm::json::Object &signature() const { return *signature_; }
  llvm::StringRef modelName() const { return modelName_; }
  llvm::StringRef path() const { return zip_->path(); }

  /// A parameter or persistent buffer by its fully qualified name, or a
  /// tensor constant / non-persistent buffer; null if the archive has none.
  const Payload *weight(llvm::StringRef name) const;
  const Payload *constant(llvm::StringRef name) const;

private:
  static llvm::Expected<std::unique_ptr<Pt2Archive>>
  fromZip(std::unique_ptr<ZipArchive> zip);
  llvm::Error readPayloads(llvm::StringRef config, llvm::StringRef folder,
                           llvm::StringMap<Payload> &into);

  std::unique_ptr<ZipArchive> zip_;
  std::string root_, modelName_;
  llvm::json::Value json_ = nullptr;
  const llvm::json::Object *program_ = nullptr, *graph_ = nullptr,
                           *signature_ = nullptr;
  llvm::StringMap<Payload> weights_, constants_;
};

} // namespace mlir::kiln::pt2

#endif // KILN_COMPILER_IMPORT_PT2_PT2ARCHIVE_H
