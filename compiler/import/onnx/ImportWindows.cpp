//===- ImportWindows.cpp - HannWindow, HammingWindow, BlackmanWindow ------===//
//
// The window functions of a length given as a (run-time) scalar:
//   n = Range(0, size, 1), x = 2 pi n / N   (N = size if periodic, else
//   size - 1)
//   Hann      0.5 - 0.5 cos(x)
//   Hamming   25/46 - 21/46 cos(x)
//   Blackman  0.42 - 0.5 cos(x) + 0.08 cos(2x)
// computed in f64 and cast to `output_datatype`. The length is a run-time
// extent (kiln.dynamic_range), so the output leaves through the dynamic
// output record unless the size is a constant that folds.
//
//===----------------------------------------------------------------------===//
#include "compiler/import/onnx/NodeContext.h"

#include <cmath>

using namespace mlir;
using namespace mlir::kiln::onnx_import;
namespace k = mlir::kiln;

namespace {
enum class Window { Hann, Hamming, Blackman };

/// c0 - c1 cos(x) + c2 cos(2x) for the window's coefficients.
Results importWindow(NodeContext &c, Window window) {
  Type outType =
      elementTypeFor(c.ctx(), int32_t(c.attrInt("output_datatype", 1)));
  if (!outType || !isa<FloatType>(outType))
    return c.fail("output_datatype must be a floating-point type");
  auto sizeType = c.type(c.input(0));
  if (sizeType.getRank() != 0 || !isa<IntegerType>(sizeType.getElementType()))
    return c.fail("size must be an integer scalar");
  bool periodic = c.attrInt("periodic", 1) != 0;
  Type f64 = c.b.getF64Type();
  auto to = [&](Value v, Type type) {
    return c.make<k::CastOp>(v, {c.named("to", TypeAttr::get(type))});
  };
  FailureOr<Value> size = to(c.input(0), f64);
  if (failed(size))
    return failure();
  FailureOr<Value> n = c.make<k::DynamicRangeOp>(
      {c.scalar(f64, 0.0), *size, c.scalar(f64, 1.0)});
  FailureOr<Value> denominator =
      periodic ? size : c.make<k::SubOp>({*size, c.scalar(f64, 1.0)});
  if (failed(n) || failed(denominator))
    return failure();
  FailureOr<Value> angle = c.make<k::MulOp>({*n, c.scalar(f64, 2 * M_PI)});
  if (succeeded(angle))
    angle = c.make<k::DivOp>({*angle, *denominator});
  if (failed(angle))
    return failure();
  double c0 = 0.5, c1 = 0.5, c2 = 0.0;
  if (window == Window::Hamming)
    c0 = 25.0 / 46.0, c1 = 21.0 / 46.0;
  if (window == Window::Blackman)
    c0 = 0.42, c1 = 0.5, c2 = 0.08;
  FailureOr<Value> cosine = c.make<k::CosOp>(*angle);
  FailureOr<Value> term = succeeded(cosine)
                              ? c.make<k::MulOp>({*cosine, c.scalar(f64, c1)})
                              : cosine;
  FailureOr<Value> w =
      succeeded(term) ? c.make<k::SubOp>({c.scalar(f64, c0), *term}) : term;
  if (succeeded(w) && c2 != 0.0) {
    FailureOr<Value> twice = c.make<k::MulOp>({*angle, c.scalar(f64, 2.0)});
    FailureOr<Value> cos2 = succeeded(twice) ? c.make<k::CosOp>(*twice) : twice;
    FailureOr<Value> term2 =
        succeeded(cos2) ? c.make<k::MulOp>({*cos2, c.scalar(f64, c2)}) : cos2;
    w = succeeded(term2) ? c.make<k::AddOp>({*w, *term2}) : term2;
  }
  if (failed(w))
    return failure();
  return one(to(*w, outType));
}
} // namespace

void mlir::kiln::onnx_import::registerWindowHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["HannWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Hann);
  };
  t["HammingWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Hamming);
  };
  t["BlackmanWindow"] = [](NodeContext &c) {
    return importWindow(c, Window::Blackman);
  };
}
