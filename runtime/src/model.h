// The kiln_model object behind the opaque C handle: a dlopen'ed artifact.
#ifndef KILN_RUNTIME_MODEL_H
#define KILN_RUNTIME_MODEL_H

#include "gpu_device.h"
#include "kiln/runtime.h"
#include "weights_map.h"

#include <memory>
#include <string>

struct kiln_model {
  void *handle = nullptr; // from dlopen
  const kiln_artifact_descriptor *descriptor = nullptr;
  std::string path;
  // The weights section, mapped once for every session.
  kiln::rt::MappedWeights weights;
  // GPU artifacts: the device with the image loaded and the weights on it,
  // shared by every session of the model.
  std::unique_ptr<kiln::rt::GpuDevice> gpu;
};

namespace kiln::rt {

// Checks the descriptor's fields that the runtime dereferences, so a corrupt
// artifact is rejected at load time instead of crashing a run. On failure
// stores a message naming `path` and returns the status.
kiln_status validateDescriptor(const kiln_artifact_descriptor &descriptor,
                               const std::string &path);

// Checks the artifact's target triple and CPU features against this machine.
kiln_status checkTarget(const kiln_artifact_descriptor &descriptor,
                        const std::string &path);

} // namespace kiln::rt

#endif // KILN_RUNTIME_MODEL_H
