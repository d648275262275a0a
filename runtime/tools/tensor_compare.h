// Compares an output with an expected tensor using the ONNX backend test
// rule: |actual - expected| <= atol + rtol * |expected| element-wise, NaNs in
// the same positions, and identical dtype and shape.
#ifndef KILN_TOOLS_TENSOR_COMPARE_H
#define KILN_TOOLS_TENSOR_COMPARE_H

#include "kiln/runtime.hpp"

#include <string>

namespace kiln::runner {

struct Comparison {
  bool pass = true;
  double maxAbsError = 0, maxRelError = 0;
  size_t mismatches = 0, nanMismatches = 0;
  size_t firstMismatch = 0; // element index, valid if mismatches > 0
  std::string problem;      // dtype or shape mismatch; values not compared
};

Comparison compareTensors(const Tensor &actual, const Tensor &expected,
                          double rtol, double atol);

// "PASS (max abs error 0, max rel error 0)" or "FAIL (...)".
std::string describe(const Comparison &comparison, const Tensor &actual,
                     const Tensor &expected);

} // namespace kiln::runner

#endif // KILN_TOOLS_TENSOR_COMPARE_H
