//===- ImportTfIdf.cpp - TfIdfVectorizer of integer tokens ----------------===//
//
// TfIdfVectorizer counts, per row of X ([C] or [N, C] integer tokens), how
// often each n-gram of its pool occurs, with up to max_skip_count tokens
// skipped between the items of an n-gram (unigrams are counted once, not per
// skip). The pool and the output layout are attributes, so the counting is
// composed here from kiln ops, per n-gram length n and skip s:
//
//   window m of X:  X[:, m*(s+1) : m*(s+1) + L]     (L = C - (n-1)*(s+1))
//   match:          AND over m of (window m [N, L, 1] == item m of each
//                   n-gram [G])                       -> [N, L, G]
//   count:          sum over L of the matches         -> [N, G]
//
// The counts of all lengths, in pool order, go to their output columns
// (ngram_indexes) through a matmul with a constant 0/1 matrix, then the
// mode's weighting applies (TF: counts; IDF: weight if present; TFIDF:
// weight times count).
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportIndexing.h"
#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// A rank-1 constant of `type` (X's integer type) holding `values`.
Value tokenConstant(NodeContext &c, Type type, ArrayRef<int64_t> values) {
  SmallVector<APInt> bits;
  for (int64_t v : values)
    bits.push_back(APInt(type.getIntOrFloatBitWidth(), v, true));
  return c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
      RankedTensorType::get({(int64_t)values.size()}, type), bits)));
}

/// Occurrences of the `grams` n-grams of length `n` (row-major in `items`)
/// in each row of `x` [N, C], summed over skips 0..maxSkip: [N, grams].
Value countGrams(NNBuilder &e, Value x, ArrayRef<int64_t> items, int64_t n,
                 int64_t grams, int64_t maxSkip) {
  NodeContext &c = e.c;
  int64_t rows = e.shape(x)[0], width = e.shape(x)[1];
  Type f32 = c.b.getF32Type();
  Value total;
  for (int64_t skip = 0; skip <= (n == 1 ? 0 : maxSkip); ++skip) {
    int64_t length = width - (n - 1) * (skip + 1);
    if (length <= 0)
      break;
    Value match;
    for (int64_t m = 0; m < n; ++m) {
      int64_t start = m * (skip + 1);
      Value window =
          e.reshape(e.slice(x, 1, start, start + length), {rows, length, 1});
      SmallVector<int64_t> item;
      for (int64_t g = 0; g < grams; ++g)
        item.push_back(items[g * n + m]);
      Value eq = e.equal(window, tokenConstant(c, e.elementType(x), item));
      match = match ? e.op<AndOp>({match, eq}) : eq;
    }
    Value count = e.reduceSum(e.cast(match, f32), {1}, false);
    total = total ? e.add(total, count) : count;
  }
  return total ? total : e.splat({rows, grams}, f32, 0);
}

Results importTfIdfVectorizer(NodeContext &c) {
  if (c.hasAttr("pool_strings"))
    return c.unsupported("string n-gram pools (only pool_int64s)");
  Value x = c.input(0);
  if (!x)
    return c.fail("needs an input");
  auto xType = c.type(x);
  if (!isa<IntegerType>(xType.getElementType()))
    return c.unsupported("non-integer input (strings are not supported)");
  if (xType.getRank() != 1 && xType.getRank() != 2)
    return c.fail("input must be [C] or [N, C]");
  std::string mode = c.attrString("mode", "");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return c.fail("mode must be TF, IDF or TFIDF");
  int64_t minGram = c.attrInt("min_gram_length", 0);
  int64_t maxGram = c.attrInt("max_gram_length", 0);
  int64_t maxSkip = c.attrInt("max_skip_count", 0);
  auto pool = c.attrInts("pool_int64s").value_or(SmallVector<int64_t>());
  auto starts = c.attrInts("ngram_counts").value_or(SmallVector<int64_t>());
  auto indexes = c.attrInts("ngram_indexes").value_or(SmallVector<int64_t>());
  if (minGram < 1 || maxGram < minGram || maxSkip < 0)
    return c.fail("bad min_gram_length/max_gram_length/max_skip_count");
  if (indexes.empty())
    return c.fail("ngram_indexes is empty");
  int64_t width = *llvm::max_element(indexes) + 1;
  if (*llvm::min_element(indexes) < 0)
    return c.fail("negative ngram_indexes");
  SmallVector<double> weights;
  if (const auto *a = c.attr("weights"))
    weights.assign(a->floats().begin(), a->floats().end());
  if (!weights.empty() && (int64_t)weights.size() < width)
    return c.fail("fewer weights than output columns");

  NNBuilder e(c);
  int64_t rows = xType.getRank() == 2 ? xType.getDimSize(0) : 1;
  Value x2 = e.reshape(x, {rows, xType.getDimSize(xType.getRank() - 1)});
  Type f32 = c.b.getF32Type();
  // Counts of the n-grams with a length in range, and the output column of
  // each of them.
  SmallVector<Value> counts;
  SmallVector<int64_t> columns;
  int64_t gramIndex = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    int64_t n = i + 1, begin = starts[i];
    int64_t end = i + 1 < starts.size() ? starts[i + 1] : pool.size();
    if (begin < 0 || end < begin || end > (int64_t)pool.size() ||
        (end - begin) % n != 0)
      return c.fail(fmt::format("ngram_counts do not split the pool into "
                                "whole n-grams (length {})",
                                n));
    int64_t grams = (end - begin) / n;
    if (gramIndex + grams > (int64_t)indexes.size())
      return c.fail("fewer ngram_indexes than n-grams in the pool");
    if (grams > 0 && n >= minGram && n <= maxGram) {
      counts.push_back(countGrams(
          e, x2, ArrayRef(pool).slice(begin, end - begin), n, grams, maxSkip));
      for (int64_t g = 0; g < grams; ++g)
        columns.push_back(indexes[gramIndex + g]);
    }
    gramIndex += grams;
  }

  Value y;
  if (counts.empty()) {
    y = e.splat({rows, width}, f32, 0);
  } else {
    // [N, grams] x [grams, width] 0/1 matrix: each count to its column.
    SmallVector<float> scatter(columns.size() * width, 0.0f);
    for (size_t g = 0; g < columns.size(); ++g)
      scatter[g * width + columns[g]] = 1.0f;
    Value matrix = c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({(int64_t)columns.size(), width}, f32),
        ArrayRef<float>(scatter))));
    Value all = counts.size() == 1 ? counts[0] : e.concat(counts, 1);
    y = e.matmul(all, matrix);
  }
  Value weight;
  if (!weights.empty() && mode != "TF") {
    SmallVector<float> w(weights.begin(), weights.begin() + width);
    weight = c.constant(cast<ElementsAttr>(DenseElementsAttr::get(
        RankedTensorType::get({width}, f32), ArrayRef<float>(w))));
  }
  if (mode == "IDF")
    y = e.select(e.greater(y, e.k(y, 0)), weight ? weight : e.k(y, 1),
                 e.k(y, 0));
  else if (mode == "TFIDF" && weight)
    y = e.mul(y, weight);
  if (xType.getRank() == 1)
    y = e.reshape(y, {width});
  return e.done({y});
}
} // namespace

void mlir::kiln::onnx_import::registerTfIdfHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["TfIdfVectorizer"] = importTfIdfVectorizer;
}
