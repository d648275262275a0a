//===- ZipArchive.h - The stored entries of a zip file ----------*- C++ -*-===//
//
// torch.export.save writes a .pt2 archive as a zip whose entries are all
// stored (not compressed) at 64-byte aligned offsets, so each entry's bytes
// can be read in place from a mapping of the file. This reader takes sizes
// and offsets from the central directory (zip64 too: archives beyond 4 GiB)
// and the data position from each local header, checking every offset
// against the file; a compressed entry is refused by name.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_COMPILER_IMPORT_PT2_ZIPARCHIVE_H
#define KILN_COMPILER_IMPORT_PT2_ZIPARCHIVE_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace mlir::kiln::pt2 {

class ZipArchive {
public:
  struct Entry {
    std::string name;
    uint64_t offset = 0; ///< of the data in the file
    uint64_t size = 0;
    uint16_t method = 0; ///< 0: stored
  };

  /// Maps `path` and reads its central directory. Errors name the file.
  static llvm::Expected<std::unique_ptr<ZipArchive>> open(llvm::StringRef path);
  /// The same on bytes already in memory (kept alive by the caller).
  static llvm::Expected<std::unique_ptr<ZipArchive>>
  fromBuffer(llvm::StringRef bytes, llvm::StringRef path);

  const std::vector<Entry> &entries() const { return entries_; }
  const Entry *find(llvm::StringRef name) const;
  /// The bytes of a stored entry, in place; an error for a compressed one.
  llvm::Expected<llvm::StringRef> read(const Entry &entry) const;
  llvm::StringRef path() const { return path_; }

private:
  std::unique_ptr<llvm::MemoryBuffer> buffer_;
  llvm::StringRef bytes_;
  std::string path_;
  std::vector<Entry> entries_;
  llvm::StringMap<size_t> index_;
};

} // namespace mlir::kiln::pt2

#endif // KILN_COMPILER_IMPORT_PT2_ZIPARCHIVE_H
