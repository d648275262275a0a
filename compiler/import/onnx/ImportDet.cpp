//===- ImportDet.cpp - Det of small matrices ------------------------------===//
//
// Det of [*, M, M] for M <= 4 by cofactor expansion along the first row,
// written out at import time over the M*M element tensors (each [*]): at most
// 24 products for M = 4, all elementwise over the batch. Larger matrices
// would need a pivoted LU factorization, which Kiln does not have.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

constexpr int64_t kMaxDetSize = 4;

/// The determinant of the submatrix of `a` with the given rows and columns,
/// expanded along its first row.
Value cofactorDet(NNBuilder &e, ArrayRef<SmallVector<Value>> a,
                  ArrayRef<int64_t> rows, ArrayRef<int64_t> cols) {
  if (rows.size() == 1)
    return a[rows[0]][cols[0]];
  SmallVector<int64_t> rest(rows.drop_front());
  Value det;
  for (size_t j = 0; j < cols.size(); ++j) {
    SmallVector<int64_t> minorCols(cols);
    minorCols.erase(minorCols.begin() + j);
    Value term = e.mul(a[rows[0]][cols[j]], cofactorDet(e, a, rest, minorCols));
    if (!det)
      det = term;
    else
      det = j % 2 ? e.sub(det, term) : e.add(det, term);
  }
  return det;
}

Results importDet(NodeContext &c) {
  Value x = c.input(0);
  if (!x)
    return c.fail("needs an input");
  auto type = c.type(x);
  int64_t rank = type.getRank();
  if (rank < 2 || type.getDimSize(rank - 1) != type.getDimSize(rank - 2))
    return c.fail("input must be [*, M, M]");
  if (!isa<FloatType>(type.getElementType()))
    return c.fail("input must be floats");
  int64_t m = type.getDimSize(rank - 1);
  if (m > kMaxDetSize)
    return c.unsupported(
        fmt::format("{}x{} matrices (only up to {}x{}; larger ones need an LU "
                    "factorization)",
                    m, m, kMaxDetSize, kMaxDetSize));
  NNBuilder e(c);
  SmallVector<int64_t> batch(type.getShape().drop_back(2));
  if (m == 0)
    return e.done({e.splat(batch, type.getElementType(), 1)});
  SmallVector<SmallVector<Value>> a(m);
  for (int64_t i = 0; i < m; ++i) {
    Value row = e.slice(x, rank - 2, i, i + 1);
    for (int64_t j = 0; j < m; ++j)
      a[i].push_back(e.reshape(e.slice(row, rank - 1, j, j + 1), batch));
  }
  SmallVector<int64_t> all;
  for (int64_t i = 0; i < m; ++i)
    all.push_back(i);
  return e.done({cofactorDet(e, a, all, all)});
}
} // namespace

void mlir::kiln::onnx_import::registerDetHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Det"] = importDet;
}
