// Where --output-dir writes each output, and the checks that keep it from
// clobbering the files the run reads.
#ifndef KILN_TOOLS_OUTPUT_FILES_H
#define KILN_TOOLS_OUTPUT_FILES_H

#include "kiln/abi.h"

#include <string>
#include <vector>

namespace kiln::runner {

// A tensor name as a safe file name: characters outside [A-Za-z0-9._-]
// become '_', a leading '.' becomes '_' (no hidden files, no ".."), and an
// empty name becomes "output".
std::string sanitizeFileName(const std::string &name);

// DIR/<sanitized name>.npy per output, in descriptor order; names that
// collide after sanitizing get a numeric suffix.
std::vector<std::string>
outputFilePaths(const std::string &dir,
                const kiln_artifact_descriptor &descriptor);

// Throws kiln::Error if any of `targets` is the same file as one of
// `protectedFiles` (compared by device and inode, so aliases via "..",
// symlinks or hard links are caught).
void checkNoOverwrite(const std::vector<std::string> &targets,
                      const std::vector<std::string> &protectedFiles);

// mkdir -p; throws kiln::Error on failure.
void createDirectories(const std::string &dir);

} // namespace kiln::runner

#endif // KILN_TOOLS_OUTPUT_FILES_H
