//===- ModelLoader.cpp - Read and validate an ONNX file -------------------===//
//
// Turns a path into a parsed ModelProto, or a one-line reason why not: the
// file is missing, is not protobuf, is truncated, or lacks a graph. Protobuf
// parsing never crashes on bad bytes; it fails, and we say so.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/OnnxImporter.h"

#include "onnx/onnx.pb.h"

#include "llvm/Support/MemoryBuffer.h"
#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>

using namespace mlir::kiln::onnx_import;

namespace {
llvm::Error fail(const std::string &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}
} // namespace

llvm::Expected<std::unique_ptr<onnx::ModelProto>>
mlir::kiln::onnx_import::loadOnnxModel(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return fail(fmt::format("cannot read '{}': {}", path.str(),
                            buffer.getError().message()));
  return parseOnnxModel((*buffer)->getBuffer(), path);
}

llvm::Expected<std::unique_ptr<onnx::ModelProto>>
mlir::kiln::onnx_import::parseOnnxModel(llvm::StringRef bytes,
                                        llvm::StringRef path) {
  if (bytes.empty())
    return fail(fmt::format("'{}' is empty, not an ONNX model", path.str()));

  auto model = std::make_unique<onnx::ModelProto>();
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(bytes.data()), (int)bytes.size());
  stream.SetTotalBytesLimit(INT32_MAX);
  if (bytes.size() > (size_t)INT32_MAX)
    return fail(fmt::format("'{}' is larger than 2 GB; store the weights as "
                            "ONNX external data",
                            path.str()));
  if (!model->ParseFromCodedStream(&stream) || !stream.ConsumedEntireMessage())
    return fail(fmt::format("'{}' is not a valid ONNX model (protobuf parse "
                            "failed: truncated or not an ONNX file)",
                            path.str()));
  if (!model->has_graph() ||
      model->graph().node_size() == 0 && model->graph().output_size() == 0)
    return fail(
        fmt::format("'{}' is not a valid ONNX model (no graph)", path.str()));
  if (model->graph().output_size() == 0)
    return fail(fmt::format("'{}': the graph has no outputs", path.str()));
  return model;
}

llvm::Expected<mlir::OwningOpRef<mlir::ModuleOp>>
mlir::kiln::onnx_import::importOnnxFile(mlir::MLIRContext &context,
                                        llvm::StringRef path,
                                        const ImportOptions &options) {
  auto model = loadOnnxModel(path);
  if (!model)
    return model.takeError();
  if (options.checkWeights)
    if (llvm::Error error =
            options.checkWeights(initializerBytes(context, **model)))
      return std::move(error);
  return importOnnxModel(context, **model, path, options);
}
