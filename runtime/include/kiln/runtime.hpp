// Header-only C++ wrapper over the Kiln runtime C API: RAII handles, and
// failures thrown as kiln::Error carrying kiln_last_error()'s message.
//
//   kiln::Model model("model.so");
//   kiln::Session session(model);
//   kiln::Tensor x = kiln::Tensor::create(KILN_DTYPE_F32, {1, 3, 224, 224});
//   std::vector<kiln::Tensor> outputs = session.run({{"x", &x}});
#ifndef KILN_RUNTIME_HPP
#define KILN_RUNTIME_HPP

#include "kiln/runtime.h"

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kiln {

class Error : public std::runtime_error {
public:
  explicit Error(const std::string &message,
                 kiln_status status = KILN_ERROR_INVALID_ARGUMENT)
      : std::runtime_error(message), status_(status) {}
  kiln_status status() const { return status_; }

private:
  kiln_status status_;
};

namespace detail {
inline void check(kiln_status status) {
  if (status != KILN_OK)
    throw Error(kiln_last_error(), status);
}
} // namespace detail

// Owns one kiln_tensor. Move-only.
class Tensor {
public:
  Tensor() = default;
  // Takes ownership of a tensor from the C API.
  explicit Tensor(kiln_tensor *tensor) : tensor_(tensor) {}
  Tensor(Tensor &&other) noexcept : tensor_(other.release()) {}
  Tensor &operator=(Tensor &&other) noexcept {
    if (this != &other)
      reset(other.release());
    return *this;
  }
  Tensor(const Tensor &) = delete;
  Tensor &operator=(const Tensor &) = delete;
  ~Tensor() { kiln_tensor_destroy(tensor_); }

  // A zero-filled tensor, data aligned to KILN_ALIGNMENT.
  static Tensor create(kiln_dtype dtype, const std::vector<int64_t> &shape) {
    kiln_tensor *tensor = nullptr;
    detail::check(kiln_tensor_create(dtype, static_cast<int32_t>(shape.size()),
                                     shape.data(), &tensor));
    return Tensor(tensor);
  }
  // A view of caller-owned memory, which must outlive the tensor.
  static Tensor wrap(kiln_dtype dtype, const std::vector<int64_t> &shape,
                     void *data, size_t bytes) {
    kiln_tensor *tensor = nullptr;
    detail::check(kiln_tensor_wrap(dtype, static_cast<int32_t>(shape.size()),
                                   shape.data(), data, bytes, &tensor));
    return Tensor(tensor);
  }

  explicit operator bool() const { return tensor_ != nullptr; }
  kiln_tensor *get() const { return tensor_; }
  kiln_tensor *release() { return std::exchange(tensor_, nullptr); }
  void reset(kiln_tensor *tensor = nullptr) {
    kiln_tensor_destroy(std::exchange(tensor_, tensor));
  }

  kiln_dtype dtype() const { return kiln_tensor_dtype(tensor_); }
  int32_t rank() const { return kiln_tensor_rank(tensor_); }
  std::vector<int64_t> shape() const {
    const int64_t *dims = kiln_tensor_shape(tensor_);
    return std::vector<int64_t>(dims, dims + rank());
  }
  size_t numElements() const { return kiln_tensor_num_elements(tensor_); }
  size_t sizeBytes() const { return kiln_tensor_size_bytes(tensor_); }
  void *data() const { return kiln_tensor_data(tensor_); }
  template <typename T> T *data() const { return static_cast<T *>(data()); }

  // A string tensor owning copies of `strings` (one per element, row-major).
  static Tensor strings(const std::vector<int64_t> &shape,
                        const std::vector<std::string> &strings) {
    Tensor tensor = create(KILN_DTYPE_STRING, shape);
    std::vector<const char *> pointers;
    for (const std::string &s : strings)
      pointers.push_back(s.c_str());
    detail::check(kiln_tensor_set_strings(tensor.get(), pointers.data(),
                                          pointers.size()));
    return tensor;
  }
  // Element i of a string tensor ("" for a NULL element).
  std::string string(size_t i) const {
    const char *s = data<const char *>()[i];
    return s ? s : "";
  }

private:
  kiln_tensor *tensor_ = nullptr;
};

// A loaded artifact. Move-only; must outlive its sessions.
class Model {
public:
  explicit Model(const std::string &path) {
    detail::check(kiln_model_load(path.c_str(), &model_));
  }
  Model(Model &&other) noexcept
      : model_(std::exchange(other.model_, nullptr)) {}
  Model &operator=(Model &&other) noexcept {
    if (this != &other) {
      kiln_model_free(model_);
      model_ = std::exchange(other.model_, nullptr);
    }
    return *this;
  }
  Model(const Model &) = delete;
  Model &operator=(const Model &) = delete;
  ~Model() { kiln_model_free(model_); }

  kiln_model *get() const { return model_; }
  const kiln_artifact_descriptor &descriptor() const {
    return *kiln_model_descriptor(model_);
  }

private:
  kiln_model *model_ = nullptr;
};

// One arena and thread pool. Not safe to run from two threads at once; use
// one session per thread instead.
class Session {
public:
  explicit Session(const Model &model, uint32_t numThreads = 0)
      : numOutputs_(model.descriptor().num_outputs) {
    kiln_session_options options{numThreads, 0};
    detail::check(kiln_session_create(model.get(), &options, &session_));
  }
  Session(Session &&other) noexcept
      : session_(std::exchange(other.session_, nullptr)),
        numOutputs_(other.numOutputs_) {}
  Session &operator=(Session &&other) noexcept {
    if (this != &other) {
      kiln_session_destroy(session_);
      session_ = std::exchange(other.session_, nullptr);
      numOutputs_ = other.numOutputs_;
    }
    return *this;
  }
  Session(const Session &) = delete;
  Session &operator=(const Session &) = delete;
  ~Session() { kiln_session_destroy(session_); }

  kiln_session *get() const { return session_; }
  uint32_t numThreads() const { return kiln_session_num_threads(session_); }

  // Runs the model; returns the outputs in descriptor order.
  std::vector<Tensor>
  run(const std::vector<std::pair<std::string, const Tensor *>> &inputs) {
    std::vector<kiln_named_tensor> named;
    named.reserve(inputs.size());
    for (const auto &[name, tensor] : inputs)
      named.push_back({name.c_str(), tensor ? tensor->get() : nullptr});
    std::vector<kiln_tensor *> raw(numOutputs_, nullptr);
    detail::check(kiln_session_run(session_, named.data(), named.size(),
                                   raw.data(), raw.size()));
    std::vector<Tensor> outputs;
    outputs.reserve(raw.size());
    for (kiln_tensor *tensor : raw)
      outputs.emplace_back(tensor);
    return outputs;
  }

private:
  kiln_session *session_ = nullptr;
  size_t numOutputs_ = 0;
};

} // namespace kiln

#endif // KILN_RUNTIME_HPP
