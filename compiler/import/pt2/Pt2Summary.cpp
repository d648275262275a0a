//===- Pt2Summary.cpp - What `kiln inspect` says about a .pt2 -------------===//
#include "compiler/import/pt2/Pt2Archive.h"
#include "compiler/import/pt2/Pt2Importer.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace mlir::kiln::pt2;
using llvm::StringRef;
using llvm::json::Object;

namespace {
/// torch's name of a schema ScalarType code.
std::string dtypeName(int64_t code) {
  static const char *const names[] = {
      "uint8",      "int8",    "int16",   "int32",     "int64",
      "float16",    "float32", "float64", "complex32", "complex64",
      "complex128", "bool",    "bfloat16"};
  if (code >= 1 && code <= 13)
    return names[code - 1];
  return "dtype " + std::to_string(code);
}

std::string shapeOf(const Object *meta) {
  if (!meta)
    return "?";
  auto parsed = parseTensorMeta(*meta, "");
  if (!parsed) {
    llvm::consumeError(parsed.takeError());
    return "?";
  }
  std::vector<std::string> dims;
  for (size_t d = 0; d < parsed->sizes.size(); ++d)
    dims.push_back(parsed->sizes[d] >= 0 ? std::to_string(parsed->sizes[d])
                                         : compactSympy(parsed->symbols[d]));
  return dtypeName(parsed->dtype) + " [" + llvm::join(dims, ", ") + "]";
}
} // namespace

llvm::Error
mlir::kiln::pt2::describePt2(StringRef path, llvm::raw_ostream &os,
                             std::vector<std::string> &unsupported) {
  auto archive = Pt2Archive::open(path);
  if (!archive)
    return archive.takeError();
  const Pt2Archive &a = **archive;
  const Object &program = a.program();
  const Object *version = program.getObject("schema_version");
  os << "model:     " << path << "\n";
  os << "format:    torch.export .pt2 (program '" << a.modelName()
     << "', schema " << (version ? version->getInteger("major").value_or(0) : 0)
     << "." << (version ? version->getInteger("minor").value_or(0) : 0)
     << ", torch " << program.getString("torch_version").value_or("?") << ")\n";
  const Object *values = a.graph().getObject("tensor_values");
  std::vector<std::string> inputs;
  uint64_t params = 0;
  if (const llvm::json::Array *specs = a.signature().getArray("input_specs"))
    for (const llvm::json::Value &s : *specs) {
      const Object *spec = s.getAsObject();
      if (!spec || spec->empty())
        continue;
      const Object *body = spec->begin()->second.getAsObject();
      const Object *arg = body ? body->getObject("arg") : nullptr;
      if (spec->begin()->first == "user_input") {
        const Object *t = arg ? arg->getObject("as_tensor") : nullptr;
        if (std::optional<StringRef> n =
                t ? t->getString("name") : std::nullopt)
          inputs.push_back(n->str());
        continue;
      }
      std::optional<StringRef> n = arg ? arg->getString("name") : std::nullopt;
      const Object *meta = n && values ? values->getObject(*n) : nullptr;
      if (auto parsed = meta ? parseTensorMeta(*meta, "")
                             : llvm::Expected<TensorMeta>(TensorMeta())) {
        uint64_t count = 1;
        for (int64_t d : parsed->sizes)
          count *= std::max<int64_t>(d, 0);
        params += count;
      } else {
        llvm::consumeError(parsed.takeError());
      }
    }
  os << "inputs:\n";
  for (const std::string &in : inputs)
    os << llvm::format("  %-24s ", in.c_str())
       << shapeOf(values ? values->getObject(in) : nullptr) << "\n";
  os << "outputs:\n";
  if (const llvm::json::Array *specs = a.signature().getArray("output_specs"))
    for (const llvm::json::Value &s : *specs) {
      const Object *spec = s.getAsObject();
      const Object *body = spec && !spec->empty()
                               ? spec->begin()->second.getAsObject()
                               : nullptr;
      const Object *arg = body ? body->getObject("arg") : nullptr;
      const Object *t = arg ? arg->getObject("as_tensor") : nullptr;
      if (std::optional<StringRef> n = t ? t->getString("name") : std::nullopt)
        os << llvm::format("  %-24s ", n->str().c_str())
           << shapeOf(values ? values->getObject(*n) : nullptr) << "\n";
    }
  os << "parameters: " << params << "\n";
  std::map<std::string, int> histogram;
  size_t nodes = 0;
  if (const llvm::json::Array *list = a.graph().getArray("nodes"))
    for (const llvm::json::Value &n : *list) {
      const Object *node = n.getAsObject();
      StringRef target =
          node ? node->getString("target").value_or("?") : StringRef("?");
      target.consume_front("torch.ops.");
      ++histogram[target.str()];
      ++nodes;
    }
  std::vector<std::pair<std::string, int>> ops(histogram.begin(),
                                               histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](auto &x, auto &y) { return x.second > y.second; });
  std::vector<std::string> supported = supportedAtenOps();
  os << "nodes:     " << nodes << "\n";
  for (const auto &[op, count] : ops) {
    bool ok = std::binary_search(supported.begin(), supported.end(), op);
    os << llvm::format("  %-48s %5d", op.c_str(), count)
       << (ok ? "" : "   (unsupported)") << "\n";
    if (!ok)
      unsupported.push_back(op);
  }
  return llvm::Error::success();
}
