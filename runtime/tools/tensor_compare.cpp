#include "tensor_compare.h"

#include "tensor_values.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace kiln::runner {

Comparison compareTensors(const Tensor &actual, const Tensor &expected,
                          double rtol, double atol, double relL2) {
  Comparison result;
  if (actual.dtype() != expected.dtype()) {
    result.pass = false;
    result.problem = std::string("dtype ") + kiln_dtype_name(actual.dtype()) +
                     ", expected " + kiln_dtype_name(expected.dtype());
    return result;
  }
  if (actual.shape() != expected.shape()) {
    result.pass = false;
    result.problem =
        "shape " + shapeText(actual) + ", expected " + shapeText(expected);
    return result;
  }
  size_t count = actual.numElements();
  if (actual.dtype() == KILN_DTYPE_STRING) {
    // Strings compare exactly.
    for (size_t i = 0; i < count; ++i)
      if (actual.string(i) != expected.string(i) && result.mismatches++ == 0)
        result.firstMismatch = i;
    result.pass = result.mismatches == 0;
    return result;
  }
  const double infinity = std::numeric_limits<double>::infinity();
  double errorSquares = 0, expectedSquares = 0;
  for (size_t i = 0; i < count; ++i) {
    double a = elementAt(actual, i), e = elementAt(expected, i);
    bool mismatch;
    if (std::isnan(a) || std::isnan(e)) {
      mismatch = std::isnan(a) != std::isnan(e);
      result.nanMismatches += mismatch;
    } else {
      // a == e first, so equal infinities compare as no error.
      double diff = a == e ? 0 : std::fabs(a - e);
      double rel = diff == 0 ? 0 : e == 0 ? infinity : diff / std::fabs(e);
      result.maxAbsError = std::max(result.maxAbsError, diff);
      result.maxRelError = std::max(result.maxRelError, rel);
      errorSquares += diff * diff;
      expectedSquares += e * e;
      mismatch = relL2 < 0 && diff > atol + rtol * std::fabs(e);
    }
    if (mismatch && result.mismatches++ == 0)
      result.firstMismatch = i;
  }
  result.relL2Error = errorSquares == 0 ? 0
                      : expectedSquares == 0
                          ? infinity
                          : std::sqrt(errorSquares / expectedSquares);
  result.pass =
      result.mismatches == 0 && (relL2 < 0 || result.relL2Error <= relL2);
  return result;
}

std::string describe(const Comparison &comparison, const Tensor &actual,
                     const Tensor &expected) {
  std::string verdict = comparison.pass ? "PASS" : "FAIL";
  if (!comparison.problem.empty())
    return verdict + " (" + comparison.problem + ")";
  if (actual.dtype() == KILN_DTYPE_STRING) {
    if (!comparison.mismatches)
      return verdict + " (strings equal)";
    size_t i = comparison.firstMismatch;
    return verdict + " (" + std::to_string(comparison.mismatches) + " of " +
           std::to_string(actual.numElements()) +
           " strings differ, first at index " + std::to_string(i) + ": \"" +
           actual.string(i) + "\", expected \"" + expected.string(i) + "\")";
  }
  char buffer[256];
  std::snprintf(buffer, sizeof buffer,
                " (max abs error %.6g, max rel error %.6g, rel L2 error %.3g",
                comparison.maxAbsError, comparison.maxRelError,
                comparison.relL2Error);
  std::string text = verdict + buffer;
  if (comparison.mismatches) {
    size_t i = comparison.firstMismatch;
    std::snprintf(buffer, sizeof buffer,
                  "; %zu of %zu elements outside tolerance, first at index "
                  "%zu: %.9g, expected %.9g",
                  comparison.mismatches, actual.numElements(), i,
                  elementAt(actual, i), elementAt(expected, i));
    text += buffer;
    if (comparison.nanMismatches)
      text += "; NaN in different positions (" +
              std::to_string(comparison.nanMismatches) + " elements)";
  }
  return text + ")";
}

} // namespace kiln::runner
