//===- ImporterTest.cpp - ONNX importer on hand-built protobufs -----------===//

#include "ModelBuilder.h"

#include "compiler/import/onnx/OnnxImporter.h"
#include "dialects/kiln/KilnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <catch.hpp>

using namespace kiln_test;
using namespace mlir;
namespace imp = mlir::kiln::onnx_import;

namespace {
/// Imports `model` and returns the error text ("" on success).
std::string importError(ModelBuilder &b, const imp::ImportOptions &options = {},
                        std::string *ir = nullptr) {
  MLIRContext ctx;
  auto module = imp::importOnnxModel(ctx, b.model, "/tmp/model.onnx", options);
  if (!module)
    return llvm::toString(module.takeError());
  if (ir) {
    llvm::raw_string_ostream os(*ir);
    (*module)->print(os);
  }
  return "";
}

std::string fileError(const std::string &path) {
  MLIRContext ctx;
  auto module = imp::importOnnxFile(ctx, path, {});
  return module ? "" : llvm::toString(module.takeError());
}

ModelBuilder addModel() {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("y", onnx::TensorProto::FLOAT, {3})
      .output("z");
  b.node("Add", "add", {"x", "y"}, {"z"});
  return b;
}
} // namespace

TEST_CASE("a simple graph imports into func @main with names kept") {
  ModelBuilder b = addModel();
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("func.func @main(%arg0: tensor<2x3xf32> {kiln.name = \"x\"}, "
                "%arg1: tensor<3xf32> {kiln.name = \"y\"}) -> "
                "(tensor<2x3xf32> {kiln.name = \"z\"})") != std::string::npos);
  CHECK(ir.find("kiln.add") != std::string::npos);
}

TEST_CASE("an unsupported op names the op, opset and node") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4}).output("y");
  b.node("FooBar", "foo_1", {"x"}, {"y"});
  CHECK(importError(b) == "unsupported ONNX op 'FooBar' (opset 13) at node "
                          "'foo_1'");
}

TEST_CASE("an op from another domain is unsupported") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4}).output("y");
  b.node("Gelu", "g", {"x"}, {"y"}).set_domain("com.microsoft");
  CHECK(importError(b) ==
        "unsupported ONNX op 'Gelu' (domain 'com.microsoft') at node 'g'");
}

TEST_CASE("shapes that do not broadcast name the node") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("y", onnx::TensorProto::FLOAT, {4})
      .output("z");
  b.node("Add", "add_7", {"x", "y"}, {"z"});
  CHECK(importError(b) ==
        "shapes [2, 3] and [4] do not broadcast at node 'add_7' (Add)");
}

TEST_CASE("a data-dependent shape is reported, not crashed on") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("repeats", onnx::TensorProto::INT64, {2})
      .output("y");
  b.node("Tile", "t", {"x", "repeats"}, {"y"});
  CHECK(importError(b) ==
        "unsupported ONNX op 'Tile' (opset 13) at node 't': needs "
        "data-dependent shape (input 1 'repeats' is computed at run time; "
        "only constant shape inputs are supported)");
}

TEST_CASE("a run-time Tile repeats compiles for the declared output shape") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("repeats", onnx::TensorProto::INT64, {2})
      .output("y");
  auto *shape = b.graph()
                    .mutable_output(0)
                    ->mutable_type()
                    ->mutable_tensor_type()
                    ->mutable_shape();
  shape->add_dim()->set_dim_value(4);
  shape->add_dim()->set_dim_value(9);
  b.node("Tile", "t", {"x", "repeats"}, {"y"});
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.assert %") != std::string::npos);
  CHECK(ir.find("\"Tile: input 1 'repeats' must be [2, 3], as the model "
                "declares 'y' as [4, 9]\" : tensor<i1>") != std::string::npos);
  CHECK(ir.find("-> (tensor<4x9xf32> {kiln.name = \"y\"})") !=
        std::string::npos);
  // A declared shape that is no tiling of the input gives no repeats.
  shape->mutable_dim(1)->set_dim_value(10);
  CHECK(importError(b) ==
        "unsupported ONNX op 'Tile' (opset 13) at node 't': needs "
        "data-dependent shape (input 1 'repeats' is computed at run time; "
        "only constant shape inputs are supported)");
}

