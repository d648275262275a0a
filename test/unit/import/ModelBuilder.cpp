//===- ModelBuilder.cpp - Hand-built ONNX protobufs for tests -------------===//
#include "ModelBuilder.h"

#include <cstdio>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace kiln_test;

ModelBuilder::ModelBuilder(int64_t opset) {
  model.set_ir_version(8);
  model.set_producer_name("kiln-tests");
  auto *op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  graph().set_name("test");
}

ModelBuilder &ModelBuilder::input(const std::string &name, int32_t type,
                                  const std::vector<int64_t> &dims,
                                  const std::string &symbolicDim) {
  auto *vi = graph().add_input();
  vi->set_name(name);
  auto *tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(type);
  auto *shape = tt->mutable_shape();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
  if (!symbolicDim.empty())
    shape->add_dim()->set_dim_param(symbolicDim);
  return *this;
}

ModelBuilder &ModelBuilder::output(const std::string &name) {
  graph().add_output()->set_name(name);
  return *this;
}

onnx::NodeProto &ModelBuilder::node(const std::string &op,
                                    const std::string &name,
                                    const std::vector<std::string> &inputs,
                                    const std::vector<std::string> &outputs) {
  auto *n = graph().add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto &i : inputs)
    n->add_input(i);
  for (const auto &o : outputs)
    n->add_output(o);
  return *n;
}

ModelBuilder &ModelBuilder::floatInit(const std::string &name,
                                      const std::vector<int64_t> &dims,
                                      const std::vector<float> &values,
                                      bool raw) {
  auto *t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->add_dims(d);
  if (raw)
    t->set_raw_data(std::string(reinterpret_cast<const char *>(values.data()),
                                values.size() * sizeof(float)));
  else
    for (float v : values)
      t->add_float_data(v);
  return *this;
}

ModelBuilder &ModelBuilder::int64Init(const std::string &name,
                                      const std::vector<int64_t> &values) {
  auto *t = graph().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims((int64_t)values.size());
  for (int64_t v : values)
    t->add_int64_data(v);
  return *this;
}

std::string ModelBuilder::write(const std::string &stem) const {
  std::string path = tempPath(stem + ".onnx");
  writeFile(path, bytes());
  return path;
}

void kiln_test::addInts(onnx::NodeProto &node, const std::string &name,
                        const std::vector<int64_t> &values) {
  auto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values)
    a->add_ints(v);
}

void kiln_test::addInt(onnx::NodeProto &node, const std::string &name,
                       int64_t value) {
  auto *a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

std::string kiln_test::tempPath(const std::string &name) {
  std::string dir = "/tmp/kiln-import-tests-" + std::to_string(getpid());
  ::mkdir(dir.c_str(), 0755);
  return dir + "/" + name;
}

void kiln_test::writeFile(const std::string &path, const std::string &bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}
