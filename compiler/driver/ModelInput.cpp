//===- ModelInput.cpp - Model files in: ONNX or kiln IR, by content -------===//
#include "compiler/driver/ModelInput.h"

#include "compiler/driver/CompileMemory.h"
#include "compiler/import/onnx/OnnxImporter.h"
#include "compiler/import/pt2/Pt2Importer.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MemoryBuffer.h"

using namespace mlir;
using namespace mlir::kiln;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

llvm::Expected<ModelFormat>
mlir::kiln::detectModelFormat(llvm::StringRef path) {
  // Mapped, not read: only the first bytes are looked at.
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return fail("cannot read '" + path + "': " + file.getError().message());
  llvm::StringRef head = (*file)->getBuffer().take_front(4096);
  if (head.starts_with("\x7f"
                       "ELF"))
    return ModelFormat::Artifact;
  if (head.starts_with("ML\xef"
                       "R"))
    return ModelFormat::Mlir;
  // A zip: torch.export.save's .pt2 archive.
  if (head.starts_with("PK\x03\x04"))
    return ModelFormat::Pt2;
  // ONNX files start with a protobuf field tag (a control byte); text has
  // no NULs.
  bool text = !head.empty() && head.find('\0') == llvm::StringRef::npos &&
              (llvm::isPrint(head[0]) || llvm::isSpace(head[0]));
  if (!text)
    return ModelFormat::Onnx;
  llvm::StringRef rest = head;
  while (true) {
    rest = rest.ltrim();
    if (!rest.starts_with("//"))
      break;
    rest = rest.drop_until([](char c) { return c == '\n'; });
  }
  for (llvm::StringRef start : {"module", "func.func", "{-#"})
    if (rest.starts_with(start))
      return ModelFormat::Mlir;
  // An attribute or type alias: `#map = ...`, `!t = ...`.
  if (rest.starts_with("#") || rest.starts_with("!")) {
    llvm::StringRef name = rest.drop_front().take_while([](char c) {
      return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
    });
    if (!name.empty() &&
        rest.drop_front(1 + name.size()).ltrim(" \t").starts_with("="))
      return ModelFormat::Mlir;
  }
  return fail("'" + path +
              "' is neither an ONNX model nor kiln IR (MLIR text starts "
              "with 'module' or 'func.func', as kiln import prints it)");
}

llvm::Expected<OwningOpRef<ModuleOp>> mlir::kiln::loadModel(
    MLIRContext &context, llvm::StringRef path,
    const std::map<std::string, std::vector<int64_t>> &inputShapes,
    const std::map<std::string, std::pair<int64_t, int64_t>> &dimRanges,
    std::function<llvm::Error(uint64_t)> checkWeights) {
  llvm::Expected<ModelFormat> format = detectModelFormat(path);
  if (!format)
    return format.takeError();
  if (*format == ModelFormat::Artifact)
    return fail("'" + path +
                "' is a compiled artifact, not a model (kiln run and kiln "
                "inspect take artifacts)");
  if (*format == ModelFormat::Onnx) {
    onnx_import::ImportOptions options;
    options.inputShapes = inputShapes;
    options.dimRanges = dimRanges;
    options.checkWeights = std::move(checkWeights);
    return onnx_import::importOnnxFile(context, path, options);
  }
  if (*format == ModelFormat::Pt2) {
    if (!dimRanges.empty())
      return fail("--dim applies to ONNX models; compile '" + path +
                  "' with --input-shape for its symbolic sizes");
    pt2::ImportOptions options;
    options.inputShapes = inputShapes;
    options.checkWeights = std::move(checkWeights);
    return pt2::importPt2File(context, path, options);
  }
  if (!inputShapes.empty() || !dimRanges.empty())
    return fail(std::string(inputShapes.empty() ? "--dim" : "--input-shape") +
                " applies to ONNX models; the kiln IR in '" + path +
                "' carries its own shapes");
  context.loadAllAvailableDialects();
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, &context);
  if (!module)
    return fail("'" + path + "' is not valid kiln IR (see the errors above)");
  if (failed(verify(*module)))
    return fail("'" + path + "' does not verify (see the errors above)");
  auto entry = module->lookupSymbol<func::FuncOp>("main");
  if (!entry || entry.isExternal())
    return fail("'" + path +
                "' has no entry function: kiln IR needs a 'func.func @main' "
                "with the model's inputs and outputs");
  if (checkWeights)
    if (llvm::Error error = checkWeights(weightBytes(*module)))
      return std::move(error);
  return module;
}
