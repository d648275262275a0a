//===- LoweringUtils.h - Shared pieces of the kiln -> linalg lowering -*- C++
//-*-===//
//
// Builders used by several pattern groups: the uiN -> iN type converter,
// broadcasting linalg.generic construction, reshapes between static shapes,
// scalar conversions that remember the kiln signedness, and the identity
// values of reductions.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_LOWERINGUTILS_H
#define KILN_PASSES_LOWERING_LOWERINGUTILS_H

#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kiln {

/// Maps `uiN` (ONNX unsigned) to signless `iN`, elementwise inside tensors;
/// every other type is kept. Patterns read the signedness from the kiln op's
/// own (unconverted) types.
class KilnTypeConverter : public TypeConverter {
public:
  KilnTypeConverter();
};

/// Unsigned ints and bools compare, divide and extend as unsigned values.
inline bool isUnsignedLike(Type elementType) {
  return elementType.isUnsignedInteger() || elementType.isInteger(1);
}

inline Type getElementType(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// f16/bf16 sums lose too much precision; they accumulate in f32.
Type getAccumulatorType(Type elementType);

SmallVector<utils::IteratorType> parallelIterators(unsigned count);

Value createEmptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                        Type elementType);

/// tensor.empty of `type`; `dynamicSizes` holds one extent per `?` dim.
Value createEmptyTensor(OpBuilder &b, Location loc, RankedTensorType type,
                        ValueRange dynamicSizes);

/// tensor.empty + linalg.fill with a scalar constant.
Value createFilledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         TypedAttr value);
/// The same with run-time extents (one per `?` in `shape`).
Value createFilledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                         ValueRange dynamicSizes, TypedAttr value);

/// `tensor.dim` of each run-time dim of `source` among `dims`, in order:
/// the dynamic sizes of a tensor shaped like those dims of `source`.
SmallVector<Value> runTimeDims(OpBuilder &b, Location loc, Value source,
                               ArrayRef<int64_t> dims);

/// 0..rank-1 without `dropped`.
SmallVector<int64_t> allDimsExcept(int64_t rank, ArrayRef<int64_t> dropped);

/// An operand prepared for a generic over `resultShape`: dims it broadcasts
/// (size 1 against a larger result dim) are collapsed away, so `map` is a
/// projected permutation that fusion and vectorization understand.
struct BroadcastOperand {
  Value value;
  AffineMap map;
};
BroadcastOperand alignForBroadcast(OpBuilder &b, Location loc, Value operand,
                                   ArrayRef<int64_t> resultShape);

/// The extents of `resultType`'s run-time dims, read (tensor.dim) from the
/// first input whose map indexes that dim without broadcasting it.
SmallVector<Value> dynamicSizesFromInputs(OpBuilder &b, Location loc,
                                          RankedTensorType resultType,
                                          ArrayRef<BroadcastOperand> inputs);

/// The inputs of an elementwise op over `resultType` with ONNX broadcasting
/// of run-time extents: an input whose extent along a dim is known only at
/// run time and may be 1 where the result's is larger is read through a
/// broadcast made when it is (an scf.if; RunTimeBroadcast.cpp), with a
/// check that each such extent is the result's or 1. `dynamicSizes` are the
/// result's run-time extents. With `trailing` > 0, the last `trailing` dims of
/// the result and of each input are left out (a matmul's matrix dims: its batch
/// dims broadcast) and have no sizes here. `known` gives the result's run-time
/// extents where the caller has them (one per dim, null where not; or
/// empty): the inputs then broadcast to those.
struct RunTimeBroadcast {
  SmallVector<Value> inputs;
  SmallVector<Value> dynamicSizes;
};
RunTimeBroadcast broadcastRunTimeExtents(OpBuilder &b, Location loc,
                                         RankedTensorType resultType,
                                         ValueRange inputs,
                                         int64_t trailing = 0,
                                         ValueRange known = {});

using ScalarBuilder =
    function_ref<Value(OpBuilder &, Location, ValueRange /*elements*/)>;

/// An all-parallel linalg.generic producing `resultType` from `inputs`,
/// broadcast numpy-style; `body` computes one result element.
Value createElementwiseGeneric(OpBuilder &b, Location loc,
                               RankedTensorType resultType, ValueRange inputs,
                               ScalarBuilder body);

