#include "tensor_io.h"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace kiln::io {

std::vector<uint8_t> readFileBytes(const std::string &path) {
  std::FILE *file = std::fopen(path.c_str(), "rb");
  if (!file)
    throw Error("cannot open '" + path + "': " + std::strerror(errno),
                KILN_ERROR_IO);
  std::vector<uint8_t> bytes;
  uint8_t buffer[1 << 16];
  size_t got;
  while ((got = std::fread(buffer, 1, sizeof buffer, file)) > 0)
    bytes.insert(bytes.end(), buffer, buffer + got);
  int readErrno = std::ferror(file) ? errno : 0;
  std::fclose(file);
  if (readErrno)
    throw Error("cannot read '" + path + "': " + std::strerror(readErrno),
                KILN_ERROR_IO);
  return bytes;
}

NamedTensor readTensorFile(const std::string &path) {
  auto endsWith = [&](const char *suffix) {
    size_t n = std::strlen(suffix);
    return path.size() >= n && path.compare(path.size() - n, n, suffix) == 0;
  };
  std::vector<uint8_t> bytes = readFileBytes(path);
  std::string what = "'" + path + "'";
  bool looksNpy =
      bytes.size() >= 6 && std::memcmp(bytes.data(), "\x93NUMPY", 6) == 0;
  if (endsWith(".npy") || (!endsWith(".pb") && looksNpy))
    return {"", parseNpy(bytes.data(), bytes.size(), what)};
  return parseOnnxTensor(bytes.data(), bytes.size(), what);
}

} // namespace kiln::io
