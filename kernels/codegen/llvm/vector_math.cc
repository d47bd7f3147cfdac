// How each function is computed, and why, is in vector_math.h. The
// polynomial coefficients were fitted by us with mpmath 1.3 (60 digits):
// mpmath.chebyfit of the function below on the interval named, which is
// within a small factor of the minimax polynomial, then rounded to the type
// (float tables hold values exactly representable as float).
#include "kernels/codegen/llvm/vector_math.h"

#include <llvm/IR/Constants.h>
#include <llvm/IR/DerivedTypes.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "relay/error.h"

namespace relay::kernels::llvm_backend {
namespace {

// ---- coefficients, lowest degree first ------------------------------------------

// (exp(r) - 1 - r) / r^2 on [-0.35, 0.35]; degree 5 (float) / 10 (double).
// log: (2 atanh(s) - 2 s) / s^3 as a polynomial in z = s^2 on
// [0, (3 - 2 sqrt 2)^2]; degree 3 / 6.
// tanh: (tanh(x) - x) / x^3 in z = x^2 on [0, 0.625^2]; degree 5 / 12.
// erf, small: erf(x) / x - 1 in z = x^2 on [0, 0.25]; degree 5 / 9.
// erf, tail: erf(centre + t) on t in [-w/2, w/2] for four intervals of width
// w covering [0.5, 4) (float, w = 0.875, degree 9) / [0.5, 6) (double,
// w = 1.375, degree 20); each row's absolute error is below 2^-30 / 2^-59.
constexpr double kExpPolyFloat[] = {0x1.0000000000000p-1,  0x1.5555560000000p-3,
                                    0x1.5554e40000000p-5,  0x1.1110e00000000p-7,
                                    0x1.6d49100000000p-10, 0x1.a12a340000000p-13};
constexpr double kLogPolyFloat[] = {0x1.5555560000000p-1, 0x1.9999ec0000000p-2,
                                    0x1.245c400000000p-2, 0x1.ddcf720000000p-3};
constexpr double kTanhPolyFloat[] = {-0x1.5555560000000p-2, 0x1.1110ea0000000p-3,
                                     -0x1.ba08c40000000p-5, 0x1.64a9760000000p-6,
                                     -0x1.116a160000000p-7, 0x1.2c83c00000000p-9};
constexpr double kErfSmallPolyFloat[] = {0x1.06eba80000000p-3, -0x1.8127460000000p-2,
                                         0x1.ce2ef20000000p-4, -0x1.b820300000000p-6,
                                         0x1.54d0760000000p-8, -0x1.936a4a0000000p-11};

constexpr double kExpPolyDouble[] = {
    0x1.0000000000000p-1,  0x1.5555555555557p-3,  0x1.5555555555556p-5,  0x1.111111110ff8bp-7,
    0x1.6c16c16c16214p-10, 0x1.a01a01ac9de9ep-13, 0x1.a01a01a74077ap-16, 0x1.71ddfff6573d6p-19,
    0x1.27e4da1e12fb1p-22, 0x1.af5282aacdb2ep-26, 0x1.1f75a3caadff5p-29};
constexpr double kLogPolyDouble[] = {
    0x1.5555555555558p-1, 0x1.99999999952d7p-2, 0x1.2492492df281ap-2, 0x1.c71c62e3f11e6p-3,
    0x1.7462b51cb66b1p-3, 0x1.39fe51a7c18f9p-3, 0x1.2b5900de53b32p-3};
constexpr double kTanhPolyDouble[] = {
    -0x1.5555555555555p-2,  0x1.111111111110dp-3,  -0x1.ba1ba1ba1aff0p-5,  0x1.664f488279254p-6,
    -0x1.226e354ddfe9ap-7,  0x1.d6d3cc561e69ap-9,  -0x1.7da2fd76a3cf1p-10, 0x1.355204d5878bep-11,
    -0x1.f4fccb8116f0ap-13, 0x1.92d3563b405ccp-14, -0x1.370efd62e9535p-15, 0x1.99b26df70cccdp-17,
    -0x1.47559de55bc91p-19};
constexpr double kErfSmallPolyDouble[] = {
    0x1.06eba8214db69p-3,  -0x1.812746b0379e6p-2,  0x1.ce2f21a042b29p-4,  -0x1.b82ce3127f739p-6,
    0x1.565bcd0aa6349p-8,  -0x1.c02db23d41138p-11, 0x1.f9a2a6635fe79p-14, -0x1.f4bb9f7301dedp-17,
    0x1.b776442df3041p-20, -0x1.39fb524e9c1f7p-23};

constexpr double kErfTailCentersFloat[] = {0x1.e000000000000p-1, 0x1.d000000000000p+0,
                                           0x1.5800000000000p+1, 0x1.c800000000000p+1};
constexpr double kErfTailPolyFloat[][10] = {
    {0x1.a1551a0000000p-1, 0x1.dfca260000000p-2, -0x1.c1cd8e0000000p-2, 0x1.e4c9900000000p-4,
     0x1.7484160000000p-4, -0x1.1d1da40000000p-4, -0x1.52409c0000000p-9, 0x1.1a31ca0000000p-6,
     -0x1.897faa0000000p-9, -0x1.48d0380000000p-9},  // fit error 5.46e-10
    {0x1.fab0de0000000p-1, 0x1.5a08e80000000p-5, -0x1.3998040000000p-4, 0x1.4140ee0000000p-4,
     -0x1.753a500000000p-5, 0x1.374dfa0000000p-7, 0x1.a62c620000000p-8, -0x1.6debda0000000p-8,
     0x1.f600520000000p-11, 0x1.4d84dc0000000p-11},  // fit error 2.05e-10
    {0x1.ffed160000000p-1, 0x1.afc85e0000000p-11, -0x1.221ae60000000p-9, 0x1.e3c9b80000000p-9,
     -0x1.14abe00000000p-8, 0x1.c1bf4c0000000p-9, -0x1.0001d00000000p-9, 0x1.6471740000000p-11,
     -0x1.09af4e0000000p-17, -0x1.e30ab00000000p-14},  // fit error 3.4e-11
    {0x1.fffff00000000p-1, 0x1.d2139a0000000p-19, -0x1.9f14d00000000p-17, 0x1.d982680000000p-16,
     -0x1.8351820000000p-15, 0x1.e0a8bc0000000p-15, -0x1.d0bc460000000p-15, 0x1.69065c0000000p-15,
     -0x1.dcd8580000000p-16, 0x1.aefd960000000p-17},  // fit error 2.16e-12
};

constexpr double kErfTailCentersDouble[] = {0x1.3000000000000p+0, 0x1.4800000000000p+1,
                                            0x1.f800000000000p+1, 0x1.5400000000000p+2};
constexpr double kErfTailPolyDouble[][21] = {
    {0x1.d0580b2cfd249p-1,   0x1.1a0dc51a9934cp-2,  -0x1.4ef05a0f95eebp-2,  0x1.5648b5dc4749ep-3,
     0x1.40fbaba444973p-7,   -0x1.c0db89d0aa29ap-5, 0x1.388c3ec0605f6p-6,   0x1.aecb7467c7239p-8,
     -0x1.8bca5335b4ad3p-8,  0x1.4add47a6ef2cfp-12, 0x1.05ce4b5197321p-10,  -0x1.183f05c33de2cp-12,
     -0x1.9cd1ea44c4ed9p-14, 0x1.d300b49556979p-15, 0x1.da892fe8bf29ep-19,  -0x1.f3e47b29b5cd3p-18,
     0x1.72fb74199227bp-21,  0x1.8229630ca38ecp-21, -0x1.5ecd1e891c2e6p-23, -0x1.88560bfb8520fp-25,
     0x1.285053bed4bc3p-26},  // fit error 1.22e-18
    {0x1.ffd9f78c7524ap-1,   0x1.a024365f771d7p-10,  -0x1.0a9732d5284dep-8,  0x1.a4bf47a430044p-8,
     -0x1.c23802d8a5b25p-8,  0x1.4f4007067357cp-8,   -0x1.4c9a2c9dd0143p-9,  0x1.4f7a50ae6d249p-11,
     0x1.18b04ebd57b9dp-13,  -0x1.a4c386baad6c5p-13, 0x1.4b7b8244e8374p-14,  -0x1.0bc8878a69b7ap-18,
     -0x1.589d59c0d9f50p-17, 0x1.357fb293fb041p-18,  -0x1.66830b1dbf827p-22, -0x1.eb72a2d7ead63p-22,
     0x1.8e2f988533ed8p-23,  -0x1.1a5cfc33e1f3bp-28, -0x1.35c886d82c95dp-26, 0x1.15d395d83e2f1p-28,
     0x1.234bb7d87da67p-31},  // fit error 1.95e-19
    {0x1.ffffff233ee1dp-1,   0x1.bfd7555a3bff2p-23,  -0x1.b8d7f804d2f2dp-21, 0x1.17f93e51479f8p-19,
     -0x1.013b0457cfaddp-18, 0x1.6b245d7e406cap-18,  -0x1.98077548eee32p-18, 0x1.74920487de24cp-18,
     -0x1.17506c77ed823p-18, 0x1.57e94a8cdbc06p-19,  -0x1.570971b723185p-20, 0x1.0a0f8e90bd119p-21,
     -0x1.1a9b6507ad315p-23, 0x1.51c6f6cca0f93p-27,  0x1.964090994258cp-27,  -0x1.fe61b4d4b43dep-28,
     0x1.390ab04c9987fp-29,  -0x1.fd4c844fcabe9p-33, -0x1.3358ac302657ap-33, 0x1.52041c89c13fbp-34,
     -0x1.f0f27104da096p-37},  // fit error 1.08e-21
    {0x1.ffffffffffdf8p-1,   0x1.5f8b87a3d357cp-41, -0x1.d2e55024bab99p-39, 0x1.9612cc1b6c9a0p-37,
     -0x1.03ee5f37c02bep-35, 0x1.04f2f745bbef1p-34, -0x1.ab709a0fde7bep-34, 0x1.2554b75983131p-33,
     -0x1.57c8743eaa950p-33, 0x1.5cd1953848497p-33, -0x1.3580b2b76f783p-33, 0x1.e3bd760db45afp-34,
     -0x1.4e862a99c5d82p-34, 0x1.9a6a067219419p-35, -0x1.be7c110249c86p-36, 0x1.ace0a0d97d82ep-37,
     -0x1.6950dbf7848c3p-38, 0x1.090f5a0ce4d80p-39, -0x1.4355fff6c25cfp-41, 0x1.060a526bf5310p-43,
     -0x1.e8366af6fd424p-48},  // fit error 3.66e-24
};

// The constants of one precision.
struct Precision {
  int bits;           // of the IEEE format, and of the integer type used on its bits
  int mantissa_bits;  // stored fraction bits
  int exponent_bias;
  double minimum_normal;
  double log2_e;
  double ln2_high;              // ln 2 rounded to the type
  double ln2_low;               // ln 2 - ln2_high, rounded to the type
  int64_t sqrt_half_bits;       // the bit pattern of sqrt(1/2) rounded to the type
  int denormal_scale_exponent;  // log scales denormals by 2^this
  double exp_lower;             // exp clamps its argument to [exp_lower, exp_upper]: past
  double exp_upper;             // them it is 0 / +inf, and inside, 2^k stays representable
  double tanh_saturation;       // tanh rounds to 1 at and above this
  double erf_tail_end;          // erf rounds to 1 at and above this
  std::span<const double> exp_poly;
  std::span<const double> log_poly;
  std::span<const double> tanh_poly;
  std::span<const double> erf_small_poly;
  std::span<const double> erf_tail_centers;
  std::span<const double> erf_tail_poly;  // rows of erf_tail_degree + 1
  size_t erf_tail_degree;
};

constexpr double kErfSmallEnd = 0.5;
constexpr double kTanhSmallEnd = 0.625;

const Precision kFloatPrecision = {
    .bits = 32,
    .mantissa_bits = 23,
    .exponent_bias = 127,
    .minimum_normal = 0x1p-126,
    .log2_e = 0x1.715476p+0,
    .ln2_high = 0x1.62e430p-1,
    .ln2_low = -0x1.05c610p-29,
    .sqrt_half_bits = 0x3f3504f3,
    .denormal_scale_exponent = 25,
    .exp_lower = -104.0,
    .exp_upper = 89.0,
    .tanh_saturation = 10.0,
    .erf_tail_end = 4.0,
    .exp_poly = kExpPolyFloat,
    .log_poly = kLogPolyFloat,
    .tanh_poly = kTanhPolyFloat,
    .erf_small_poly = kErfSmallPolyFloat,
    .erf_tail_centers = kErfTailCentersFloat,
    .erf_tail_poly = {&kErfTailPolyFloat[0][0], sizeof(kErfTailPolyFloat) / sizeof(double)},
    .erf_tail_degree = std::size(kErfTailPolyFloat[0]) - 1,
};

const Precision kDoublePrecision = {
    .bits = 64,
    .mantissa_bits = 52,
    .exponent_bias = 1023,
    .minimum_normal = 0x1p-1022,
    .log2_e = 0x1.71547652b82fep+0,
    .ln2_high = 0x1.62e42fefa39efp-1,
    .ln2_low = 0x1.abc9e3b39803fp-56,
    .sqrt_half_bits = 0x3fe6a09e667f3bcd,
    .denormal_scale_exponent = 54,
    .exp_lower = -746.0,
    .exp_upper = 710.0,
    .tanh_saturation = 20.0,
    .erf_tail_end = 6.0,
    .exp_poly = kExpPolyDouble,
    .log_poly = kLogPolyDouble,
    .tanh_poly = kTanhPolyDouble,
    .erf_small_poly = kErfSmallPolyDouble,
    .erf_tail_centers = kErfTailCentersDouble,
    .erf_tail_poly = {&kErfTailPolyDouble[0][0], sizeof(kErfTailPolyDouble) / sizeof(double)},
    .erf_tail_degree = std::size(kErfTailPolyDouble[0]) - 1,
};

// Emits the functions for one value type (scalar or vector of float or
// double). Construction clears the builder's fast-math flags; destruction
// restores them.
class MathEmitter {
 public:
  MathEmitter(llvm::IRBuilderBase& builder, llvm::Type* type)
      : builder_(builder), flag_guard_(builder), type_(type) {
    builder_.clearFastMathFlags();
    llvm::Type* element = type->getScalarType();
    RELAY_CHECK(element->isFloatTy() || element->isDoubleTy(),
                "vector math emitted for a type other than float or double (or vectors of them)");
    precision_ = element->isDoubleTy() ? &kDoublePrecision : &kFloatPrecision;
    llvm::Type* int_element = builder.getIntNTy(precision_->bits);
    auto* vector_type = llvm::dyn_cast<llvm::VectorType>(type);
    int_type_ = vector_type ? llvm::VectorType::get(int_element, vector_type->getElementCount())
                            : int_element;
  }