TEST_CASE("a sequence inside the graph imports as its tensors") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("y", onnx::TensorProto::FLOAT, {2, 3})
      .input("z", onnx::TensorProto::FLOAT, {2, 3})
      .output("out");
  b.int64Init("pos", {1});
  b.graph().mutable_initializer(0)->clear_dims(); // a scalar position
  b.node("SequenceConstruct", "sc", {"x", "y", "z"}, {"seq"});
  b.node("SequenceErase", "se", {"seq", "pos"}, {"seq2"});
  b.node("ConcatFromSequence", "cat", {"seq2"}, {"out"});
  addInt(*b.graph().mutable_node(2), "axis", 1);
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.concat %arg0, %arg2 {axis = 1 : i64}") !=
        std::string::npos);
  CHECK(ir.find("-> (tensor<2x6xf32> {kiln.name = \"out\"})") !=
        std::string::npos);

  // Errors: a sequence read by a tensor op, a sequence graph output, a
  // position computed at run time, a position out of range.
  ModelBuilder misuse = b;
  misuse.graph().mutable_node(2)->set_op_type("Relu");
  misuse.graph().mutable_node(2)->clear_attribute();
  CHECK(importError(misuse) == "unsupported ONNX op 'Relu' (opset 13) at "
                               "node 'cat': input 'seq2' is a sequence");
  ModelBuilder output = b;
  output.graph().mutable_output(0)->set_name("seq2");
  CHECK(importError(output) == "graph output 'seq2' is a sequence (sequences "
                               "are supported inside the graph only)");
  ModelBuilder runtime = b;
  runtime.input("p", onnx::TensorProto::INT64, {});
  runtime.graph().mutable_node(1)->set_input(1, "p");
  CHECK(importError(runtime) ==
        "unsupported ONNX op 'SequenceErase' (opset 13) at node 'se': "
        "position input 1 'p' is computed at run time; only constant "
        "positions are supported");
  ModelBuilder range = b;
  range.graph().mutable_initializer(0)->set_int64_data(0, 3);
  CHECK(importError(range) == "position 3 is out of range for a sequence of "
                              "3 tensors at node 'se' (SequenceErase)");
}

TEST_CASE("string tensors import for string ops and data movement") {
  ModelBuilder b(10);
  b.input("x", onnx::TensorProto::STRING, {1, 4}).output("z");
  b.node("Transpose", "t", {"x"}, {"y"});
  onnx::NodeProto &norm = b.node("StringNormalizer", "n", {"y"}, {"z"});
  auto *action = norm.add_attribute();
  action->set_name("case_change_action");
  action->set_type(onnx::AttributeProto::STRING);
  action->set_s("LOWER");
  auto *stop = norm.add_attribute();
  stop->set_name("stopwords");
  stop->set_type(onnx::AttributeProto::STRINGS);
  stop->add_strings("a");
  // Transposed to [4, 1]: StringNormalizer takes [C] or [1, C].
  CHECK(importError(b) == "input X must be [C] or [1, C], not a tensor of "
                          "rank 2 with a first dim != 1 at node 'n' "
                          "(StringNormalizer)");
  b.graph().mutable_node(0)->set_op_type("Identity");
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.normalize_strings %arg0 {case_action = \"LOWER\", "
                "case_sensitive = false, stopwords = [\"a\"]} : "
                "tensor<1x4x!kiln.string> -> tensor<1x?x!kiln.string>") !=
        std::string::npos);

  // A StringNormalizer with no declared output shape has a run-time
  // extent; the string kernels need static sizes, so a second one (or a
  // Cast) after it is refused by name.
  ModelBuilder twice = b;
  twice.graph().mutable_output(0)->set_name("w");
  onnx::NodeProto &again = twice.node("StringNormalizer", "n2", {"z"}, {"w"});
  again.add_attribute()->CopyFrom(norm.attribute(0));
  CHECK(importError(twice) ==
        "unsupported ONNX op 'StringNormalizer' (opset 10) at node 'n2': "
        "StringNormalizer of a string tensor whose size is computed at run "
        "time (declare the shape of the StringNormalizer output that feeds "
        "it)");

  // Ops that would compute on the text's addresses reject strings.
  ModelBuilder math(10);
  math.input("x", onnx::TensorProto::STRING, {3}).output("y");
  math.node("Relu", "r", {"x"}, {"y"});
  CHECK(importError(math) ==
        "unsupported ONNX op 'Relu' (opset 10) at node 'r': input 'x' is a "
        "string tensor (strings are supported by Cast, CastLike, "
        "StringNormalizer and ops that only move elements)");
}

