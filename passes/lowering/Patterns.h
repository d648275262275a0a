//===- Patterns.h - kiln -> linalg conversion pattern groups ----*- C++ -*-===//
//
// One populate function per group of kiln ops. Each adds OpConversionPatterns
// that read operands through the adaptor (already uiN -> iN converted) and the
// kiln op's own types for signedness. `kiln-lower-to-linalg` uses them all;
// other pipelines may pick groups.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_PASSES_LOWERING_PATTERNS_H
#define KILN_PASSES_LOWERING_PATTERNS_H

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::kiln {

void populateKilnConstantToLinalgPatterns(RewritePatternSet &patterns,
                                          TypeConverter &typeConverter);
void populateKilnElementwiseToLinalgPatterns(RewritePatternSet &patterns,
                                             TypeConverter &typeConverter);
void populateKilnContractionToLinalgPatterns(RewritePatternSet &patterns,
                                             TypeConverter &typeConverter);
void populateKilnPoolingToLinalgPatterns(RewritePatternSet &patterns,
                                         TypeConverter &typeConverter);
void populateKilnNormalizationToLinalgPatterns(RewritePatternSet &patterns,
                                               TypeConverter &typeConverter);
void populateKilnReductionToLinalgPatterns(RewritePatternSet &patterns,
                                           TypeConverter &typeConverter);
void populateKilnDataMovementToLinalgPatterns(RewritePatternSet &patterns,
                                              TypeConverter &typeConverter);

void populateKilnIndexingToLinalgPatterns(RewritePatternSet &patterns,
                                          TypeConverter &typeConverter);
/// Ops whose result shape is computed at run time (DynamicShape.cpp).
void populateKilnDynamicShapeToLinalgPatterns(RewritePatternSet &patterns,
                                              TypeConverter &typeConverter);
/// Unique: scf loops (Unique.cpp).
void populateKilnUniqueToLinalgPatterns(RewritePatternSet &patterns,
                                        TypeConverter &typeConverter);
/// NonMaxSuppression: scf loops (NonMaxSuppression.cpp).
void populateKilnNonMaxSuppressionToLinalgPatterns(
    RewritePatternSet &patterns, TypeConverter &typeConverter);
void populateKilnQuantizedMatMulToLinalgPatterns(RewritePatternSet &patterns,
                                                 TypeConverter &typeConverter);
void populateKilnQuantizedConvToLinalgPatterns(RewritePatternSet &patterns,
                                               TypeConverter &typeConverter);
void populateKilnAttentionToLinalgPatterns(RewritePatternSet &patterns,
                                           TypeConverter &typeConverter);
/// String ops: calls of the runtime's string kernels (Strings.cpp).
void populateKilnStringToLinalgPatterns(RewritePatternSet &patterns,
                                        TypeConverter &typeConverter);

/// All of the above.
void populateKilnToLinalgPatterns(RewritePatternSet &patterns,
                                  TypeConverter &typeConverter);

} // namespace mlir::kiln

#endif // KILN_PASSES_LOWERING_PATTERNS_H
