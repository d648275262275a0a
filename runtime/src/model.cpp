// kiln_model_load: turn a path into a checked, loaded artifact. Every check
// that can be made without running artifact code comes before dlopen.
#include "model.h"

#include "elf_check.h"
#include "status.h"

#include <cstdio>
#include <dlfcn.h>
#include <new>

using namespace kiln::rt;

namespace {

// Checks the fields whose layout never changes (magic, ABI version) before
// trusting anything else in the descriptor.
kiln_status checkDescriptor(const kiln_artifact_descriptor *descriptor,
                            const std::string &path) {
  if (!descriptor)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) +
                    " is not a kiln artifact (kiln_artifact returned NULL)");
  if (descriptor->magic != KILN_ARTIFACT_MAGIC) {
    char magic[16];
    std::snprintf(magic, sizeof magic, "0x%08x",
                  static_cast<unsigned>(descriptor->magic));
    return fail(KILN_ERROR_BAD_ARTIFACT, quoted(path) +
                                             " is not a kiln artifact (bad "
                                             "magic " +
                                             magic + ")");
  }
  if (descriptor->abi_version != KILN_ABI_VERSION)
    return fail(KILN_ERROR_BAD_ARTIFACT,
                quoted(path) + " uses kiln ABI version " +
                    std::to_string(descriptor->abi_version) +
                    ", this runtime supports version " +
                    std::to_string(KILN_ABI_VERSION));
  if (kiln_status status = validateDescriptor(*descriptor, path))
    return status;
  return checkTarget(*descriptor, path);
}

} // namespace

namespace {
kiln_status loadModel(const char *path, bool openDevice, kiln_model **out) {
  if (!path || !out)
    return fail(KILN_ERROR_INVALID_ARGUMENT, "kiln_model_load: NULL argument");
  *out = nullptr;
  try {
    std::string file = path;
    if (kiln_status status = checkElfHeader(file))
      return status;
    // Without a slash dlopen searches the library path instead of the
    // current directory, which is never what a user means by a file name.
    std::string openPath =
        file.find('/') == std::string::npos ? "./" + file : file;
    void *handle = dlopen(openPath.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      return fail(KILN_ERROR_BAD_ARTIFACT, "cannot load " + quoted(file) +
                                               ": " +
                                               (reason ? reason : "dlopen"));
    }
    auto artifact =
        reinterpret_cast<kiln_artifact_fn>(dlsym(handle, KILN_ARTIFACT_SYMBOL));
    if (!artifact) {
      dlclose(handle);
      return fail(KILN_ERROR_BAD_ARTIFACT,
                  quoted(file) + " is not a kiln artifact (no " +
                      KILN_ARTIFACT_SYMBOL + " symbol)");
    }
    const kiln_artifact_descriptor *descriptor = artifact();
    if (kiln_status status = checkDescriptor(descriptor, file)) {
      dlclose(handle);
      return status;
    }
    auto *model = new (std::nothrow) kiln_model;
    if (!model) {
      dlclose(handle);
      return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
    }
    if (descriptor->weights_size > 0) {
      if (kiln_status status =
              model->weights.map(file, descriptor->weights_size)) {
        delete model;
        dlclose(handle);
        return status;
      }
    }
    if (descriptor->gpu && openDevice) {
      if (kiln_status status = openGpuDevice(
              *descriptor, file, model->weights.data(), model->gpu)) {
        delete model;
        dlclose(handle);
        return status;
      }
    }
    model->handle = handle;
    model->descriptor = descriptor;
    model->path = std::move(file);
    *out = model;
    return KILN_OK;
  } catch (const std::bad_alloc &) {
    return fail(KILN_ERROR_OUT_OF_MEMORY, "out of memory");
  }
}
} // namespace

extern "C" kiln_status kiln_model_load(const char *path, kiln_model **out) {
  return loadModel(path, /*openDevice=*/true, out);
}

extern "C" kiln_status kiln_model_inspect(const char *path, kiln_model **out) {
  return loadModel(path, /*openDevice=*/false, out);
}

extern "C" void kiln_model_free(kiln_model *model) {
  if (!model)
    return;
  // The device reads the artifact's image and kernel table.
  model->gpu.reset();
  dlclose(model->handle);
  delete model;
}

extern "C" const kiln_artifact_descriptor *
kiln_model_descriptor(const kiln_model *model) {
  return model ? model->descriptor : nullptr;
}