  llvm::Value* Exp(llvm::Value* x) {
    return Select(builder_.CreateFCmpUNO(x, x), x, ExpParts(x).high);
  }

  // e^x as high + low, where high is e^x rounded (as Exp returns it) and low
  // the part of the polynomial's value that high's rounding dropped, scaled
  // alike (it underflows to 0 with denormal results). A NaN x gives e^0.
  struct Parts {
    llvm::Value* high;
    llvm::Value* low;
  };
  Parts ExpParts(llvm::Value* x) {
    const Precision& p = *precision_;
    // NaN takes the path of 0 so that no NaN reaches fptosi (poison).
    llvm::Value* clamped =
        Select(builder_.CreateFCmpOGT(x, Constant(p.exp_upper)), Constant(p.exp_upper), x);
    clamped = Select(builder_.CreateFCmpOLT(clamped, Constant(p.exp_lower)), Constant(p.exp_lower),
                     clamped);
    clamped = Select(builder_.CreateFCmpUNO(x, x), Constant(0.0), clamped);
    llvm::Value* k =
        Intrinsic(llvm::Intrinsic::roundeven, {builder_.CreateFMul(clamped, Constant(p.log2_e))});
    // |r| <= ln2/2 + a little; x - k ln2_high is exact (the fma rounds a
    // value representable in the type), so r's only error is ln2_low's step.
    llvm::Value* minus_k = builder_.CreateFNeg(k);
    llvm::Value* r = Fma(minus_k, Constant(p.ln2_high), clamped);
    r = Fma(minus_k, Constant(p.ln2_low), r);
    llvm::Value* expm1_r = Fma(builder_.CreateFMul(r, r), Horner(r, p.exp_poly), r);
    llvm::Value* exp_r = builder_.CreateFAdd(Constant(1.0), expm1_r);
    // Exact (Fast2Sum: |expm1_r| < 1).
    llvm::Value* exp_r_low =
        builder_.CreateFAdd(builder_.CreateFSub(Constant(1.0), exp_r), expm1_r);
    // 2^k as 2^(k >> 1) * 2^(k - (k >> 1)): both factors are normal numbers for
    // every k the clamp allows, the first product is exact, and the second
    // rounds once, to +inf on overflow and gradually into the denormals.
    llvm::Value* k_integer = builder_.CreateFPToSI(k, int_type_);
    llvm::Value* k_half = builder_.CreateAShr(k_integer, Integer(1));
    llvm::Value* first_scale = PowerOfTwo(k_half);
    llvm::Value* second_scale = PowerOfTwo(builder_.CreateSub(k_integer, k_half));
    auto scale = [&](llvm::Value* value) {
      return builder_.CreateFMul(builder_.CreateFMul(value, first_scale), second_scale);
    };
    return {scale(exp_r), scale(exp_r_low)};
  }

