#!/usr/bin/python3
"""Generates tests/fixtures/elementwise/: inputs and NumPy-computed expected
outputs of Relay's elementwise and broadcast operators, read by
tests/kernels/elementwise_kernels_test.cc.

Run from anywhere (needs NumPy; Debian's python3-numpy will do):

    /usr/bin/python3 tests/kernels/generate_elementwise_cases.py

The output is deterministic (fixed seed, fixed case list): rerunning the
script reproduces the committed files byte for byte.

For every case it writes CASE.in0.npy, CASE.in1.npy, ... and CASE.out.npy, and
one line of cases.txt:

    CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]

TOLERANCE bounds |actual - expected| <= TOLERANCE * max(1, |expected|) for
floating-point outputs (NaN must match NaN, infinities must match exactly);
integer and bool outputs must match exactly and carry tolerance 0. A VALUE is
an integer, a floating-point number or a bare word (a dtype name).

NumPy is the oracle. Where Relay's semantics are stated differently from
NumPy's default the expectation is computed explicitly and says so:
- divide on integers truncates toward zero (as C and TVM); NumPy's `/` would
  give floats, so the quotient is computed with Python integers;
- integer division and modulo by zero yield 0 (NumPy also returns 0, with a
  warning; the script checks that and writes the 0 explicitly);
- mod is numpy.fmod (the dividend's sign), floor_mod is numpy.mod;
- floating-point floor_divide and floor_mod are floor(a / b) and
  a - floor(a / b) * b in TVM; NumPy's divmod-based versions differ from those
  only in the last bit for quotients close to an integer (1.0 // 0.1 is 9 in
  NumPy, floor(1.0 / 0.1) is 10), so the inputs avoid such quotients and the
  script asserts that both formulas agree on them;
- float16 is computed in float32 and rounded to float16, which is what NumPy
  does for float16 arithmetic and ufuncs;
- transcendental functions are evaluated in float64 and rounded to the
  output dtype (erf through math.erf, as SciPy is not assumed);
- sigmoid is 1 / (1 + exp(-x)) in float64, rsqrt is 1 / sqrt(x);
- round rounds halves to even (numpy.round, ONNX Round, TVM's round, which
  lowers to nearbyint/roundeven).
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20240611

writer = FixtureWriter("elementwise", SEED)
rng = writer.rng
uniform = writer.uniform
integers = writer.integers

# Tolerances by kind of computation.
EXACT = 0
ARITHMETIC = 1e-6
ARITHMETIC_F64 = 1e-12
TRANSCENDENTAL = 2e-6
TRANSCENDENTAL_F64 = 1e-12
HALF = 1e-3


def format_attribute(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    return repr(float(value))


def emit(name, operator, inputs, expected, tolerance, attributes=()):
    """Writes one case: its inputs, NumPy's expected output and its index line."""
    writer.emit_tolerance_case(name, operator, inputs, expected, tolerance,
                               [(key, format_attribute(value)) for key, value in attributes],
                               max_ndim=3, max_size=30)


def in_float64(function, dtype):
    """A unary function evaluated in float64 and rounded to `dtype`."""
    def apply(x):
        with np.errstate(all="ignore"):
            return function(np.asarray(x, dtype=np.float64)).astype(dtype)
    return apply


erf64 = np.vectorize(math.erf, otypes=[np.float64])


def sigmoid64(x):
    return 1.0 / (1.0 + np.exp(-x))


def rsqrt64(x):
    return 1.0 / np.sqrt(x)


def round_half_even(x):
    # numpy.round (numpy.around) rounds halves to even.
    return np.round(x)


# ---- integer division, written out with Python integers -------------------------------

def integer_elementwise(function, a, b):
    """Applies a Python-integer function elementwise with broadcasting."""
    a_b, b_b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    result = [function(int(x), int(y)) for x, y in zip(a_b.ravel(), b_b.ravel())]
    return np.array(result, dtype=a_b.dtype).reshape(a_b.shape)


def trunc_divide(x, y):
    if y == 0:
        return 0
    quotient = abs(x) // abs(y)
    return quotient if (x < 0) == (y < 0) else -quotient


def trunc_mod(x, y):
    return 0 if y == 0 else x - trunc_divide(x, y) * y


def floor_divide(x, y):
    return 0 if y == 0 else x // y  # Python's // floors


def floor_mod(x, y):
    return 0 if y == 0 else x % y  # Python's % takes the divisor's sign


