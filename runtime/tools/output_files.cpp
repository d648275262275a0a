#include "output_files.h"

#include "kiln/runtime.hpp"

#include <cerrno>
#include <cstring>
#include <set>
#include <sys/stat.h>

namespace kiln::runner {

std::string sanitizeFileName(const std::string &name) {
  std::string safe;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
              (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    safe += ok ? c : '_';
  }
  if (safe.empty())
    return "output";
  if (safe[0] == '.')
    safe[0] = '_';
  return safe;
}

std::vector<std::string>
outputFilePaths(const std::string &dir,
                const kiln_artifact_descriptor &descriptor) {
  std::vector<std::string> paths;
  std::set<std::string> used;
  for (uint32_t i = 0; i < descriptor.num_outputs; ++i) {
    std::string base = sanitizeFileName(descriptor.outputs[i].name);
    std::string stem = base;
    for (int suffix = 2; !used.insert(stem).second; ++suffix)
      stem = base + "_" + std::to_string(suffix);
    paths.push_back(dir + "/" + stem + ".npy");
  }
  return paths;
}

void checkNoOverwrite(const std::vector<std::string> &targets,
                      const std::vector<std::string> &protectedFiles) {
  for (const std::string &target : targets) {
    struct stat targetInfo;
    if (::stat(target.c_str(), &targetInfo) != 0)
      continue; // does not exist yet
    for (const std::string &file : protectedFiles) {
      struct stat info;
      if (::stat(file.c_str(), &info) == 0 &&
          info.st_dev == targetInfo.st_dev && info.st_ino == targetInfo.st_ino)
        throw Error("refusing to overwrite '" + target +
                    "': it is an input of this run ('" + file + "')");
    }
  }
}

void createDirectories(const std::string &dir) {
  // Create each prefix in turn; EEXIST is fine as long as it is a directory.
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/')
      continue;
    std::string prefix = dir.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
      throw Error("cannot create directory '" + prefix +
                      "': " + std::strerror(errno),
                  KILN_ERROR_IO);
  }
  struct stat info;
  if (::stat(dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))
    throw Error("'" + dir + "' is not a directory", KILN_ERROR_IO);
}

} // namespace kiln::runner