  llvm::Value* Log(llvm::Value* x) {
    const Precision& p = *precision_;
    llvm::Value* is_denormal = builder_.CreateFCmpOLT(x, Constant(p.minimum_normal));
    llvm::Value* scaled =
        Select(is_denormal,
               builder_.CreateFMul(x, Constant(std::ldexp(1.0, p.denormal_scale_exponent))), x);
    // x = m 2^e with m in [sqrt(1/2), sqrt(2)): subtracting sqrt(1/2)'s bits
    // moves the exponent boundary there.
    llvm::Value* shifted =
        builder_.CreateSub(builder_.CreateBitCast(scaled, int_type_), Integer(p.sqrt_half_bits));
    llvm::Value* exponent =
        builder_.CreateAdd(builder_.CreateAShr(shifted, Integer(p.mantissa_bits)),
                           Select(is_denormal, Integer(-p.denormal_scale_exponent), Integer(0)));
    int64_t mantissa_mask = (int64_t{1} << p.mantissa_bits) - 1;
    llvm::Value* m = builder_.CreateBitCast(
        builder_.CreateAdd(builder_.CreateAnd(shifted, Integer(mantissa_mask)),
                           Integer(p.sqrt_half_bits)),
        type_);
    llvm::Value* f = builder_.CreateFSub(m, Constant(1.0));  // exact (Sterbenz)
    // log1p(f) = 2 atanh(s) = f - f^2/2 + s (f^2/2 + R), R = s^2 poly(s^2):
    // f enters exactly, the rounded terms are corrections.
    llvm::Value* s = builder_.CreateFDiv(f, builder_.CreateFAdd(Constant(2.0), f));
    llvm::Value* z = builder_.CreateFMul(s, s);
    llvm::Value* series = builder_.CreateFMul(z, Horner(z, p.log_poly));
    llvm::Value* half_f_squared = builder_.CreateFMul(Constant(0.5), builder_.CreateFMul(f, f));
    llvm::Value* e = builder_.CreateSIToFP(exponent, type_);
    llvm::Value* correction = Fma(s, builder_.CreateFAdd(half_f_squared, series),
                                  builder_.CreateFMul(e, Constant(p.ln2_low)));
    llvm::Value* low = builder_.CreateFSub(f, builder_.CreateFSub(half_f_squared, correction));
    llvm::Value* result = Fma(e, Constant(p.ln2_high), low);

    llvm::Value* infinity = Constant(INFINITY);
    result = Select(builder_.CreateFCmpOEQ(x, infinity), infinity, result);
    result = Select(builder_.CreateFCmpOEQ(x, Constant(0.0)), Constant(-INFINITY), result);
    result = Select(builder_.CreateFCmpOLT(x, Constant(0.0)), Constant(NAN), result);
    return Select(builder_.CreateFCmpUNO(x, x), x, result);
  }

