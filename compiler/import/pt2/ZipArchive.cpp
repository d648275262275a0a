//===- ZipArchive.cpp - The stored entries of a zip file ------------------===//
#include "compiler/import/pt2/ZipArchive.h"

#include "llvm/Support/Endian.h"

using namespace mlir::kiln::pt2;
using llvm::StringRef;

namespace {
constexpr uint32_t kEndOfDirectory = 0x06054b50;
constexpr uint32_t kZip64EndOfDirectory = 0x06064b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kDirectoryEntry = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr uint16_t kZip64Extra = 0x0001;

/// Little-endian reads at checked offsets; `ok` turns false on the first
/// read past the end and every later read returns 0.
struct Reader {
  StringRef bytes;
  bool ok = true;
  template <typename T> T at(uint64_t offset) {
    if (!ok || offset > bytes.size() || sizeof(T) > bytes.size() - offset) {
      ok = false;
      return 0;
    }
    return llvm::support::endian::read<T, llvm::endianness::little>(
        bytes.data() + offset);
  }
  StringRef slice(uint64_t offset, uint64_t size) {
    if (!ok || offset > bytes.size() || size > bytes.size() - offset) {
      ok = false;
      return {};
    }
    return bytes.substr(offset, size);
  }
};

llvm::Error fail(StringRef path, const llvm::Twine &what) {
  return llvm::createStringError(
      "'" + path + "' is not a valid .pt2 archive (" + what + ")");
}
} // namespace

llvm::Expected<std::unique_ptr<ZipArchive>> ZipArchive::open(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return llvm::createStringError("cannot read '" + path +
                                   "': " + buffer.getError().message());
  auto archive = fromBuffer((*buffer)->getBuffer(), path);
  if (archive)
    (*archive)->buffer_ = std::move(*buffer);
  return archive;
}

llvm::Expected<std::unique_ptr<ZipArchive>>
ZipArchive::fromBuffer(StringRef bytes, StringRef path) {
  auto archive = std::make_unique<ZipArchive>();
  archive->bytes_ = bytes;
  archive->path_ = path.str();
  Reader r{bytes};

  // The end-of-directory record: the last one in the file's final 64 KiB +
  // 22 bytes (a comment may follow it).
  if (bytes.size() < 22)
    return fail(path, "too short for a zip file");
  uint64_t end = bytes.size() - 22, stop = end > 65557 ? end - 65557 : 0;
  while (r.at<uint32_t>(end) != kEndOfDirectory) {
    if (end == stop)
      return fail(path, "no zip end-of-directory record");
    --end;
  }
  uint64_t count = r.at<uint16_t>(end + 10);
  uint64_t directorySize = r.at<uint32_t>(end + 12);
  uint64_t directory = r.at<uint32_t>(end + 16);
  if (end >= 20 && r.at<uint32_t>(end - 20) == kZip64Locator) {
    uint64_t record = r.at<uint64_t>(end - 20 + 8);
    if (r.at<uint32_t>(record) != kZip64EndOfDirectory)
      return fail(path, "a broken zip64 end-of-directory locator");
    count = r.at<uint64_t>(record + 32);
    directorySize = r.at<uint64_t>(record + 40);
    directory = r.at<uint64_t>(record + 48);
  }
  if (!r.ok || directory > bytes.size() ||
      directorySize > bytes.size() - directory)
    return fail(path, "its central directory lies outside the file");

  uint64_t at = directory;
  for (uint64_t i = 0; i < count; ++i) {
    if (r.at<uint32_t>(at) != kDirectoryEntry)
      return fail(path, "central directory entry " + llvm::Twine(i) +
                            " is malformed");
    Entry entry;
    entry.method = r.at<uint16_t>(at + 10);
    uint64_t compressed = r.at<uint32_t>(at + 20);
    uint64_t size = r.at<uint32_t>(at + 24);
    uint16_t nameLength = r.at<uint16_t>(at + 28);
    uint16_t extraLength = r.at<uint16_t>(at + 30);
    uint16_t commentLength = r.at<uint16_t>(at + 32);
    uint64_t local = r.at<uint32_t>(at + 42);
    entry.name = r.slice(at + 46, nameLength).str();
    // Fields at 0xFFFFFFFF are in the zip64 extra field, in this order.
    StringRef extra = r.slice(at + 46 + nameLength, extraLength);
    Reader x{extra};
    for (uint64_t e = 0; x.ok && e + 4 <= extra.size();) {
      uint16_t id = x.at<uint16_t>(e), length = x.at<uint16_t>(e + 2);
      if (id == kZip64Extra) {
        uint64_t field = e + 4;
        for (uint64_t *value : {&size, &compressed, &local})
          if (*value == 0xFFFFFFFF) {
            *value = x.at<uint64_t>(field);
            field += 8;
          }
      }
      e += 4 + length;
    }
    if (!r.ok || !x.ok)
      return fail(path, "central directory entry " + llvm::Twine(i) +
                            " runs past the file");
    // The data follows the local header, whose extra field (the 64-byte
    // alignment padding) may differ from the central one.
    if (r.at<uint32_t>(local) != kLocalHeader)
      return fail(path, "entry '" + entry.name + "' has no local header");
    uint64_t data =
        local + 30 + r.at<uint16_t>(local + 26) + r.at<uint16_t>(local + 28);
    if (!r.ok || data > bytes.size() || compressed > bytes.size() - data)
      return fail(path, "entry '" + entry.name + "' runs past the file");
    if (entry.method == 0 && compressed != size)
      return fail(path,
                  "stored entry '" + entry.name + "' has two different sizes");
    entry.offset = data;
    entry.size = entry.method == 0 ? size : compressed;
    archive->index_[entry.name] = archive->entries_.size();
    archive->entries_.push_back(std::move(entry));
    at += 46 + nameLength + extraLength + commentLength;
  }
  return archive;
}

const ZipArchive::Entry *ZipArchive::find(StringRef name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second];
}

llvm::Expected<StringRef> ZipArchive::read(const Entry &entry) const {
  if (entry.method != 0)
    return llvm::createStringError(
        "'" + path_ + "': entry '" + entry.name + "' is compressed (method " +
        std::to_string(entry.method) +
        "); Kiln reads .pt2 archives whose entries are stored, as "
        "torch.export.save writes them");
  return bytes_.substr(entry.offset, entry.size);
}
