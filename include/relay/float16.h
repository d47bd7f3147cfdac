// IEEE 754 binary16 storage type. Arithmetic happens in float32; this type
// only stores and converts (round to nearest, ties to even).
#pragma once

#include <cstdint>
#include <cstring>

namespace relay {

struct Float16 {
  uint16_t bits = 0;

  Float16() = default;
  static Float16 FromBits(uint16_t bits) {
    Float16 value;
    value.bits = bits;
    return value;
  }
  explicit Float16(float value) : bits(FloatToHalfBits(value)) {}
  explicit operator float() const { return HalfBitsToFloat(bits); }

  static uint16_t FloatToHalfBits(float value) {
    uint32_t f;
    std::memcpy(&f, &value, sizeof f);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t magnitude = f & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) {  // inf or nan; keep nan quiet and non-zero
      return static_cast<uint16_t>(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
    }
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow
    if (magnitude < 0x38800000u) {
      // Result is subnormal or zero: shift the implicit-one mantissa into place.
      if (magnitude < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the min
      const uint32_t exponent = magnitude >> 23;
      const uint32_t mantissa = (magnitude & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126 - exponent;  // 14..24
      uint32_t half = mantissa >> shift;
      const uint32_t remainder = mantissa & ((1u << shift) - 1);
      const uint32_t halfway = 1u << (shift - 1);
      if (remainder > halfway || (remainder == halfway && (half & 1u))) ++half;
      return static_cast<uint16_t>(sign | half);
    }
    // Normal: rebias the exponent and round the 13 dropped mantissa bits.
    uint32_t half = ((magnitude >> 13) - (112u << 10));
    const uint32_t remainder = magnitude & 0x1fffu;
    if (remainder > 0x1000u || (remainder == 0x1000u && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }

  static float HalfBitsToFloat(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu;
    uint32_t mantissa = half & 0x3ffu;
    uint32_t f;
    if (exponent == 0x1f) {
      f = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
      f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      f = sign;
    } else {  // subnormal: normalise
      uint32_t normalized_exponent = 113;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --normalized_exponent;
      }
      f = sign | (normalized_exponent << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float value;
    std::memcpy(&value, &f, sizeof value);
    return value;
  }
};

}  // namespace relay