  llvm::Value* Tanh(llvm::Value* x) {
    const Precision& p = *precision_;
    llvm::Value* a = Intrinsic(llvm::Intrinsic::fabs, {x});
    llvm::Value* a_squared = builder_.CreateFMul(a, a);
    llvm::Value* small = Fma(builder_.CreateFMul(a, a_squared), Horner(a_squared, p.tanh_poly), a);
    // 1 - 2 / (e^2a + 1), with e^2a as high + low parts, the quotient
    // corrected by its residual and the subtraction from 1 kept exact until
    // the last addition, so that the result is rounded about once.
    llvm::Value* saturated = Select(builder_.CreateFCmpOGT(a, Constant(p.tanh_saturation)),
                                    Constant(p.tanh_saturation), a);
    Parts exp_2a = ExpParts(builder_.CreateFAdd(saturated, saturated));
    llvm::Value* one = Constant(1.0);
    llvm::Value* two = Constant(2.0);
    llvm::Value* denominator = builder_.CreateFAdd(exp_2a.high, one);
    // Exact (Fast2Sum: e^2a > 1 here) plus the low part.
    llvm::Value* denominator_low = builder_.CreateFAdd(
        builder_.CreateFAdd(builder_.CreateFSub(exp_2a.high, denominator), one), exp_2a.low);
    llvm::Value* reciprocal = builder_.CreateFDiv(one, denominator);
    llvm::Value* quotient = builder_.CreateFMul(two, reciprocal);
    llvm::Value* residual =
        builder_.CreateFSub(Fma(builder_.CreateFNeg(quotient), denominator, two),
                            builder_.CreateFMul(quotient, denominator_low));
    llvm::Value* difference = builder_.CreateFSub(one, quotient);
    // Exact (Fast2Sum: quotient < 1).
    llvm::Value* difference_low =
        builder_.CreateFSub(builder_.CreateFSub(one, difference), quotient);
    llvm::Value* large = builder_.CreateFAdd(
        difference, builder_.CreateFSub(difference_low, builder_.CreateFMul(residual, reciprocal)));
    llvm::Value* result = Select(builder_.CreateFCmpOLT(a, Constant(kTanhSmallEnd)), small, large);
    result = Intrinsic(llvm::Intrinsic::copysign, {result, x});
    return Select(builder_.CreateFCmpUNO(x, x), x, result);
  }

