//===- ModelBuilder.h - Hand-built ONNX protobufs for tests -----*- C++ -*-===//
#ifndef KILN_TEST_UNIT_IMPORT_MODELBUILDER_H
#define KILN_TEST_UNIT_IMPORT_MODELBUILDER_H

#include "onnx/onnx.pb.h"

#include <string>
#include <vector>

namespace kiln_test {
/// Small fluent helper over onnx::ModelProto for tests.
struct ModelBuilder {
  onnx::ModelProto model;
  explicit ModelBuilder(int64_t opset = 13);
  onnx::GraphProto &graph() { return *model.mutable_graph(); }
  ModelBuilder &input(const std::string &name, int32_t type,
                      const std::vector<int64_t> &dims,
                      const std::string &symbolicDim = "");
  ModelBuilder &output(const std::string &name);
  onnx::NodeProto &node(const std::string &op, const std::string &name,
                        const std::vector<std::string> &inputs,
                        const std::vector<std::string> &outputs);
  ModelBuilder &floatInit(const std::string &name,
                          const std::vector<int64_t> &dims,
                          const std::vector<float> &values, bool raw = true);
  ModelBuilder &int64Init(const std::string &name,
                          const std::vector<int64_t> &values);
  std::string bytes() const { return model.SerializeAsString(); }
  /// Writes the model to a fresh temp file and returns its path.
  std::string write(const std::string &stem) const;
};
void addInts(onnx::NodeProto &node, const std::string &name,
             const std::vector<int64_t> &values);
void addInt(onnx::NodeProto &node, const std::string &name, int64_t value);
std::string tempPath(const std::string &name);
void writeFile(const std::string &path, const std::string &bytes);
} // namespace kiln_test

#endif