TEST_CASE("a run-time Reshape shape imports with ? result dims") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3})
      .input("shape", onnx::TensorProto::INT64, {3})
      .output("y");
  b.node("Reshape", "r", {"x", "shape"}, {"y"});
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.dynamic_reshape %arg0, %arg1 : (tensor<2x3xf32>, "
                "tensor<3xi64>) -> tensor<?x?x?xf32>") != std::string::npos);
  CHECK(ir.find("-> (tensor<?x?x?xf32> {kiln.name = \"y\"})") !=
        std::string::npos);
}

TEST_CASE("a constant shape computed from Shape folds away") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 4}).output("y");
  b.int64Init("idx", {0});
  b.int64Init("minus1", {-1});
  b.node("Shape", "s", {"x"}, {"shape"});
  b.node("Gather", "g", {"shape", "idx"}, {"batch"});
  b.node("Concat", "c", {"batch", "minus1"}, {"target"});
  addInt(*b.graph().mutable_node(2), "axis", 0);
  b.node("Reshape", "r", {"x", "target"}, {"y"});
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.reshape %arg0 {shape = array<i64: 2, 12>}") !=
        std::string::npos);
}

TEST_CASE("symbolic input dims import as run-time dims; --input-shape "
          "specializes them") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {}, "batch").output("x");
  std::string symbolic;
  REQUIRE(importError(b, {}, &symbolic) == "");
  CHECK(symbolic.find("tensor<?xf32> {kiln.dims = [\"batch\"]") !=
        std::string::npos);
  CHECK(symbolic.find("kiln.symbols = {batch = array<i64: 0, 2147483647>}") !=
        std::string::npos);
  imp::ImportOptions ranged;
  ranged.dimRanges["batch"] = {1, 64};
  REQUIRE(importError(b, ranged, &symbolic) == "");
  CHECK(symbolic.find("kiln.symbols = {batch = array<i64: 1, 64>}") !=
        std::string::npos);
  ranged.dimRanges["seq"] = {1, 8};
  CHECK(importError(b, ranged) ==
        "--dim names 'seq', which is not a symbolic dim of any input");
  imp::ImportOptions options;
  options.inputShapes["x"] = {5};
  std::string ir;
  REQUIRE(importError(b, options, &ir) == "");
  CHECK(ir.find("tensor<5xf32>") != std::string::npos);
  options.inputShapes["nope"] = {1};
  CHECK(importError(b, options) ==
        "--input-shape names 'nope', which is not a graph input");
}

TEST_CASE("raw and typed initializers give the same constant") {
  std::vector<float> values = {1, 2, 3};
  for (bool raw : {true, false}) {
    ModelBuilder b;
    b.input("x", onnx::TensorProto::FLOAT, {3}).output("y");
    b.floatInit("w", {3}, values, raw);
    b.node("Mul", "m", {"x", "w"}, {"y"});
    std::string ir;
    REQUIRE(importError(b, {}, &ir) == "");
    CHECK(ir.find("dense<[1.000000e+00, 2.000000e+00, 3.000000e+00]>") !=
          std::string::npos);
  }
}