  llvm::Value* Erf(llvm::Value* x) {
    const Precision& p = *precision_;
    llvm::Value* a = Intrinsic(llvm::Intrinsic::fabs, {x});
    llvm::Value* small = Fma(a, Horner(builder_.CreateFMul(a, a), p.erf_small_poly), a);

    // Each lane picks its interval's centre and coefficients; NaN falls into
    // the last interval and stays NaN.
    size_t intervals = p.erf_tail_centers.size();
    size_t row = p.erf_tail_degree + 1;
    double width = (p.erf_tail_end - kErfSmallEnd) / static_cast<double>(intervals);
    std::vector<llvm::Value*> below_end;  // a < the end of interval i
    for (size_t i = 0; i + 1 < intervals; ++i) {
      below_end.push_back(
          builder_.CreateFCmpOLT(a, Constant(kErfSmallEnd + width * static_cast<double>(i + 1))));
    }
    auto per_lane = [&](auto value_of_interval) {
      llvm::Value* value = Constant(value_of_interval(intervals - 1));
      for (size_t i = intervals - 1; i-- > 0;) {
        value = Select(below_end[i], Constant(value_of_interval(i)), value);
      }
      return value;
    };
    llvm::Value* center = per_lane([&](size_t i) { return p.erf_tail_centers[i]; });
    // Exact: the centres have few bits and |t| < 2^k ulp(a) for all lanes.
    llvm::Value* t = builder_.CreateFSub(a, center);
    llvm::Value* tail = per_lane([&](size_t i) { return p.erf_tail_poly[i * row + row - 1]; });
    for (size_t degree = row - 1; degree-- > 0;) {
      tail = Fma(tail, t, per_lane([&](size_t i) { return p.erf_tail_poly[i * row + degree]; }));
    }
    tail = Select(builder_.CreateFCmpOGE(a, Constant(p.erf_tail_end)), Constant(1.0), tail);
    llvm::Value* result = Select(builder_.CreateFCmpOLT(a, Constant(kErfSmallEnd)), small, tail);
    return Intrinsic(llvm::Intrinsic::copysign, {result, x});
  }

