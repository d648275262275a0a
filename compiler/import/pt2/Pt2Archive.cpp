//===- Pt2Archive.cpp - A torch.export .pt2 archive, read in C++ ----------===//
#include "compiler/import/pt2/Pt2Archive.h"

#include <cstring>

#include "llvm/ADT/StringExtras.h"

using namespace mlir::kiln::pt2;
using llvm::StringRef;
using llvm::json::Array;
using llvm::json::Object;

namespace {
/// The schema major this reader understands (torch 2.5 .. 2.15 write 8.x).
constexpr int64_t kSchemaMajor = 8;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message.str());
}
} // namespace

std::string mlir::kiln::pt2::compactSympy(StringRef expr) {
  std::string out;
  while (!expr.empty()) {
    size_t at = expr.find("Symbol('");
    out += expr.take_front(at).str();
    if (at == StringRef::npos)
      break;
    expr = expr.drop_front(at + strlen("Symbol('"));
    StringRef name = expr.take_until([](char c) { return c == '\''; });
    size_t close = expr.find(')');
    if (close == StringRef::npos)
      return out + "Symbol('" + expr.str(); // not sympy's form: as written
    out += name.str();
    expr = expr.drop_front(close + 1);
  }
  return out;
}

llvm::Expected<TensorMeta> mlir::kiln::pt2::parseTensorMeta(const Object &meta,
                                                            StringRef what) {
  TensorMeta result;
  std::optional<int64_t> dtype = meta.getInteger("dtype");
  const Array *sizes = meta.getArray("sizes");
  const Array *strides = meta.getArray("strides");
  if (!dtype || !sizes)
    return error(what + " has no dtype or sizes");
  result.dtype = *dtype;
  if (std::optional<int64_t> layout = meta.getInteger("layout");
      layout && *layout != 7)
    return error(what + " has layout " + llvm::Twine(*layout) +
                 "; Kiln reads strided (dense) tensors only");
  for (const llvm::json::Value &size : *sizes) {
    const Object *s = size.getAsObject();
    if (std::optional<int64_t> v = s ? s->getInteger("as_int") : std::nullopt) {
      if (*v < 0)
        return error(what + " has a negative size (" + llvm::Twine(*v) + ")");
      result.sizes.push_back(*v);
      result.symbols.emplace_back();
      continue;
    }
    const Object *expr = s ? s->getObject("as_expr") : nullptr;
    std::optional<StringRef> text =
        expr ? expr->getString("expr_str") : std::nullopt;
    if (!text)
      return error(what + " has a size that is neither an integer nor a "
                          "symbolic expression");
    result.sizes.push_back(-1);
    result.symbols.push_back(text->str());
  }
  if (strides)
    for (const llvm::json::Value &stride : *strides) {
      const Object *s = stride.getAsObject();
      std::optional<int64_t> v = s ? s->getInteger("as_int") : std::nullopt;
      result.strides.push_back(v ? *v : -1);
    }
  if (const Object *offset = meta.getObject("storage_offset"))
    result.storageOffset = offset->getInteger("as_int").value_or(-1);
  return result;
}

llvm::Expected<std::unique_ptr<Pt2Archive>> Pt2Archive::open(StringRef path) {
  auto zip = ZipArchive::open(path);
  if (!zip)
    return zip.takeError();
  return fromZip(std::move(*zip));
}

llvm::Expected<std::unique_ptr<Pt2Archive>>
Pt2Archive::fromBytes(StringRef bytes, StringRef path) {
  auto zip = ZipArchive::fromBuffer(bytes, path);
  if (!zip)
    return zip.takeError();
  return fromZip(std::move(*zip));
}

