// Conversions between float and the 16-bit float formats (IEEE binary16 and
// bfloat16), for statistics, comparisons and random inputs in the tools.
#ifndef KILN_TOOLS_FLOAT16_H
#define KILN_TOOLS_FLOAT16_H

#include <cstdint>
#include <cstring>

namespace kiln::io {

inline float bitsToFloat(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

inline uint32_t floatToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float halfToFloat(uint16_t half) {
  uint32_t sign = static_cast<uint32_t>(half & 0x8000) << 16;
  uint32_t exponent = (half >> 10) & 0x1f, mantissa = half & 0x3ff;
  if (exponent == 0x1f) // infinity or NaN
    return bitsToFloat(sign | 0x7f800000 | mantissa << 13);
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = static_cast<float>(mantissa) * (1.0f / 16777216.0f);
    return sign ? -magnitude : magnitude;
  }
  return bitsToFloat(sign | (exponent + 112) << 23 | mantissa << 13);
}

// Round to nearest, ties to even; overflow goes to infinity.
inline uint16_t floatToHalf(float value) {
  uint32_t bits = floatToBits(value);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude >= 0x7f800000) // infinity or NaN (kept quiet)
    return sign | 0x7c00 | (magnitude > 0x7f800000 ? 0x200 : 0);
  if (magnitude >= 0x477ff000) // rounds past 65504
    return sign | 0x7c00;
  if (magnitude < 0x38800000) { // below the smallest normal half
    // Scale to units of 2^-24 and let the FPU round to nearest even.
    float scaled = bitsToFloat(magnitude) * 16777216.0f;
    float rounded = scaled + 8388608.0f - 8388608.0f; // rint without libm
    return sign | static_cast<uint16_t>(rounded);
  }
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t roundBit = 1u << 12, halfway = roundBit - 1;
  rebased += halfway + ((rebased >> 13) & 1);
  return sign | static_cast<uint16_t>(rebased >> 13);
}

inline float bfloat16ToFloat(uint16_t value) {
  return bitsToFloat(static_cast<uint32_t>(value) << 16);
}

inline uint16_t floatToBfloat16(float value) {
  uint32_t bits = floatToBits(value);
  if ((bits & 0x7fffffff) > 0x7f800000) // NaN: keep it a (quiet) NaN
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

} // namespace kiln::io

#endif // KILN_TOOLS_FLOAT16_H
