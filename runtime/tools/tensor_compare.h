// Compares an output with an expected tensor using the ONNX backend test
// rule: |actual - expected| <= atol + rtol * |expected| element-wise, NaNs in
// the same positions, and identical dtype and shape. With a relative L2
// tolerance (>= 0) the values pass instead when ||actual - expected||_2 <=
// relL2 * ||expected||_2, the measure for reduced-precision arithmetic
// (tensor-core tf32/bf16/fp16), where elements near 0 have large relative
// errors.
#ifndef KILN_TOOLS_TENSOR_COMPARE_H
#define KILN_TOOLS_TENSOR_COMPARE_H

#include "kiln/runtime.hpp"

#include <string>

namespace kiln::runner {

struct Comparison {
  bool pass = true;
  double maxAbsError = 0, maxRelError = 0, relL2Error = 0;
  size_t mismatches = 0, nanMismatches = 0;
  size_t firstMismatch = 0; // element index, valid if mismatches > 0
  std::string problem;      // dtype or shape mismatch; values not compared
};

Comparison compareTensors(const Tensor &actual, const Tensor &expected,
                          double rtol, double atol, double relL2 = -1);

// "PASS (max abs error 0, max rel error 0)" or "FAIL (...)".
std::string describe(const Comparison &comparison, const Tensor &actual,
                     const Tensor &expected);

} // namespace kiln::runner

#endif // KILN_TOOLS_TENSOR_COMPARE_H
