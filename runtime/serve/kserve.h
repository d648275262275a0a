// The KServe v2 / Open Inference Protocol over a ModelPool: model metadata
// and inference requests in JSON, with the binary tensor data extension
// (`Inference-Header-Content-Length`: a JSON header followed by raw tensor
// bytes, `binary_data_size` per tensor).
#ifndef KILN_SERVE_KSERVE_H
#define KILN_SERVE_KSERVE_H

#include "batcher.h"
#include "model_pool.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>

namespace kiln::serve {

/// A request the server answers with `status` and {"error": message}.
struct HttpError : std::runtime_error {
  HttpError(int status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  int status;
};

/// GET /v2/models/NAME: name, versions, platform, inputs and outputs with
/// KServe datatypes and shapes (-1 for a symbolic dim).
nlohmann::json modelMetadata(const ModelPool &pool);

struct InferResponse {
  std::string body;
  /// Length of the JSON header when binary data follows it, else 0.
  size_t jsonLength = 0;
};

/// POST /v2/models/NAME/infer. `jsonLength` is the request's
/// Inference-Header-Content-Length, when it has one; `batcher`, when not
/// null, runs the request as part of a batch. Throws HttpError.
InferResponse infer(ModelPool &pool, Batcher *batcher, const std::string &body,
                    std::optional<size_t> jsonLength);

} // namespace kiln::serve

#endif // KILN_SERVE_KSERVE_H
