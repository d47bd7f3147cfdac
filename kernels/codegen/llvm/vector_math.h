// Vectorisable transcendental functions emitted as straight-line LLVM IR.
//
// Each Emit* function appends to `builder`'s insertion point the IR computing
// one function of `x` and returns the result, of x's type. x may be a float
// or double scalar or a fixed vector of them (<N x float>, <N x double>); half
// and bfloat are the caller's to extend to float first. The emitted IR has no
// calls (only the llvm.fma / llvm.fabs / llvm.copysign / llvm.roundeven
// intrinsics, which every target lowers inline), no branches and no memory
// access: lanes are handled with selects, so the loop vectoriser and SLP
// vectoriser treat it like any other arithmetic. The builder's fast-math
// flags are ignored (the compensated arithmetic below must not be
// reassociated); its insertion point and flags are left as they were.
//
// Method, per function (p: polynomial, all coefficients fitted by us to the
// Chebyshev interpolant of the exact function at 60 digits, the polynomial
// error far below the rounding error of the type):
//   exp:  k = roundeven(x log2 e), r = x - k ln2 (ln2 split in two, with fma:
//         the first step is exact), exp(r) = 1 + (r + r^2 p(r)), times 2^k as
//         two exact power-of-two multiplications so that overflow gives +inf
//         and underflow is gradual (one rounding into the denormal range).
//   log:  denormal inputs are scaled by 2^25 / 2^54 first; x = m 2^e with m in
//         [sqrt(1/2), sqrt(2)), f = m - 1 (exact), s = f / (2 + f),
//         log1p(f) = f - f^2/2 + s (f^2/2 + s^2 p(s^2)), plus e ln2 by fma.
//   tanh: odd polynomial |x| + |x|^3 p(x^2) for |x| < 0.625, else
//         1 - 2 / (e^2|x| + 1) with e^2|x| carried as two parts (exp's rounded
//         value and the rounding error of its last addition), the quotient
//         corrected by its fma residual and 1 - q summed exactly until the
//         last addition; |x| is capped at 10 / 20, where tanh rounds to 1;
//         sign restored with copysign.
//   erf:  |x| + |x| p(x^2) for |x| < 0.5; on [0.5, 4) (float) / [0.5, 6)
//         (double) four intervals with a polynomial in (|x| - centre) each,
//         coefficients chosen per lane by selects; 1 beyond (where erf rounds
//         to 1); sign restored with copysign.
//   sigmoid: e = e^-|x| in two parts as for tanh; n / (1 + e) with n = 1 for
//         x >= 0 and n = e for x < 0, the quotient corrected by its residual,
//         so nothing overflows and the negative tail underflows gradually.
//
// Special cases are exact IEEE: exp(-inf) = +0, exp(+inf) = +inf, overflow
// gives +inf and underflow a correctly scaled denormal or 0; log(+-0) = -inf,
// log(x < 0) = NaN, log(+inf) = +inf, denormal inputs are exact-scaled;
// tanh(+-inf) = +-1, erf(+-inf) = +-1, sigmoid(-inf) = 0, sigmoid(+inf) = 1;
// signed zeros are kept by tanh and erf; NaN inputs give NaN everywhere.
//
// Accuracy, measured against glibc's long double functions (the oracle) in
// ulps of the exact result's binade, by tests/kernels/vector_math_test.cc
// (float: every 8191st bit pattern of all 2^32, a dense sweep of the
// interesting range, denormals and special values; double: random bit
// patterns, random magnitudes in [2^-40, 2^11), a dense sweep, denormals and
// special values; each as <16 x T> vectors and as scalars):
//              exp     log     tanh    erf     sigmoid
//   float    0.961   0.753   0.661   0.778   0.947
//   double   0.970   0.794   0.680   1.113   0.941
// (Twice as many samples gave at most 0.963 for float and 1.154 for double.)
// The test asserts at most 1.5 ulp (float) and 2 ulp (double) everywhere.
// Results are bit-identical on every target (IEEE operations and fma only);
// targets without hardware FMA are correct but lower llvm.fma to libm's fma.
//
// Thread-safety: as for IRBuilder, one builder per thread.
#pragma once

namespace llvm {
class IRBuilderBase;
class Value;
}  // namespace llvm

namespace relay::kernels::llvm_backend {

// e^x.
llvm::Value* EmitExp(llvm::IRBuilderBase& builder, llvm::Value* x);

// The natural logarithm of x.
llvm::Value* EmitLog(llvm::IRBuilderBase& builder, llvm::Value* x);

// The hyperbolic tangent of x.
llvm::Value* EmitTanh(llvm::IRBuilderBase& builder, llvm::Value* x);

// The error function of x.
llvm::Value* EmitErf(llvm::IRBuilderBase& builder, llvm::Value* x);

// The logistic function 1 / (1 + e^-x).
llvm::Value* EmitSigmoid(llvm::IRBuilderBase& builder, llvm::Value* x);

}  // namespace relay::kernels::llvm_backend