def check_numpy_integer_division(a, b):
    """NumPy agrees with the explicit integer formulas, zero divisors included."""
    with np.errstate(all="ignore"):
        assert np.array_equal(np.floor_divide(a, b), integer_elementwise(floor_divide, a, b))
        assert np.array_equal(np.mod(a, b), integer_elementwise(floor_mod, a, b))
        assert np.array_equal(np.fmod(a, b), integer_elementwise(trunc_mod, a, b))
        nonzero = np.broadcast_to(np.asarray(b) != 0, np.broadcast(a, b).shape)
        truncated = np.trunc(np.true_divide(a, b))
        expected = integer_elementwise(trunc_divide, a, b)
        assert np.array_equal(truncated[nonzero], expected[nonzero].astype(np.float64))


# ---- cases -----------------------------------------------------------------------------

def unary_cases():
    matrix = (3, 4)
    general = uniform(matrix, -3, 3, np.float32)
    positive = uniform(matrix, 0.05, 6, np.float32)

    # negative, abs, sign
    for dtype, tolerance in [(np.float32, EXACT), (np.float64, EXACT)]:
        x = np.array([[-2.5, -0.0, 0.0, 1.25], [3.0, -7.75, 1e-3, -1e30],
                      [np.inf, -np.inf, 42.0, -0.5]], dtype=dtype)
        suffix = np.dtype(dtype).name.replace("float", "f")
        emit("negative_" + suffix, "negative", [x], np.negative(x), tolerance)
        emit("abs_" + suffix, "abs", [x], np.abs(x), tolerance)
        emit("sign_" + suffix, "sign", [x], np.sign(x), tolerance)
    for dtype, low, high in [(np.int32, -1000, 1000), (np.int64, -10**12, 10**12),
                             (np.int8, -127, 127)]:
        x = integers(matrix, low, high, dtype)
        x.flat[0] = 0
        suffix = np.dtype(dtype).name.replace("int", "i")
        emit("negative_" + suffix, "negative", [x], np.negative(x), EXACT)
        emit("abs_" + suffix, "abs", [x], np.abs(x), EXACT)
        emit("sign_" + suffix, "sign", [x], np.sign(x), EXACT)
    x = np.array([0, 1, 7, 128, 200, 255], dtype=np.uint8)
    emit("abs_u8", "abs", [x], np.abs(x), EXACT)
    emit("sign_u8", "sign", [x], np.sign(x), EXACT)

    # exp, log, sqrt, rsqrt, sigmoid, tanh, erf
    transcendental = [("exp", np.exp, general), ("log", np.log, positive),
                      ("sqrt", np.sqrt, positive), ("rsqrt", rsqrt64, positive),
                      ("sigmoid", sigmoid64, general), ("tanh", np.tanh, general),
                      ("erf", erf64, general)]
    for name, function, x in transcendental:
        emit(name + "_f32", name, [x], in_float64(function, np.float32)(x), TRANSCENDENTAL)
        x64 = x.astype(np.float64) * 1.1
        emit(name + "_f64", name, [x64], in_float64(function, np.float64)(x64),
             TRANSCENDENTAL_F64)

    extremes = np.array([-100, -88, -20, -1e-3, 0, 1e-3, 20, 88, 89, 100], dtype=np.float32)
    emit("exp_f32_extremes", "exp", [extremes], in_float64(np.exp, np.float32)(extremes),
         TRANSCENDENTAL)
    emit("sigmoid_f32_extremes", "sigmoid", [extremes],
         in_float64(sigmoid64, np.float32)(extremes), TRANSCENDENTAL)
    emit("tanh_f32_extremes", "tanh", [extremes], in_float64(np.tanh, np.float32)(extremes),
         TRANSCENDENTAL)
    erf_extremes = np.array([-10, -4, -1e-4, 0, 1e-4, 0.5, 4, 10], dtype=np.float32)
    emit("erf_f32_extremes", "erf", [erf_extremes], in_float64(erf64, np.float32)(erf_extremes),
         TRANSCENDENTAL)
    edges = np.array([0.0, -0.0, -1.0, 1.0, 4.0, np.inf, np.nan], dtype=np.float32)
    emit("log_f32_edges", "log", [edges], in_float64(np.log, np.float32)(edges), TRANSCENDENTAL)
    emit("sqrt_f32_edges", "sqrt", [edges], in_float64(np.sqrt, np.float32)(edges),
         TRANSCENDENTAL)
    emit("rsqrt_f32_edges", "rsqrt", [edges], in_float64(rsqrt64, np.float32)(edges),
         TRANSCENDENTAL)
    half = uniform((2, 5), -4, 4, np.float16)
    # NumPy evaluates float16 ufuncs in float32 and rounds the result.
    emit("exp_f16", "exp", [half], np.exp(half), HALF)

    # floor, ceil, round
    steps = np.array([[-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], [3.5, -3.5, 1.7, -1.7, 0.2, -0.2],
                      [0.49999997, -0.49999997, 8388607.5, -8388607.5, 1e20, -0.0]])
    for dtype in (np.float32, np.float64):
        x = steps.astype(dtype)
        suffix = np.dtype(dtype).name.replace("float", "f")
        emit("floor_" + suffix, "floor", [x], np.floor(x), EXACT)
        emit("ceil_" + suffix, "ceil", [x], np.ceil(x), EXACT)
        emit("round_" + suffix, "round", [x], round_half_even(x), EXACT)

    # logical_not, copy
    flags = rng.random((3, 4)) < 0.5
    emit("logical_not_bool", "logical_not", [flags], np.logical_not(flags), EXACT)
    emit("copy_f32", "copy", [general], general.copy(), EXACT)
    big = integers((2, 3), -10**15, 10**15, np.int64)
    emit("copy_i64", "copy", [big], big.copy(), EXACT)
    emit("copy_bool", "copy", [flags], flags.copy(), EXACT)
    small = integers((4,), 0, 255, np.uint8)
    emit("copy_u8", "copy", [small], small.copy(), EXACT)

    # relu, leaky_relu, clip
    emit("relu_f32", "nn.relu", [general], np.maximum(general, np.float32(0)), EXACT)
    general64 = general.astype(np.float64) * 1.1
    emit("relu_f64", "nn.relu", [general64], np.maximum(general64, 0.0), EXACT)
    ints = integers(matrix, -50, 50, np.int32)
    emit("relu_i32", "nn.relu", [ints], np.maximum(ints, np.int32(0)), EXACT)
    emit("relu_f16", "nn.relu", [half], np.maximum(half, np.float16(0)), HALF)
    empty = np.zeros((0, 3), dtype=np.float32)
    emit("relu_f32_empty", "nn.relu", [empty], np.maximum(empty, np.float32(0)), EXACT)
    emit("leaky_relu_f32", "nn.leaky_relu", [general],
         np.where(general > 0, general, np.float32(0.2) * general), ARITHMETIC,
         [("alpha", 0.2)])
    # Relay's default alpha is 0.01.
    emit("leaky_relu_f32_default_alpha", "nn.leaky_relu", [general],
         np.where(general > 0, general, np.float32(0.01) * general), ARITHMETIC)
    emit("leaky_relu_f64", "nn.leaky_relu", [general64],
         np.where(general64 > 0, general64, 0.1 * general64), ARITHMETIC_F64, [("alpha", 0.1)])
    emit("clip_f32", "clip", [general], np.clip(general, np.float32(-1.5), np.float32(2)),
         EXACT, [("a_min", -1.5), ("a_max", 2)])
    emit("clip_f64", "clip", [general64], np.clip(general64, 0.0, 1.0), EXACT,
         [("a_min", 0.0), ("a_max", 1.0)])
    emit("clip_i32", "clip", [ints], np.clip(ints, -3, 4).astype(np.int32), EXACT,
         [("a_min", -3), ("a_max", 4)])

    # cast: C conversions where NumPy's astype agrees with them (in-range
    # float-to-int truncates toward zero; int-to-int wraps modulo 2^bits;
    # to bool is "nonzero").
    to_int = np.array([[-2.7, -1.5, -0.5, 0.0], [0.5, 1.5, 2.7, 1e6], [-1e6, 123.99, -0.0, 7.0]],
                      dtype=np.float32)
    wide = np.array([-129, -128, -1, 0, 127, 128, 255, 256, 1000, -1000], dtype=np.int32)
    casts = [
        ("cast_f32_to_i32", to_int, "int32"),
        ("cast_f32_to_i64", to_int, "int64"),
        ("cast_f32_to_f64", general, "float64"),
        ("cast_f64_to_f32", general64 * np.pi, "float32"),
        ("cast_f32_to_f16", general * 100, "float16"),
        ("cast_f16_to_f32", half, "float32"),
        ("cast_f32_to_bool", to_int, "bool"),
        ("cast_bool_to_f32", flags, "float32"),
        ("cast_bool_to_i32", flags, "int32"),
        ("cast_i32_to_f32", ints, "float32"),
        ("cast_i32_to_i8", wide, "int8"),
        ("cast_i32_to_u8", wide, "uint8"),
        ("cast_u8_to_i32", small, "int32"),
        ("cast_i64_to_f64", big, "float64"),
        ("cast_i32_to_bool", wide, "bool"),
    ]
    for name, x, dtype in casts:
        expected = x.astype(dtype)
        emit(name, "cast", [x], expected, HALF if dtype == "float16" else EXACT,
             [("dtype", dtype)])


