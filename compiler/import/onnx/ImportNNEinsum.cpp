//===- ImportNNEinsum.cpp - Einsum as broadcast products and a sum --------===//
//
// Every operand is transposed into one common label order (output labels
// first, then the summed ones) with size-1 dims for labels it lacks; the
// product of all operands then broadcasts to every label and one reduce_sum
// removes the summed labels. A label repeated within one operand (a
// diagonal) is renamed and tied to the original by an identity matrix
// operand. This materializes the full product, which is fine for the small
// equations ONNX models use Einsum for; large contractions belong to MatMul.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/ImportNNBuilder.h"

#include "onnx/onnx.pb.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

using namespace mlir;
using namespace mlir::kiln;
using namespace mlir::kiln::onnx_import;

namespace {
using Results = FailureOr<SmallVector<Value>>;

/// Labels are letters; ellipsis dims get labels from kEllipsis on, aligned
/// from the right as numpy broadcasting aligns them.
constexpr int kEllipsis = 1000;
constexpr int kRenamed = 2000;

struct Term {
  SmallVector<int> labels;
};

/// Parses one term ("ab...c") for an operand of `rank` (-1 for the output,
/// whose ellipsis has `ellipsisRank` dims). Empty string on success.
std::string parseTerm(StringRef text, int64_t rank, int64_t &ellipsisRank,
                      Term &term) {
  size_t dots = text.find("...");
  int64_t letters = text.size() - (dots == StringRef::npos ? 0 : 3);
  int64_t ownEllipsis = 0;
  if (dots != StringRef::npos)
    ownEllipsis = rank < 0 ? ellipsisRank : rank - letters;
  else if (rank >= 0 && rank != letters)
    return fmt::format("term '{}' does not match an operand of rank {}",
                       text.str(), rank);
  if (ownEllipsis < 0)
    return "term '" + text.str() + "' has more labels than its operand dims";
  if (rank >= 0)
    ellipsisRank = std::max(ellipsisRank, ownEllipsis);
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == dots) {
      for (int64_t d = 0; d < ownEllipsis; ++d)
        term.labels.push_back(kEllipsis - ownEllipsis + d);
      i += 2;
    } else if (std::isalpha((unsigned char)text[i])) {
      term.labels.push_back(text[i]);
    } else {
      return "unexpected character in term '" + text.str() + "'";
    }
  }
  return "";
}

/// An n x n identity in `type`, for tying a repeated label to its copy.
Value identity(NodeContext &c, int64_t n, Type type) {
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < n * n; ++i) {
    double v = i / n == i % n ? 1 : 0;
    values.push_back(isa<FloatType>(type)
                         ? Attribute(FloatAttr::get(type, v))
                         : Attribute(IntegerAttr::get(type, (int64_t)v)));
  }
  return c.constant(cast<ElementsAttr>(
      DenseElementsAttr::get(RankedTensorType::get({n, n}, type), values)));
}

Results importEinsum(NodeContext &c) {
  std::string equation;
  for (char ch : c.attrString("equation", ""))
    if (ch != ' ')
      equation.push_back(ch);
  StringRef eq(equation);
  auto [lhs, rhs] = eq.split("->");
  bool explicitOutput = eq.contains("->");
  SmallVector<StringRef> inputs;
  lhs.split(inputs, ',');
  if (inputs.size() != c.numInputs())
    return c.fail("equation has a different number of operands");

  NNBuilder e(c);
  int64_t ellipsisRank = 0;
  SmallVector<Term> terms(inputs.size());
  SmallVector<Value> operands;
  llvm::DenseMap<int, int64_t> sizes;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!c.hasInput(i))
      return c.fail("missing operand");
    std::string problem =
        parseTerm(inputs[i], e.rank(c.input(i)), ellipsisRank, terms[i]);
    if (!problem.empty())
      return c.fail(problem);
    operands.push_back(c.input(i));
    for (auto [label, size] : llvm::zip(terms[i].labels, e.shape(c.input(i))))
      if (size != 1 || !sizes.count(label))
        sizes[label] = size;
  }

  Term out;
  if (explicitOutput) {
    std::string problem = parseTerm(rhs, -1, ellipsisRank, out);
    if (!problem.empty())
      return c.fail(problem);
  } else {
    // Implicit output: the ellipsis, then labels used once, alphabetically.
    for (int64_t d = 0; d < ellipsisRank; ++d)
      out.labels.push_back(kEllipsis - ellipsisRank + d);
    std::map<int, int> uses;
    for (const Term &t : terms)
      for (int label : t.labels)
        if (label < kEllipsis)
          ++uses[label];
    for (auto [label, count] : uses)
      if (count == 1)
        out.labels.push_back(label);
  }

  // Diagonals: the second occurrence of a label becomes a fresh label
  // joined to the first by an identity operand.
  int fresh = kRenamed;
  size_t original = terms.size();
  for (size_t i = 0; i < original; ++i) {
    for (size_t a = 0; a < terms[i].labels.size(); ++a)
      for (size_t b = a + 1; b < terms[i].labels.size(); ++b)
        if (terms[i].labels[b] == terms[i].labels[a]) {
          int label = terms[i].labels[a];
          terms[i].labels[b] = fresh;
          sizes[fresh] = sizes[label];
          terms.push_back(Term{{label, fresh++}});
          operands.push_back(
              identity(c, sizes[label], e.elementType(operands[i])));
        }
  }

  SmallVector<int> order(out.labels);
  for (const Term &t : terms)
    for (int label : t.labels)
      if (!llvm::is_contained(order, label))
        order.push_back(label);
  for (int label : out.labels)
    if (!sizes.count(label))
      return c.fail("output label not used by any operand");

  Value product;
  for (auto [term, operand] : llvm::zip(terms, operands)) {
    // Own labels in common order, then a reshape adds the missing ones.
    SmallVector<int64_t> perm, shape;
    for (int label : order) {
      auto *it = llvm::find(term.labels, label);
      if (it != term.labels.end()) {
        int64_t dim = it - term.labels.begin();
        perm.push_back(dim);
        shape.push_back(e.shape(operand)[dim]);
      } else {
        shape.push_back(1);
      }
    }
    Value aligned = e.reshape(e.transpose(operand, perm), shape);
    product = product ? e.mul(product, aligned) : aligned;
  }
  int64_t kept = out.labels.size();
  if ((int64_t)order.size() > kept)
    product = e.reduceSum(product, dimRange(kept, order.size()), false);
  // Output dims of size 1 that only broadcast: expand to the label size.
  SmallVector<int64_t> outShape;
  for (int label : out.labels)
    outShape.push_back(sizes[label]);
  if (!e.failed && e.shape(product) != ArrayRef<int64_t>(outShape))
    product = e.op<ExpandOp>({product}, {c.named("shape", c.i64s(outShape))});
  return e.done({product});
}
} // namespace

void mlir::kiln::onnx_import::registerEinsumHandlers(
    llvm::StringMap<OpHandler> &t) {
  t["Einsum"] = importEinsum;
}