  llvm::Value* Sigmoid(llvm::Value* x) {
    // e = e^-|x| never overflows; for x < 0, e / (1 + e) underflows gradually
    // where 1 / (1 + e^-x) would give 0 early. The quotient n / d is
    // computed from e's high and low parts and corrected by its residual, so
    // that the additions and the division add about half an ulp in all,
    // not two.
    Parts e = ExpParts(builder_.CreateFNeg(Intrinsic(llvm::Intrinsic::fabs, {x})));
    llvm::Value* one = Constant(1.0);
    llvm::Value* denominator = builder_.CreateFAdd(one, e.high);
    llvm::Value* denominator_low = builder_.CreateFAdd(
        builder_.CreateFAdd(builder_.CreateFSub(one, denominator), e.high), e.low);
    llvm::Value* non_negative = builder_.CreateFCmpOGE(x, Constant(0.0));
    llvm::Value* numerator = Select(non_negative, one, e.high);
    llvm::Value* numerator_low = Select(non_negative, Constant(0.0), e.low);
    llvm::Value* reciprocal = builder_.CreateFDiv(one, denominator);
    llvm::Value* quotient = builder_.CreateFMul(numerator, reciprocal);
    llvm::Value* residual = builder_.CreateFAdd(
        Fma(builder_.CreateFNeg(quotient), denominator, numerator),
        builder_.CreateFSub(numerator_low, builder_.CreateFMul(quotient, denominator_low)));
    llvm::Value* result = Fma(residual, reciprocal, quotient);
    return Select(builder_.CreateFCmpUNO(x, x), x, result);
  }

