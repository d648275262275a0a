#include "kserve.h"

#include <cstring>
#include <limits>
#include <memory>
#include <vector>

using namespace kiln::serve;
using nlohmann::json;

namespace {
/// The largest tensor a request may declare (elements and bytes).
constexpr uint64_t kMaxElements = uint64_t(1) << 31;
constexpr uint64_t kMaxBytes = uint64_t(1) << 31;

struct DtypeName {
  kiln_dtype dtype;
  const char *name;
};
constexpr DtypeName kDtypes[] = {
    {KILN_DTYPE_F32, "FP32"},   {KILN_DTYPE_F64, "FP64"},
    {KILN_DTYPE_F16, "FP16"},   {KILN_DTYPE_BF16, "BF16"},
    {KILN_DTYPE_I8, "INT8"},    {KILN_DTYPE_I16, "INT16"},
    {KILN_DTYPE_I32, "INT32"},  {KILN_DTYPE_I64, "INT64"},
    {KILN_DTYPE_U8, "UINT8"},   {KILN_DTYPE_U16, "UINT16"},
    {KILN_DTYPE_U32, "UINT32"}, {KILN_DTYPE_U64, "UINT64"},
    {KILN_DTYPE_BOOL, "BOOL"},  {KILN_DTYPE_STRING, "BYTES"}};

const char *nameOf(kiln_dtype dtype) {
  for (const auto &d : kDtypes)
    if (d.dtype == dtype)
      return d.name;
  return "UNKNOWN";
}

json shapeOf(const kiln_tensor_desc &desc) {
  json shape = json::array();
  for (int32_t k = 0; k < desc.rank; ++k)
    shape.push_back(desc.shape[k]);
  return shape;
}

using Tensor = std::unique_ptr<kiln_tensor, void (*)(kiln_tensor *)>;

/// Appends the leaves of a (possibly nested) JSON array.
void flatten(const json &value, std::vector<const json *> &out,
             const std::string &name) {
  if (!value.is_array()) {
    out.push_back(&value);
    return;
  }
  for (const json &v : value)
    flatten(v, out, name);
}

template <typename T>
void fill(void *data, const std::vector<const json *> &values,
          const std::string &name) {
  T *out = static_cast<T *>(data);
  for (size_t i = 0; i < values.size(); ++i) {
    const json &v = *values[i];
    if constexpr (std::is_same_v<T, bool>) {
      if (!v.is_boolean())
        throw HttpError(400, "input '" + name + "': data[" + std::to_string(i) +
                                 "] is not a boolean");
      out[i] = v.get<bool>();
    } else {
      if (!v.is_number() || (std::is_integral_v<T> && !v.is_number_integer() &&
                             !v.is_number_unsigned()))
        throw HttpError(
            400, "input '" + name + "': data[" + std::to_string(i) +
                     "] is not " +
                     (std::is_integral_v<T> ? "an integer" : "a number"));
      out[i] = v.get<T>();
    }
  }
}

/// JSON values of a tensor's elements.
json dataOf(const kiln_tensor *t, const std::string &name) {
  kiln_dtype dtype = kiln_tensor_dtype(t);
  size_t n = kiln_tensor_num_elements(t);
  const void *p = kiln_tensor_data(const_cast<kiln_tensor *>(t));
  json out = json::array();
  auto each = [&](auto *typed) {
    for (size_t i = 0; i < n; ++i)
      out.push_back(typed[i]);
  };
  switch (dtype) {
  case KILN_DTYPE_F32:
    each(static_cast<const float *>(p));
    break;
  case KILN_DTYPE_F64:
    each(static_cast<const double *>(p));
    break;
  case KILN_DTYPE_I8:
    each(static_cast<const int8_t *>(p));
    break;
  case KILN_DTYPE_I16:
    each(static_cast<const int16_t *>(p));
    break;
  case KILN_DTYPE_I32:
    each(static_cast<const int32_t *>(p));
    break;
  case KILN_DTYPE_I64:
    each(static_cast<const int64_t *>(p));
    break;
  case KILN_DTYPE_U8:
    each(static_cast<const uint8_t *>(p));
    break;
  case KILN_DTYPE_U16:
    each(static_cast<const uint16_t *>(p));
    break;
  case KILN_DTYPE_U32:
    each(static_cast<const uint32_t *>(p));
    break;
  case KILN_DTYPE_U64:
    each(static_cast<const uint64_t *>(p));
    break;
  case KILN_DTYPE_BOOL:
    each(static_cast<const bool *>(p));
    break;
  case KILN_DTYPE_STRING:
    each(static_cast<const char *const *>(p));
    break;
  default:
    throw HttpError(400, "output '" + name + "' is " + nameOf(dtype) +
                             ", which is sent as binary data only");
  }
  return out;
}

/// Raw bytes of a tensor for the binary extension (BYTES: each string as a
/// 4-byte little-endian length and its bytes).
std::string bytesOf(const kiln_tensor *t) {
  const void *p = kiln_tensor_data(const_cast<kiln_tensor *>(t));
  if (kiln_tensor_dtype(t) != KILN_DTYPE_STRING)
    return std::string(static_cast<const char *>(p), kiln_tensor_size_bytes(t));
  std::string out;
  const char *const *strings = static_cast<const char *const *>(p);
  for (size_t i = 0; i < kiln_tensor_num_elements(t); ++i) {
    uint32_t len = static_cast<uint32_t>(std::strlen(strings[i]));
    out.append(reinterpret_cast<const char *>(&len), 4);
    out.append(strings[i], len);
  }
  return out;
}

/// One request input as a kiln tensor.
Tensor makeInput(const json &in, const ModelPool &pool, const char *&binary,
                 const char *binaryEnd) {
  if (!in.is_object() || !in.contains("name") || !in["name"].is_string())
    throw HttpError(400, "each of 'inputs' needs a string 'name'");
  std::string name = in["name"].get<std::string>();
  const kiln_artifact_descriptor &d = pool.descriptor();
  const kiln_tensor_desc *desc = nullptr;
  for (uint32_t i = 0; i < d.num_inputs; ++i)
    if (name == d.inputs[i].name)
      desc = &d.inputs[i];
  if (!desc)
    throw HttpError(400, "input '" + name + "' is not an input of model '" +
                             pool.name() + "'");
  auto kdtype = static_cast<kiln_dtype>(desc->dtype);
  if (!in.contains("datatype") || !in["datatype"].is_string())
    throw HttpError(400, "input '" + name + "' needs a string 'datatype'");
  std::string datatype = in["datatype"].get<std::string>();
  if (datatype != nameOf(kdtype))
    throw HttpError(400, "input '" + name + "': datatype " + datatype +
                             ", the model takes " + nameOf(kdtype));
  if (!in.contains("shape") || !in["shape"].is_array())
    throw HttpError(400, "input '" + name + "' needs a 'shape' array");
  std::vector<int64_t> shape;
  uint64_t elements = 1;
  for (const json &dim : in["shape"]) {
    if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
      throw HttpError(400, "input '" + name +
                               "': 'shape' holds a value that is not a "
                               "non-negative integer");
    shape.push_back(dim.get<int64_t>());
    if (shape.back() != 0 &&
        elements > kMaxElements / static_cast<uint64_t>(shape.back()))
      throw HttpError(400, "input '" + name + "': the shape is too large");
    elements *= static_cast<uint64_t>(shape.back());
  }
  size_t size = kiln_dtype_size(kdtype);
  if (elements > kMaxElements ||
      (kdtype != KILN_DTYPE_STRING && elements * size > kMaxBytes))
    throw HttpError(400, "input '" + name + "': the shape is too large");
  kiln_tensor *raw = nullptr;
  if (kiln_tensor_create(kdtype, static_cast<int32_t>(shape.size()),
                         shape.data(), &raw) != KILN_OK)
    throw HttpError(400, "input '" + name + "': " + kiln_last_error());
  Tensor tensor(raw, kiln_tensor_destroy);

  const json *params = in.contains("parameters") ? &in["parameters"] : nullptr;
  if (params && params->contains("binary_data_size")) {
    const json &s = (*params)["binary_data_size"];
    if (!s.is_number_unsigned() && !s.is_number_integer())
      throw HttpError(400, "input '" + name +
                               "': 'binary_data_size' is not an integer");
    int64_t bytes = s.get<int64_t>();
    if (bytes < 0 || bytes > binaryEnd - binary)
      throw HttpError(400, "input '" + name + "': 'binary_data_size' " +
                               std::to_string(bytes) +
                               " is more than the request's remaining " +
                               std::to_string(binaryEnd - binary) + " bytes");
    if (kdtype == KILN_DTYPE_STRING) {
      std::vector<std::string> strings;
      const char *p = binary, *end = binary + bytes;
      while (p < end) {
        uint32_t len;
        if (end - p < 4)
          throw HttpError(400, "input '" + name + "': truncated BYTES data");
        std::memcpy(&len, p, 4);
        p += 4;
        if (len > static_cast<uint64_t>(end - p))
          throw HttpError(400, "input '" + name + "': truncated BYTES data");
        strings.emplace_back(p, len);
        p += len;
      }
      if (strings.size() != elements)
        throw HttpError(
            400, "input '" + name + "': " + std::to_string(strings.size()) +
                     " strings for " + std::to_string(elements) + " elements");
      std::vector<const char *> pointers;
      for (const std::string &s : strings)
        pointers.push_back(s.c_str());
      kiln_tensor_set_strings(tensor.get(), pointers.data(), pointers.size());
    } else {
      if (static_cast<uint64_t>(bytes) != elements * size)
        throw HttpError(400, "input '" + name + "': 'binary_data_size' is " +
                                 std::to_string(bytes) +
                                 " bytes, the shape "
                                 "and datatype need " +
                                 std::to_string(elements * size));
      std::memcpy(kiln_tensor_data(tensor.get()), binary, bytes);
    }
    binary += bytes;
    return tensor;
  }
  if (!in.contains("data"))
    throw HttpError(400, "input '" + name +
                             "' has neither 'data' nor 'binary_data_size'");
  std::vector<const json *> values;
  flatten(in["data"], values, name);
  if (values.size() != elements)
    throw HttpError(400, "input '" + name +
                             "': " + std::to_string(values.size()) +
                             " values in 'data' for a shape of " +
                             std::to_string(elements) + " elements");
  void *data = kiln_tensor_data(tensor.get());
  switch (kdtype) {
  case KILN_DTYPE_F32:
    fill<float>(data, values, name);
    break;
  case KILN_DTYPE_F64:
    fill<double>(data, values, name);
    break;
  case KILN_DTYPE_I8:
    fill<int8_t>(data, values, name);
    break;
  case KILN_DTYPE_I16:
    fill<int16_t>(data, values, name);
    break;
  case KILN_DTYPE_I32:
    fill<int32_t>(data, values, name);
    break;
  case KILN_DTYPE_I64:
    fill<int64_t>(data, values, name);
    break;
  case KILN_DTYPE_U8:
    fill<uint8_t>(data, values, name);
    break;
  case KILN_DTYPE_U16:
    fill<uint16_t>(data, values, name);
    break;
  case KILN_DTYPE_U32:
    fill<uint32_t>(data, values, name);
    break;
  case KILN_DTYPE_U64:
    fill<uint64_t>(data, values, name);
    break;
  case KILN_DTYPE_BOOL:
    fill<bool>(data, values, name);
    break;
  case KILN_DTYPE_STRING: {
    std::vector<const char *> pointers;
    for (size_t i = 0; i < values.size(); ++i) {
      if (!values[i]->is_string())
        throw HttpError(400, "input '" + name + "': data[" + std::to_string(i) +
                                 "] is not a string");
      pointers.push_back(values[i]->get_ref<const std::string &>().c_str());
    }
    kiln_tensor_set_strings(tensor.get(), pointers.data(), pointers.size());
    break;
  }
  default:
    throw HttpError(400, "input '" + name + "' is " + nameOf(kdtype) +
                             ", which is accepted as binary data only");
  }
  return tensor;
}
} // namespace