llvm::Expected<std::unique_ptr<Pt2Archive>>
Pt2Archive::fromZip(std::unique_ptr<ZipArchive> zip) {
  auto archive = std::make_unique<Pt2Archive>();
  archive->zip_ = std::move(zip);
  const ZipArchive &z = *archive->zip_;
  StringRef path = z.path();
  auto fail = [&](const llvm::Twine &what) {
    return error("'" + path + "': " + what);
  };
  if (z.entries().empty())
    return fail("the archive is empty");
  // Every entry sits under one root folder (the file's stem, or "archive").
  StringRef first = z.entries().front().name;
  archive->root_ = first.substr(0, first.find('/') + 1).str();
  StringRef root = archive->root_;
  if (z.find(root.str() + "serialized_exported_program.json") ||
      z.find("serialized_exported_program.json"))
    return fail("this is the legacy torch.export layout "
                "(serialized_exported_program.json); save the program again "
                "with torch.export.save from torch 2.5 or newer");

  // The exported program: models/<name>.json ("model" for torch.export.save).
  std::vector<const ZipArchive::Entry *> models;
  for (const ZipArchive::Entry &e : z.entries()) {
    StringRef name = e.name;
    if (name.consume_front(root) && name.consume_front("models/") &&
        name.ends_with(".json") && !name.contains('/'))
      models.push_back(&e);
  }
  if (models.empty()) {
    bool aoti = llvm::any_of(z.entries(), [&](const ZipArchive::Entry &e) {
      return StringRef(e.name).starts_with(root.str() + "data/aotinductor/");
    });
    return fail(aoti ? "this is an AOTInductor package (data/aotinductor/) "
                       "with no exported program to compile; save the "
                       "ExportedProgram with torch.export.save instead"
                     : "no exported program (no models/<name>.json entry)");
  }
  const ZipArchive::Entry *model = models.front();
  if (models.size() > 1) {
    auto it = llvm::find_if(models, [&](const ZipArchive::Entry *e) {
      return StringRef(e->name).ends_with("/models/model.json");
    });
    if (it == models.end())
      return fail("the archive holds " + llvm::Twine(models.size()) +
                  " programs and none is named 'model'");
    model = *it;
  }
  archive->modelName_ =
      StringRef(model->name).rsplit('/').second.drop_back(5).str();

  if (const ZipArchive::Entry *order = z.find(root.str() + "byteorder")) {
    auto text = z.read(*order);
    if (!text)
      return text.takeError();
    if (text->trim() != "little")
      return fail("its data is " + text->trim() +
                  "-endian; Kiln reads little-endian archives");
  }

  auto bytes = z.read(*model);
  if (!bytes)
    return bytes.takeError();
  auto json = llvm::json::parse(*bytes);
  if (!json)
    return fail("entry '" + model->name +
                "' is not valid JSON: " + llvm::toString(json.takeError()));
  archive->json_ = std::move(*json);
  archive->program_ = archive->json_.getAsObject();
  const Object *program = archive->program_;
  const Object *version =
      program ? program->getObject("schema_version") : nullptr;
  std::optional<int64_t> major =
      version ? version->getInteger("major") : std::nullopt;
  if (!major)
    return fail("entry '" + model->name + "' has no schema_version");
  if (*major != kSchemaMajor)
    return fail("entry '" + model->name + "' has schema version " +
                llvm::Twine(*major) + "." +
                llvm::Twine(version->getInteger("minor").value_or(0)) +
                "; Kiln reads major version " + llvm::Twine(kSchemaMajor) +
                " (torch 2.5 to 2.15)");
  const Object *module = program->getObject("graph_module");
  archive->graph_ = module ? module->getObject("graph") : nullptr;
  archive->signature_ = module ? module->getObject("signature") : nullptr;
  if (!archive->graph_ || !archive->signature_)
    return fail("entry '" + model->name +
                "' has no graph_module.graph or signature");

  std::string modelName = archive->modelName_;
  if (auto err = archive->readPayloads(
          root.str() + "data/weights/" + modelName + "_weights_config.json",
          root.str() + "data/weights/", archive->weights_))
    return std::move(err);
  if (auto err = archive->readPayloads(
          root.str() + "data/constants/" + modelName + "_constants_config.json",
          root.str() + "data/constants/", archive->constants_))
    return std::move(err);
  return archive;
}

llvm::Error Pt2Archive::readPayloads(StringRef config, StringRef folder,
                                     llvm::StringMap<Payload> &into) {
  const ZipArchive &z = *zip_;
  const ZipArchive::Entry *entry = z.find(config);
  if (!entry)
    return llvm::Error::success(); // no weights or no constants
  auto fail = [&](const llvm::Twine &what) {
    return error("'" + z.path() + "': " + what);
  };
  auto bytes = z.read(*entry);
  if (!bytes)
    return bytes.takeError();
  auto json = llvm::json::parse(*bytes);
  if (!json)
    return fail("entry '" + config +
                "' is not valid JSON: " + llvm::toString(json.takeError()));
  const Object *root = json->getAsObject();
  const Object *map = root ? root->getObject("config") : nullptr;
  if (!map)
    return fail("entry '" + config + "' has no config object");
  for (const auto &[name, value] : *map) {
    const Object *payload = value.getAsObject();
    std::optional<StringRef> file =
        payload ? payload->getString("path_name") : std::nullopt;
    const Object *meta = payload ? payload->getObject("tensor_meta") : nullptr;
    std::string what =
        "tensor '" + name.str() + "' of entry '" + config.str() + "'";
    if (!file)
      return fail(what + " has no path_name");
    if (payload->getBoolean("use_pickle").value_or(false))
      return fail(what + " is pickled (use_pickle: a tensor subclass); Kiln "
                         "never unpickles archive data");
    if (!meta)
      return fail(what + " has no tensor_meta");
    auto parsed = parseTensorMeta(*meta, what);
    if (!parsed)
      return fail(llvm::toString(parsed.takeError()));
    std::string storageName = (folder + *file).str();
    const ZipArchive::Entry *storage = z.find(storageName);
    if (!storage)
      return fail(what + " names the missing entry '" + storageName + "'");
    auto data = z.read(*storage);
    if (!data)
      return data.takeError();
    into[name] = Payload{storageName, *data, std::move(*parsed)};
  }
  return llvm::Error::success();
}

const Payload *Pt2Archive::weight(StringRef name) const {
  auto it = weights_.find(name);
  return it == weights_.end() ? nullptr : &it->second;
}

const Payload *Pt2Archive::constant(StringRef name) const {
  auto it = constants_.find(name);
  return it == constants_.end() ? nullptr : &it->second;
}