TEST_CASE("large initializers stay raw blobs") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {1000}).output("y");
  b.floatInit("big_weight", {1000}, std::vector<float>(1000, 0.5f));
  b.node("Add", "a", {"x", "big_weight"}, {"y"});
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("dense_resource<big_weight>") != std::string::npos);
}

TEST_CASE("an initializer with the wrong byte count is rejected") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {4}).output("y");
  b.floatInit("w", {4}, {1, 2, 3});
  b.node("Add", "a", {"x", "w"}, {"y"});
  CHECK(importError(b) == "tensor 'w' holds 12 bytes, but its shape and type "
                          "need 16 at node 'a' (Add)");
}

TEST_CASE("external data next to the model is read") {
  ModelBuilder b;
  b.input("x", onnx::TensorProto::FLOAT, {2}).output("y");
  auto *t = b.graph().add_initializer();
  t->set_name("w");
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(2);
  t->set_data_location(onnx::TensorProto::EXTERNAL);
  auto *loc = t->add_external_data();
  loc->set_key("location");
  loc->set_value("weights.bin");
  b.node("Add", "a", {"x", "w"}, {"y"});
  std::string path = b.write("external");
  float data[2] = {4.0f, 5.0f};
  writeFile(tempPath("weights.bin"),
            std::string(reinterpret_cast<char *>(data), sizeof(data)));
  CHECK(fileError(path) == "");
  loc->set_value("../../etc/passwd");
  CHECK(fileError(b.write("escape")) ==
        "tensor 'w' has an invalid external data location "
        "'../../etc/passwd' at node 'a' (Add)");
}

TEST_CASE("malformed, truncated, empty and missing files fail in one line") {
  std::string good = addModel().bytes();
  std::string truncated = tempPath("truncated.onnx");
  writeFile(truncated, good.substr(0, good.size() / 2));
  CHECK(fileError(truncated) ==
        "'" + truncated +
            "' is not a valid ONNX model (protobuf parse failed: truncated or "
            "not an ONNX file)");
  std::string garbage = tempPath("garbage.onnx");
  writeFile(garbage, std::string("\xff\xff\xff\xff garbage", 12));
  CHECK(fileError(garbage).find("is not a valid ONNX model") !=
        std::string::npos);
  std::string empty = tempPath("empty.onnx");
  writeFile(empty, "");
  CHECK(fileError(empty) == "'" + empty + "' is empty, not an ONNX model");
  CHECK(fileError("/nonexistent/model.onnx") ==
        "cannot read '/nonexistent/model.onnx': No such file or directory");
  // Every prefix of a valid model fails cleanly or imports: never crashes.
  for (size_t n = 1; n < good.size(); n += 3) {
    std::string path = tempPath("prefix.onnx");
    writeFile(path, good.substr(0, n));
    (void)fileError(path);
  }
}

TEST_CASE("opset differences: Softmax before 13 flattens at axis") {
  ModelBuilder b(11);
  b.input("x", onnx::TensorProto::FLOAT, {2, 3, 4}).output("y");
  b.node("Softmax", "sm", {"x"}, {"y"});
  std::string ir;
  REQUIRE(importError(b, {}, &ir) == "");
  CHECK(ir.find("kiln.reshape %arg0 {shape = array<i64: 2, 12>}") !=
        std::string::npos);
  CHECK(ir.find("kiln.softmax") != std::string::npos);
}

TEST_CASE("the bundled examples import") {
  for (const char *name : {"cnn", "transformer"}) {
    std::string path =
        std::string(KILN_SOURCE_DIR) + "/examples/" + name + "/model.onnx";
    INFO(path);
    CHECK(fileError(path) == "");
  }
}