json kiln::serve::modelMetadata(const ModelPool &pool) {
  const kiln_artifact_descriptor &d = pool.descriptor();
  auto tensors = [](const kiln_tensor_desc *descs, uint32_t n) {
    json list = json::array();
    for (uint32_t i = 0; i < n; ++i)
      list.push_back(
          {{"name", descs[i].name},
           {"datatype", nameOf(static_cast<kiln_dtype>(descs[i].dtype))},
           {"shape", shapeOf(descs[i])}});
    return list;
  };
  return {{"name", pool.name()},
          {"versions", {"1"}},
          {"platform", "kiln"},
          {"inputs", tensors(d.inputs, d.num_inputs)},
          {"outputs", tensors(d.outputs, d.num_outputs)}};
}

InferResponse kiln::serve::infer(ModelPool &pool, Batcher *batcher,
                                 const std::string &body,
                                 std::optional<size_t> jsonLength) {
  size_t headerSize = jsonLength.value_or(body.size());
  if (headerSize > body.size())
    throw HttpError(400, "Inference-Header-Content-Length " +
                             std::to_string(headerSize) +
                             " is more than the body's " +
                             std::to_string(body.size()) + " bytes");
  json request = json::parse(body.begin(), body.begin() + headerSize, nullptr,
                             /*allow_exceptions=*/false);
  if (request.is_discarded() || !request.is_object())
    throw HttpError(400, "the request is not a JSON object");
  if (!request.contains("inputs") || !request["inputs"].is_array())
    throw HttpError(400, "the request needs an 'inputs' array");
  const char *binary = body.data() + headerSize;
  const char *binaryEnd = body.data() + body.size();

  std::vector<Tensor> tensors;
  std::vector<kiln_named_tensor> named;
  std::vector<std::string> names;
  for (const json &in : request["inputs"]) {
    tensors.push_back(makeInput(in, pool, binary, binaryEnd));
    names.push_back(in["name"].get<std::string>());
  }
  if (binary != binaryEnd)
    throw HttpError(400, std::to_string(binaryEnd - binary) +
                             " bytes of binary data are not claimed by any "
                             "input's 'binary_data_size'");
  for (size_t i = 0; i < tensors.size(); ++i)
    named.push_back({names[i].c_str(), tensors[i].get()});

  // Which outputs, and which as binary data.
  const kiln_artifact_descriptor &d = pool.descriptor();
  bool binaryDefault = request.contains("parameters") &&
                       request["parameters"].value("binary_data_output", false);
  std::vector<std::pair<uint32_t, bool>> wanted;
  if (request.contains("outputs")) {
    if (!request["outputs"].is_array())
      throw HttpError(400, "'outputs' is not an array");
    for (const json &out : request["outputs"]) {
      if (!out.is_object() || !out.contains("name") || !out["name"].is_string())
        throw HttpError(400, "each of 'outputs' needs a string 'name'");
      std::string name = out["name"].get<std::string>();
      uint32_t index = d.num_outputs;
      for (uint32_t i = 0; i < d.num_outputs; ++i)
        if (name == d.outputs[i].name)
          index = i;
      if (index == d.num_outputs)
        throw HttpError(400, "output '" + name +
                                 "' is not an output of model '" + pool.name() +
                                 "'");
      bool asBinary = binaryDefault;
      if (out.contains("parameters") && out["parameters"].is_object())
        asBinary = out["parameters"].value("binary_data", asBinary);
      wanted.push_back({index, asBinary});
    }
  } else {
    for (uint32_t i = 0; i < d.num_outputs; ++i)
      wanted.push_back({i, binaryDefault});
  }

  // Batched: the inputs in descriptor order, each given once.
  std::vector<const kiln_tensor *> ordered;
  for (uint32_t i = 0; batcher && i < d.num_inputs; ++i)
    for (size_t j = 0; j < names.size(); ++j)
      if (names[j] == d.inputs[i].name) {
        ordered.push_back(tensors[j].get());
        break;
      }
  RunResult run;
  if (batcher && ordered.size() == d.num_inputs &&
      names.size() == d.num_inputs) {
    run = batcher->run(ordered);
  } else if (ModelPool::Lease lease = pool.acquire()) {
    run = runSession(lease.get(), named, d.num_outputs);
  } else {
    run.rejected = true;
  }
  if (run.rejected)
    throw HttpError(503, "model '" + pool.name() +
                             "' has too many requests waiting; retry later");
  // Bad values the runtime or the model's own checks caught are the
  // request's fault; anything else is the server's.
  if (run.status != KILN_OK)
    throw HttpError(run.status == KILN_ERROR_INVALID_ARGUMENT ||
                            run.status == KILN_ERROR_RUN_FAILED
                        ? 400
                        : 500,
                    run.error);
  std::vector<Tensor> results;
  for (kiln_tensor *t : run.outputs)
    results.emplace_back(t, kiln_tensor_destroy);

  json response = {{"model_name", pool.name()}, {"model_version", "1"}};
  if (request.contains("id"))
    response["id"] = request["id"];
  response["outputs"] = json::array();
  std::string blobs;
  for (auto [index, asBinary] : wanted) {
    const kiln_tensor *t = results[index].get();
    json shape = json::array();
    for (int32_t k = 0; k < kiln_tensor_rank(t); ++k)
      shape.push_back(kiln_tensor_shape(t)[k]);
    json out = {{"name", d.outputs[index].name},
                {"datatype", nameOf(kiln_tensor_dtype(t))},
                {"shape", shape}};
    if (asBinary) {
      std::string bytes = bytesOf(t);
      out["parameters"] = {{"binary_data_size", bytes.size()}};
      blobs += bytes;
    } else {
      out["data"] = dataOf(t, d.outputs[index].name);
    }
    response["outputs"].push_back(out);
  }
  InferResponse result;
  result.body = response.dump();
  if (!blobs.empty()) {
    result.jsonLength = result.body.size();
    result.body += blobs;
  }
  return result;
}
