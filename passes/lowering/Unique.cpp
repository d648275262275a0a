//===- Unique.cpp - kiln.unique -> scf loops
//-------------------------------===//
//
// ONNX Unique over N keys (the elements, or the slices along `axis`, each K
// elements compared in row-major order). The input is viewed as
// [outer, N, inner] and three sequential passes build everything:
//
//   first[i] = the smallest j with key j == key i          (N^2 K / 2)
//   rank[i]  = i first: the number of first keys before it (sorted: the
//              first keys less than it), else rank[first[i]]
//   indices[rank[i]] = i for first keys, counts[rank[i]] += 1
//
// `rank` is inverse_indices; the distinct count U sizes indices, counts and
// the values, which are the slices at `indices`. O(N^2 K): meant for the
// index and vocabulary sizes Unique sees in models, not for sorting
// millions of elements.
//
//===----------------------------------------------------------------------===//
#include "passes/lowering/LoweringUtils.h"
#include "passes/lowering/Patterns.h"
#include "passes/lowering/ScalarOps.h"

#include "dialects/kiln/KilnOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::kiln;

namespace {

struct UniqueLowering : OpConversionPattern<kiln::UniqueOp> {
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(kiln::UniqueOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value input = adaptor.getInput();
    auto inType = cast<RankedTensorType>(input.getType());
    Type et = inType.getElementType();
    bool isUnsigned = cast<RankedTensorType>(op.getInput().getType())
                          .getElementType()
                          .isUnsignedInteger();
    ArrayRef<int64_t> shape = inType.getShape();
    std::optional<int64_t> axis = op.getAxis();
    int64_t n = axis ? shape[*axis] : inType.getNumElements(), outer = 1,
            inner = 1;
    for (int64_t d = 0; axis && d < inType.getRank(); ++d)
      (d < *axis ? outer : inner) *= d == *axis ? 1 : shape[d];
    // The loops are built outside the conversion driver, as the attention
    // lowering does: scf is not among its legal dialects.
    OpBuilder b(op);
    ScalarOps o{b, loc};
    Value keys = createReshape(b, loc, input, {outer, n, inner});
    Value c0 = o.idx(0), c1 = o.idx(1), cn = o.idx(n),
          ck = o.idx(outer * inner), cInner = o.idx(inner);
    Type i64 = b.getI64Type();

    // Whether key j equals key i, and whether it is less (lexicographic).
    auto compare = [&](OpBuilder &nb, Value j,
                       Value i) -> std::pair<Value, Value> {
      ScalarOps no{nb, loc};
      auto loop = scf::ForOp::create(
          nb, loc, c0, ck, c1, ValueRange{no.flag(false), no.flag(false)},
          [&](OpBuilder &kb, Location, Value k, ValueRange s) {
            ScalarOps ko{kb, loc};
            Value hi = arith::DivUIOp::create(kb, loc, k, cInner);
            Value lo = arith::RemUIOp::create(kb, loc, k, cInner);
            Value a = ko.at(keys, {hi, j, lo}), c = ko.at(keys, {hi, i, lo});
            Value differ, less;
            if (isa<FloatType>(et)) {
              differ = ko.cmpf(arith::CmpFPredicate::UNE, a, c);
              less = ko.cmpf(arith::CmpFPredicate::OLT, a, c);
            } else {
              differ = ko.cmpi(arith::CmpIPredicate::ne, a, c);
              less = ko.cmpi(isUnsigned ? arith::CmpIPredicate::ult
                                        : arith::CmpIPredicate::slt,
                             a, c);
            }
            Value decided = ko.ori(s[0], differ);
            Value isLess = ko.select(s[0], s[1], ko.andi(differ, less));
            scf::YieldOp::create(kb, loc, ValueRange{decided, isLess});
          });
      return {ScalarOps{nb, loc}.noti(loop.getResult(0)), loop.getResult(1)};
    };
    auto emptyI64 = [&](OpBuilder &nb, ValueRange sizes, int64_t size) {
      return tensor::EmptyOp::create(nb, loc, ArrayRef<int64_t>{size}, i64,
                                     sizes);
    };

    // first[i] and the distinct count.
    auto firstLoop = scf::ForOp::create(
        b, loc, c0, cn, c1, ValueRange{emptyI64(b, {}, n), c0},
        [&](OpBuilder &nb, Location, Value i, ValueRange s) {
          ScalarOps no{nb, loc};
          Value self = no.toI64(i);
          auto search = scf::ForOp::create(
              nb, loc, c0, i, c1, ValueRange{self},
              [&](OpBuilder &jb, Location, Value j, ValueRange f) {
                ScalarOps jo{jb, loc};
                Value equal = compare(jb, j, i).first;
                Value take = jo.andi(
                    jo.cmpi(arith::CmpIPredicate::eq, f[0], self), equal);
                scf::YieldOp::create(
                    jb, loc, ValueRange{jo.select(take, jo.toI64(j), f[0])});
              });
          Value first = search.getResult(0);
          Value isFirst = no.cmpi(arith::CmpIPredicate::eq, first, self);
          Value written =
              tensor::InsertOp::create(nb, loc, first, s[0], ValueRange{i});
          Value count = no.addi(s[1], no.select(isFirst, no.idx(1), no.idx(0)));
          scf::YieldOp::create(nb, loc, ValueRange{written, count});
        });
    Value first = firstLoop.getResult(0), distinct = firstLoop.getResult(1);
    auto isFirstAt = [&](ScalarOps &so, Value i) {
      return so.cmpi(arith::CmpIPredicate::eq, so.at(first, {i}), so.toI64(i));
    };

    // rank[i] (= inverse_indices).
    bool sorted = op.getSorted();
    auto rankLoop = scf::ForOp::create(
        b, loc, c0, cn, c1, ValueRange{emptyI64(b, {}, n)},
        [&](OpBuilder &nb, Location, Value i, ValueRange s) {
          ScalarOps no{nb, loc};
          auto branch = scf::IfOp::create(
              nb, loc, isFirstAt(no, i),
              [&](OpBuilder &tb, Location) {
                auto count = scf::ForOp::create(
                    tb, loc, c0, cn, c1, ValueRange{ScalarOps{tb, loc}.i64(0)},
                    [&](OpBuilder &jb, Location, Value j, ValueRange r) {
                      ScalarOps jo{jb, loc};
                      Value before =
                          sorted ? compare(jb, j, i).second
                                 : jo.cmpi(arith::CmpIPredicate::ult, j, i);
                      Value counted = jo.andi(isFirstAt(jo, j), before);
                      scf::YieldOp::create(
                          jb, loc,
                          ValueRange{jo.addi(
                              r[0], jo.select(counted, jo.i64(1), jo.i64(0)))});
                    });
                scf::YieldOp::create(tb, loc, count.getResults());
              },
              [&](OpBuilder &eb, Location) {
                ScalarOps eo{eb, loc};
                Value of = eo.toIndex(eo.at(first, {i}));
                scf::YieldOp::create(eb, loc, ValueRange{eo.at(s[0], {of})});
              });
          Value written = tensor::InsertOp::create(nb, loc, branch.getResult(0),
                                                   s[0], ValueRange{i});
          scf::YieldOp::create(nb, loc, ValueRange{written});
        });
    Value rank = rankLoop.getResult(0);

    // indices and counts.
    Value zeros = linalg::FillOp::create(
                      b, loc, ValueRange{o.i64(0)},
                      ValueRange{emptyI64(b, {distinct}, ShapedType::kDynamic)})
                      .getResult(0);
    auto fillLoop = scf::ForOp::create(
        b, loc, c0, cn, c1,
        ValueRange{emptyI64(b, {distinct}, ShapedType::kDynamic), zeros},
        [&](OpBuilder &nb, Location, Value i, ValueRange s) {
          ScalarOps no{nb, loc};
          Value r = no.toIndex(no.at(rank, {i}));
          Value counts = tensor::InsertOp::create(
              nb, loc, no.addi(no.at(s[1], {r}), no.i64(1)), s[1],
              ValueRange{r});
          auto indices = scf::IfOp::create(
              nb, loc, isFirstAt(no, i),
              [&](OpBuilder &tb, Location) {
                Value written = tensor::InsertOp::create(
                    tb, loc, ScalarOps{tb, loc}.toI64(i), s[0], ValueRange{r});
                scf::YieldOp::create(tb, loc, ValueRange{written});
              },
              [&](OpBuilder &eb, Location) {
                scf::YieldOp::create(eb, loc, ValueRange{s[0]});
              });
          scf::YieldOp::create(nb, loc,
                               ValueRange{indices.getResult(0), counts});
        });
    Value indices = fillLoop.getResult(0), counts = fillLoop.getResult(1);

    // The values: the keys at `indices`.
    auto valuesType = cast<RankedTensorType>(
        getTypeConverter()->convertType(op.getValues().getType()));
    Value values = createParallelGeneric(
        b, loc, valuesType, {}, ValueRange{distinct},
        [&](OpBuilder &gb, Location l, ValueRange) -> Value {
          ScalarOps go{gb, l};
          if (!axis) {
            Value r = linalg::IndexOp::create(gb, l, 0);
            Value at = go.toIndex(go.at(indices, {r}));
            return go.at(keys, {c0, at, c0});
          }
          SmallVector<Value> coords;
          for (int64_t d = 0; d < valuesType.getRank(); ++d)
            coords.push_back(linalg::IndexOp::create(gb, l, d));
          coords[*axis] = go.toIndex(go.at(indices, {coords[*axis]}));
          return go.at(input, coords);
        });
    rewriter.replaceOp(op, {values, indices, rank, counts});
    return success();
  }
};

} // namespace

void mlir::kiln::populateKilnUniqueToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter) {
  patterns.add<UniqueLowering>(typeConverter, patterns.getContext());
}