 private:
  llvm::Value* Constant(double value) { return llvm::ConstantFP::get(type_, value); }
  llvm::Value* Integer(int64_t value) {
    return llvm::ConstantInt::get(int_type_, static_cast<uint64_t>(value), /*isSigned=*/true);
  }
  llvm::Value* Select(llvm::Value* condition, llvm::Value* if_true, llvm::Value* if_false) {
    return builder_.CreateSelect(condition, if_true, if_false);
  }
  llvm::Value* Intrinsic(llvm::Intrinsic::ID id, llvm::ArrayRef<llvm::Value*> arguments) {
    return builder_.CreateIntrinsic(id, {type_}, arguments);
  }
  llvm::Value* Fma(llvm::Value* a, llvm::Value* b, llvm::Value* c) {
    return Intrinsic(llvm::Intrinsic::fma, {a, b, c});
  }
  // sum_i coefficients[i] x^i by Horner's rule with fused multiply-adds.
  llvm::Value* Horner(llvm::Value* x, std::span<const double> coefficients) {
    llvm::Value* result = Constant(coefficients.back());
    for (size_t i = coefficients.size() - 1; i-- > 0;) {
      result = Fma(result, x, Constant(coefficients[i]));
    }
    return result;
  }
  // 2^k for integer k (in int_type_) in the normal exponent range.
  llvm::Value* PowerOfTwo(llvm::Value* k) {
    llvm::Value* biased = builder_.CreateAdd(k, Integer(precision_->exponent_bias));
    return builder_.CreateBitCast(builder_.CreateShl(biased, Integer(precision_->mantissa_bits)),
                                  type_);
  }

  llvm::IRBuilderBase& builder_;
  llvm::IRBuilderBase::FastMathFlagGuard flag_guard_;
  llvm::Type* type_;
  llvm::Type* int_type_ = nullptr;
  const Precision* precision_ = nullptr;
};

}  // namespace

llvm::Value* EmitExp(llvm::IRBuilderBase& builder, llvm::Value* x) {
  return MathEmitter(builder, x->getType()).Exp(x);
}

llvm::Value* EmitLog(llvm::IRBuilderBase& builder, llvm::Value* x) {
  return MathEmitter(builder, x->getType()).Log(x);
}

llvm::Value* EmitTanh(llvm::IRBuilderBase& builder, llvm::Value* x) {
  return MathEmitter(builder, x->getType()).Tanh(x);
}

llvm::Value* EmitErf(llvm::IRBuilderBase& builder, llvm::Value* x) {
  return MathEmitter(builder, x->getType()).Erf(x);
}

llvm::Value* EmitSigmoid(llvm::IRBuilderBase& builder, llvm::Value* x) {
  return MathEmitter(builder, x->getType()).Sigmoid(x);
}

}  // namespace relay::kernels::llvm_backend