def binary_cases():
    matrix = (3, 4)
    floats = {np.float32: ("f32", ARITHMETIC), np.float64: ("f64", ARITHMETIC_F64)}

    # add, subtract, multiply, maximum, minimum on every numeric dtype.
    for dtype, (suffix, tolerance) in floats.items():
        a = uniform(matrix, -10, 10, dtype)
        b = uniform(matrix, -10, 10, dtype)
        emit("add_" + suffix, "add", [a, b], np.add(a, b), tolerance)
        emit("subtract_" + suffix, "subtract", [a, b], np.subtract(a, b), tolerance)
        emit("multiply_" + suffix, "multiply", [a, b], np.multiply(a, b), tolerance)
        emit("maximum_" + suffix, "maximum", [a, b], np.maximum(a, b), EXACT)
        emit("minimum_" + suffix, "minimum", [a, b], np.minimum(a, b), EXACT)
    integer_ranges = [(np.int32, "i32", -1000, 1000), (np.int64, "i64", -10**12, 10**12),
                      (np.int8, "i8", -100, 100), (np.uint8, "u8", 0, 255)]
    for dtype, suffix, low, high in integer_ranges:
        a = integers(matrix, low, high, dtype)
        b = integers(matrix, low, high, dtype)
        # int8 and uint8 sums overflow: Relay, like NumPy and C, wraps.
        emit("add_" + suffix, "add", [a, b], np.add(a, b), EXACT)
        emit("subtract_" + suffix, "subtract", [a, b], np.subtract(a, b), EXACT)
        emit("multiply_" + suffix, "multiply", [a, b], np.multiply(a, b), EXACT)
        emit("maximum_" + suffix, "maximum", [a, b], np.maximum(a, b), EXACT)
        emit("minimum_" + suffix, "minimum", [a, b], np.minimum(a, b), EXACT)
    half_a = uniform((2, 5), -8, 8, np.float16)
    half_b = uniform((2, 5), -8, 8, np.float16)
    emit("add_f16", "add", [half_a, half_b], np.add(half_a, half_b), HALF)
    emit("multiply_f16", "multiply", [half_a, half_b], np.multiply(half_a, half_b), HALF)

    # Broadcasting.
    scalar = np.array(2.5, dtype=np.float32)
    grid = uniform(matrix, -5, 5, np.float32)
    column = uniform((3, 1), -5, 5, np.float32)
    row = uniform((4,), -5, 5, np.float32)
    emit("add_f32_scalar_matrix", "add", [scalar, grid], np.add(scalar, grid), ARITHMETIC)
    emit("subtract_f32_matrix_scalar", "subtract", [grid, scalar], np.subtract(grid, scalar),
         ARITHMETIC)
    emit("add_f32_scalars", "add", [scalar, np.array(-1.25, dtype=np.float32)],
         np.add(scalar, np.float32(-1.25)), ARITHMETIC)
    emit("add_f32_column_row", "add", [column, row], np.add(column, row), ARITHMETIC)
    emit("multiply_f32_row_column", "multiply", [row, column], np.multiply(row, column),
         ARITHMETIC)
    cube = uniform((2, 1, 5), -5, 5, np.float32)
    emit("add_f32_rank3_rank2", "add", [cube, column], np.add(cube, column), ARITHMETIC)
    emit("maximum_f32_rank2_rank3", "maximum", [column, cube], np.maximum(column, cube), EXACT)
    int_column = integers((3, 1), -20, 20, np.int32)
    int_row = integers((4,), -20, 20, np.int32)
    emit("subtract_i32_column_row", "subtract", [int_column, int_row],
         np.subtract(int_column, int_row), EXACT)
    empty = np.zeros((0, 3), dtype=np.float32)
    three = uniform((3,), -5, 5, np.float32)
    emit("add_f32_empty", "add", [empty, three], np.add(empty, three), ARITHMETIC)
    emit("less_f32_empty", "less", [empty, three], np.less(empty, three), EXACT)
    emit("multiply_f32_empty_scalar", "multiply", [scalar, empty], np.multiply(scalar, empty),
         ARITHMETIC)

    # NaN propagation in maximum and minimum (both operand positions).
    nan = np.float32(np.nan)
    x = np.array([[nan, 1.0, nan, -np.inf], [2.0, nan, -0.5, np.inf]], dtype=np.float32)
    y = np.array([[1.0, nan, nan, 3.0], [-2.0, 0.0, nan, nan]], dtype=np.float32)
    emit("maximum_f32_nan", "maximum", [x, y], np.maximum(x, y), EXACT)
    emit("minimum_f32_nan", "minimum", [x, y], np.minimum(x, y), EXACT)
    emit("maximum_f64_nan", "maximum", [x.astype(np.float64), y.astype(np.float64)],
         np.maximum(x.astype(np.float64), y.astype(np.float64)), EXACT)

    # Division and modulo: signs in every combination, zero divisors for integers.
    numerators = [[7, -7, 7, -7], [0, 5, -5, 9], [1, -1, 3, -8]]
    denominators = [[2, 2, -2, -2], [3, 0, 0, 3], [0, 5, -4, 3]]
    for dtype, suffix in [(np.int32, "i32"), (np.int64, "i64"), (np.int8, "i8")]:
        a = np.array(numerators, dtype=dtype)
        b = np.array(denominators, dtype=dtype)
        if dtype == np.int64:
            a = a * 10**11 + np.sign(a)
            b = b * 10**10
        check_numpy_integer_division(a, b)
        emit("divide_" + suffix, "divide", [a, b], integer_elementwise(trunc_divide, a, b),
             EXACT)
        emit("floor_divide_" + suffix, "floor_divide", [a, b],
             integer_elementwise(floor_divide, a, b), EXACT)
        emit("mod_" + suffix, "mod", [a, b], integer_elementwise(trunc_mod, a, b), EXACT)
        emit("floor_mod_" + suffix, "floor_mod", [a, b], integer_elementwise(floor_mod, a, b),
             EXACT)
    a = np.array([[7, 200, 0, 255], [9, 1, 128, 3]], dtype=np.uint8)
    b = np.array([[2, 0, 3, 16], [3, 0, 255, 7]], dtype=np.uint8)
    check_numpy_integer_division(a, b)
    for operator, function in [("divide", trunc_divide), ("floor_divide", floor_divide),
                               ("mod", trunc_mod), ("floor_mod", floor_mod)]:
        emit(operator + "_u8", operator, [a, b], integer_elementwise(function, a, b), EXACT)
    column = np.array([[17], [-17], [0]], dtype=np.int32)
    row = np.array([5, -5, 0, 1], dtype=np.int32)
    check_numpy_integer_division(column, row)
    emit("divide_i32_column_row", "divide", [column, row],
         integer_elementwise(trunc_divide, column, row), EXACT)
    emit("floor_mod_i32_column_row", "floor_mod", [column, row],
         integer_elementwise(floor_mod, column, row), EXACT)

    float_numerators = [[7.5, -7.5, 7.5, -7.5], [0.0, 5.25, -5.25, 9.0], [1.0, -1.0, 3.0, -8.0]]
    float_denominators = [[2.0, 2.0, -2.0, -2.0], [3.0, 0.5, 0.25, 3.0], [4.0, 5.0, -4.0, 3.0]]
    for dtype, (suffix, tolerance) in floats.items():
        a = np.array(float_numerators, dtype=dtype)
        b = np.array(float_denominators, dtype=dtype)
        with np.errstate(all="ignore"):
            # TVM's formulas agree with NumPy's on these inputs (see the header).
            assert np.array_equal(np.floor_divide(a, b), np.floor(a / b))
            assert np.allclose(np.mod(a, b), a - np.floor(a / b) * b, rtol=0, atol=0)
        emit("divide_" + suffix, "divide", [a, b], np.true_divide(a, b), tolerance)
        emit("floor_divide_" + suffix, "floor_divide", [a, b], np.floor_divide(a, b), EXACT)
        emit("mod_" + suffix, "mod", [a, b], np.fmod(a, b), tolerance)
        emit("floor_mod_" + suffix, "floor_mod", [a, b], np.mod(a, b), tolerance)
    a = np.array([1.0, -1.0, 0.0, 5.0, -0.0, np.inf], dtype=np.float32)
    b = np.array([0.0, 0.0, 0.0, -0.0, 2.0, 2.0], dtype=np.float32)
    with np.errstate(all="ignore"):
        emit("divide_f32_by_zero", "divide", [a, b], np.true_divide(a, b), ARITHMETIC)
    a = uniform(matrix, -10, 10, np.float32)
    b = uniform((4,), 0.5, 4, np.float32)
    emit("divide_f32_matrix_row", "divide", [a, b], np.true_divide(a, b), ARITHMETIC)

    # power
    base = uniform(matrix, 0.1, 4, np.float32)
    exponent = uniform(matrix, -3, 3, np.float32)
    emit("power_f32", "power", [base, exponent],
         np.power(base.astype(np.float64), exponent.astype(np.float64)).astype(np.float32),
         TRANSCENDENTAL)
    base = np.array([-2.0, -2.0, -1.5, 0.0, 0.0, 2.0, 9.0, -3.0], dtype=np.float32)
    exponent = np.array([3.0, 2.0, -1.0, 0.0, 2.0, 0.5, 0.5, 0.0], dtype=np.float32)
    emit("power_f32_integral_exponents", "power", [base, exponent], np.power(base, exponent),
         TRANSCENDENTAL)
    base64 = uniform(matrix, 0.1, 4, np.float64)
    exponent64 = uniform(matrix, -3, 3, np.float64)
    emit("power_f64", "power", [base64, exponent64], np.power(base64, exponent64),
         TRANSCENDENTAL_F64)
    int_base = np.array([[2, -3, 0, 1], [5, -1, 7, 10]], dtype=np.int32)
    int_exponent = np.array([[10, 3, 0, 9], [0, 7, 2, 6]], dtype=np.int32)
    emit("power_i32", "power", [int_base, int_exponent], np.power(int_base, int_exponent), EXACT)

    # Comparisons, NaN included for floats (NaN compares unequal to everything).
    comparisons = [("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
                   ("less_equal", np.less_equal), ("greater", np.greater),
                   ("greater_equal", np.greater_equal)]
    f32_a = np.array([[1.0, 2.0, nan, 3.0], [-0.0, np.inf, 5.0, nan], [-1.0, 4.0, 4.0, 0.5]],
                     dtype=np.float32)
    f32_b = np.array([[1.0, 3.0, 1.0, 2.0], [0.0, np.inf, nan, nan], [-2.0, 4.0, 4.5, 0.25]],
                     dtype=np.float32)
    i32_a = np.array([[1, -2, 3, 4], [-5, 6, 0, -8]], dtype=np.int32)
    i32_b = np.array([[1, 2, -3, 4], [5, 6, 0, -9]], dtype=np.int32)
    u8_a = np.array([0, 128, 255, 7, 200], dtype=np.uint8)
    u8_b = np.array([0, 127, 1, 7, 201], dtype=np.uint8)
    for name, function in comparisons:
        emit(name + "_f32", name, [f32_a, f32_b], function(f32_a, f32_b), EXACT)
        emit(name + "_i32", name, [i32_a, i32_b], function(i32_a, i32_b), EXACT)
        # uint8 compares unsigned: 128 > 127 and 255 > 1.
        emit(name + "_u8", name, [u8_a, u8_b], function(u8_a, u8_b), EXACT)
    f64_column = uniform((3, 1), -2, 2, np.float64)
    f64_row = uniform((4,), -2, 2, np.float64)
    emit("less_f64_column_row", "less", [f64_column, f64_row], np.less(f64_column, f64_row),
         EXACT)
    i8_a = np.array([-128, -1, 0, 127], dtype=np.int8)
    i8_b = np.array(-1, dtype=np.int8)
    emit("greater_i8_vector_scalar", "greater", [i8_a, i8_b], np.greater(i8_a, i8_b), EXACT)
    i64_a = np.array([10**15, -10**15, 3], dtype=np.int64)
    i64_b = np.array([10**15 + 1, -10**15, 2], dtype=np.int64)
    emit("less_equal_i64", "less_equal", [i64_a, i64_b], np.less_equal(i64_a, i64_b), EXACT)
    flags_a = np.array([True, True, False, False])
    flags_b = np.array([True, False, True, False])
    emit("equal_bool", "equal", [flags_a, flags_b], np.equal(flags_a, flags_b), EXACT)

    # Logical operators on bool.
    emit("logical_and_bool", "logical_and", [flags_a, flags_b],
         np.logical_and(flags_a, flags_b), EXACT)
    emit("logical_or_bool", "logical_or", [flags_a, flags_b], np.logical_or(flags_a, flags_b),
         EXACT)
    flag_column = np.array([[True], [False], [True]])
    flag_row = rng.random((4,)) < 0.5
    emit("logical_and_bool_column_row", "logical_and", [flag_column, flag_row],
         np.logical_and(flag_column, flag_row), EXACT)
    scalar_flag = np.array(False)
    flag_grid = rng.random(matrix) < 0.5
    emit("logical_or_bool_scalar_matrix", "logical_or", [scalar_flag, flag_grid],
         np.logical_or(scalar_flag, flag_grid), EXACT)


def where_cases():
    matrix = (3, 4)
    condition = rng.random(matrix) < 0.5
    x = uniform(matrix, -5, 5, np.float32)
    y = uniform(matrix, -5, 5, np.float32)
    emit("where_f32", "where", [condition, x, y], np.where(condition, x, y), EXACT)
    emit("where_f64", "where", [condition, x.astype(np.float64), y.astype(np.float64)],
         np.where(condition, x.astype(np.float64), y.astype(np.float64)), EXACT)
    xi = integers(matrix, -100, 100, np.int32)
    yi = integers(matrix, -100, 100, np.int32)
    emit("where_i32", "where", [condition, xi, yi], np.where(condition, xi, yi), EXACT)
    column = np.array([[True], [False], [True]])
    row = uniform((4,), -5, 5, np.float32)
    scalar = np.array(-9.5, dtype=np.float32)
    emit("where_f32_column_row_scalar", "where", [column, row, scalar],
         np.where(column, row, scalar), EXACT)
    cube_condition = rng.random((2, 1, 5)) < 0.5
    x_column = uniform((3, 1), -5, 5, np.float32)
    y_row = uniform((5,), -5, 5, np.float32)
    emit("where_f32_rank3_condition", "where", [cube_condition, x_column, y_row],
         np.where(cube_condition, x_column, y_row), EXACT)
    emit("where_f32_scalar_condition", "where", [np.array(True), x, y],
         np.where(np.array(True), x, y), EXACT)
    empty_condition = np.zeros((0, 3), dtype=bool)
    three = uniform((3,), -5, 5, np.float32)
    emit("where_f32_empty", "where", [empty_condition, three, np.array(1.0, dtype=np.float32)],
         np.where(empty_condition, three, np.float32(1.0)), EXACT)
    # Relay's where accepts any condition dtype: nonzero selects x, as in NumPy.
    int_condition = np.array([[0, 2, -1, 0], [5, 0, 0, 1], [0, 0, 7, -3]], dtype=np.int32)
    emit("where_f32_int32_condition", "where", [int_condition, x, y],
         np.where(int_condition, x, y), EXACT)


def truncation_and_logarithm_cases():
    """trunc, trunc_divide, trunc_mod, log2, log10, isfinite (drawn after the
    other cases, so adding them left those unchanged)."""
    x = np.array([[-2.5, -0.5, -0.0, 0.0], [0.5, 2.5, 3.75, -7.25]], dtype=np.float32)
    emit("trunc_f32", "trunc", [x], np.trunc(x), EXACT)
    ints = integers((3, 4), -50, 50, np.int32)
    emit("trunc_i32", "trunc", [ints], ints, EXACT)
    a = uniform((3, 4), -10, 10, np.float32)
    b = uniform((4,), 0.5, 3, np.float32) * np.array([1, -1, 1, -1], np.float32)
    emit("trunc_divide_f32", "trunc_divide", [a, b], np.trunc(a / b), ARITHMETIC)
    emit("trunc_mod_f32", "trunc_mod", [a, b], np.fmod(a, b), ARITHMETIC)
    ia = integers((3, 4), -100, 100, np.int32)
    ib = np.array([7, -3, 0, 5], dtype=np.int32)
    emit("trunc_divide_i32", "trunc_divide", [ia, ib], integer_elementwise(trunc_divide, ia, ib),
         EXACT)
    emit("trunc_mod_i32", "trunc_mod", [ia, ib], integer_elementwise(trunc_mod, ia, ib), EXACT)
    positive = uniform((3, 4), 0.01, 1000, np.float32)
    positive.flat[:3] = [1.0, 8.0, 1024.0]
    emit("log2_f32", "log2", [positive], in_float64(np.log2, np.float32)(positive),
         TRANSCENDENTAL)
    emit("log10_f32", "log10", [positive], in_float64(np.log10, np.float32)(positive),
         TRANSCENDENTAL)
    special = np.array([0.0, -1.5, np.inf, -np.inf, np.nan, 3e38], dtype=np.float32)
    emit("isfinite_f32", "isfinite", [special], np.isfinite(special), EXACT)


def wide_unsigned_cases():
    """uint16, uint32 and uint64: wrapping arithmetic, unsigned division and
    comparison (values above the signed range), and conversions."""
    u16_a = np.array([65535, 40000, 7, 0], dtype=np.uint16)
    u16_b = np.array([1, 30000, 3, 9], dtype=np.uint16)
    emit("add_u16_wraps", "add", [u16_a, u16_b], u16_a + u16_b, EXACT)
    emit("mod_u16", "mod", [u16_a, u16_b], integer_elementwise(trunc_mod, u16_a, u16_b), EXACT)
    u32_a = np.array([[4294967295, 3000000000], [5, 0]], dtype=np.uint32)
    u32_b = np.array([[2, 7], [4000000000, 1]], dtype=np.uint32)
    emit("multiply_u32_wraps", "multiply", [u32_a, u32_b], u32_a * u32_b, EXACT)
    emit("subtract_u32_wraps", "subtract", [u32_a, u32_b], u32_a - u32_b, EXACT)
    emit("divide_u32", "divide", [u32_a, u32_b], integer_elementwise(trunc_divide, u32_a, u32_b),
         EXACT)
    emit("less_u32", "less", [u32_a, u32_b], u32_a < u32_b, EXACT)
    u64_a = np.array([2**64 - 1, 2**63 + 5, 10**19, 3], dtype=np.uint64)
    u64_b = np.array([2, 7, 3, 2**63], dtype=np.uint64)
    emit("maximum_u64", "maximum", [u64_a, u64_b], np.maximum(u64_a, u64_b), EXACT)
    emit("floor_divide_u64", "floor_divide", [u64_a, u64_b],
         integer_elementwise(floor_divide, u64_a, u64_b), EXACT)
    emit("greater_u64", "greater", [u64_a, u64_b], u64_a > u64_b, EXACT)
    emit("cast_u32_to_f32", "cast", [u32_a], u32_a.astype(np.float32), EXACT,
         [("dtype", "float32")])
    emit("cast_u64_to_f64", "cast", [u64_a], u64_a.astype(np.float64), EXACT,
         [("dtype", "float64")])
    emit("cast_i32_to_u16_wraps", "cast", [np.array([-1, 70000, 5], dtype=np.int32)],
         np.array([-1, 70000, 5], dtype=np.int32).astype(np.uint16), EXACT,
         [("dtype", "uint16")])
    # Bit shifts; NumPy's shifts by the width or more leave 0 (or the sign).
    for dtype, suffix in [(np.uint8, "u8"), (np.uint32, "u32"), (np.uint64, "u64"),
                          (np.int32, "i32"), (np.int64, "i64")]:
        bits = np.dtype(dtype).itemsize * 8
        values = np.array([[1, 5, 200, 0], [7, 3, 1, 100]]).astype(dtype)
        if np.dtype(dtype).kind == "i":
            values[1] = -values[1]
        amounts = np.array([[0, 1, 3, bits - 1], [bits, bits + 5, 2, 1]]).astype(dtype)
        emit("left_shift_" + suffix, "left_shift", [values, amounts],
             np.left_shift(values, amounts), EXACT)
        emit("right_shift_" + suffix, "right_shift", [values, amounts],
             np.right_shift(values, amounts), EXACT)
    negative_amounts = np.array([-1, 2, -40], dtype=np.int32)
    shifted = np.array([-64, -64, 64], dtype=np.int32)
    # NumPy reads a negative amount as a huge one (all bits out), as relay-vm does.
    emit("right_shift_i32_negative_amount", "right_shift", [shifted, negative_amounts],
         np.right_shift(shifted, negative_amounts), EXACT)
    emit("left_shift_i32_negative_amount", "left_shift", [shifted, negative_amounts],
         np.left_shift(shifted, negative_amounts), EXACT)


def main():
    writer.clear()
    unary_cases()
    binary_cases()
    where_cases()
    truncation_and_logarithm_cases()
    wide_unsigned_cases()
    writer.write_index("generate_elementwise_cases.py", [
        "# CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]",
        "# Inputs: CASE.in<N>.npy; expected output: CASE.out.npy.",
    ])


if __name__ == "__main__":
    main()