/// The same with operands whose maps the caller chose.
Value createParallelGeneric(OpBuilder &b, Location loc,
                            RankedTensorType resultType,
                            ArrayRef<BroadcastOperand> inputs,
                            ScalarBuilder body);
/// ... and the result's run-time extents (one per `?`) given.
Value createParallelGeneric(OpBuilder &b, Location loc,
                            RankedTensorType resultType,
                            ArrayRef<BroadcastOperand> inputs,
                            ValueRange dynamicSizes, ScalarBuilder body);

/// A linalg.generic over the loops of the inputs' maps, reducing `reducedDims`
/// into `init` (shaped like the loops without them). `body` receives the
/// input elements followed by the accumulator.
Value createReductionGeneric(OpBuilder &b, Location loc,
                             ArrayRef<BroadcastOperand> inputs, Value init,
                             ArrayRef<int64_t> reducedDims, ScalarBuilder body);

/// `shape` without the dims listed in `dims` (sorted).
SmallVector<int64_t> dropDims(ArrayRef<int64_t> shape, ArrayRef<int64_t> dims);

/// Map from `numDims` loops to all loops except the listed ones.
AffineMap dropDimsMap(MLIRContext *ctx, unsigned numDims,
                      ArrayRef<int64_t> dims);

/// A reshape that only drops and inserts unit dims, for shapes with run-time
/// extents: a collapse of the input's 1s, then an expand to `dstType`.
Value createUnitDimReshape(OpBuilder &b, Location loc, Value input,
                           RankedTensorType dstType);

/// Reshape between static shapes of equal element count: a collapse, an
/// expand, or a collapse to the coarsest common grouping then an expand.
/// With run-time extents, only unit dims may be dropped or inserted.
Value createReshape(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> shape);

/// Converts a scalar between kiln element types (signedness taken from the
/// kiln types, values already signless): ints extend per their sign, float to
/// int truncates toward zero, anything to i1 is `x != 0`, i1 is 0/1.
Value convertScalar(OpBuilder &b, Location loc, Value value, Type fromType,
                    Type toType);

/// Elementwise convertScalar over a tensor; `input` itself if the types agree.
Value convertTensor(OpBuilder &b, Location loc, Value input, Type fromType,
                    Type toType);

/// tensor.pad with a constant; `input` itself when nothing is padded.
Value createPad(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                ArrayRef<int64_t> high, TypedAttr padValue);

/// Constant scalar of a signless/float type.
Value createScalarConstant(OpBuilder &b, Location loc, Type type, double value);

/// The number of elements along dims `dims` of `source` as a scalar of
/// `type` (float or signless integer): a constant when those extents are
/// static, else their product computed at run time.
Value createElementCount(OpBuilder &b, Location loc, Value source,
                         ArrayRef<int64_t> dims, Type type);

/// The smallest / largest value of a (kiln) element type: -inf/+inf for
/// floats, the integer limits otherwise; as a signless attribute.
TypedAttr getLowestValue(Type kilnElementType);
TypedAttr getHighestValue(Type kilnElementType);

/// Scalar max/min honoring signedness; floats propagate NaN.
Value createMax(OpBuilder &b, Location loc, Value lhs, Value rhs,
                Type kilnElementType);
Value createMin(OpBuilder &b, Location loc, Value lhs, Value rhs,
                Type kilnElementType);

/// Affine map (d0..dn-1) -> (the listed dims).
AffineMap mapOfDims(MLIRContext *ctx, unsigned numDims, ArrayRef<int64_t> dims);

/// A 2-D f32 NCHW convolution (one group) of the padded `input` with the
/// constant filter `weight` [F, C, KH, KW] as an im2col copy and a matmul
/// with the filter transposed at compile time (ConvIm2col.cpp), `bias` [F]
/// (or null) added; `resultSizes` are the run-time extents of
/// `resultType` [N, F, OH, OW], in order. Failure when the filter's bytes
/// cannot be read.
FailureOr<Value> createIm2colConv(OpBuilder &b, Location loc, Value input,
                                  ElementsAttr weight, Value bias,
                                  RankedTensorType resultType,
                                  ValueRange resultSizes,
                                  ArrayRef<int64_t> strides,
                                  ArrayRef<int64_t> dilations);

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_LOWERINGUTILS_H
