#!/usr/bin/python3
"""Generates tests/fixtures/reduction/: inputs and NumPy-computed expected
outputs of Relay's reduction operators, read by
tests/kernels/reduction_kernels_test.cc.

Run from anywhere (needs NumPy; Debian's python3-numpy will do):

    /usr/bin/python3 tests/kernels/generate_reduction_cases.py

The output is deterministic (fixed seed, fixed case list): rerunning the
script reproduces the committed files byte for byte.

For every case it writes CASE.in0.npy (and CASE.in1.npy for variance and std,
the mean) and CASE.out.npy, and one line of cases.txt:

    CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]

TOLERANCE bounds |actual - expected| <= TOLERANCE * max(1, |expected|) for
floating-point outputs (NaN must match NaN, infinities exactly); integer and
bool outputs must match exactly and carry tolerance 0. Attributes: `axis` is a
comma-separated list of integers (absent means axis=None, every axis);
keepdims, exclude, select_last_index and unbiased are `true` or `false`.

NumPy is the oracle. Where Relay's semantics are stated differently from
NumPy's default the expectation is computed explicitly and says so:
- integer sum and prod keep the input dtype and wrap
  (numpy.sum(x, dtype=x.dtype));
- float16 sum, prod and mean are computed in float64 and rounded once, as the
  kernels do (NumPy's float16 accumulation would round at every step);
- argmax and argmin over several axes give the flat row-major position over
  the reduced axes (NumPy has no multi-axis argmax: the reduced axes are moved
  last, flattened, and numpy.argmax is applied); the first NaN wins, as in
  numpy.argmax; select_last_index is numpy.argmax of the reversed axis;
- exclude=True reduces every axis not listed;
- variance and std take the mean (keepdims shape) as a second input and equal
  numpy.var / numpy.std with ddof=1 when unbiased.
"""

import os
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20241122

writer = FixtureWriter("reduction", SEED)
rng = writer.rng
uniform = writer.uniform
integers = writer.integers

EXACT = 0
F32 = 1e-5
F64 = 1e-12
HALF = 1e-3

TOLERANCE = {np.float16: HALF, np.float32: F32, np.float64: F64}


def emit(name, operator, inputs, expected, tolerance, attributes=()):
    """Writes one case: its inputs, NumPy's expected output and its index line."""
    writer.emit_tolerance_case(name, operator, inputs, expected, tolerance,
                               [(key, format_attribute(value)) for key, value in attributes],
                               max_ndim=4, max_size=60)


def format_attribute(value):
    """A bool as true or false, an axis list as comma-separated integers."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return ",".join(str(int(axis)) for axis in value)


def reduced_axes(ndim, axis, exclude):
    """The normalised axes a Relay reduction reduces, as a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    listed = {a % ndim for a in axis}
    if exclude:
        return tuple(a for a in range(ndim) if a not in listed)
    return tuple(sorted(listed))


def attributes_of(axis, keepdims, exclude, extra=()):
    attributes = []
    if axis is not None:
        attributes.append(("axis", axis))
    if keepdims:
        attributes.append(("keepdims", True))
    if exclude:
        attributes.append(("exclude", True))
    return attributes + list(extra)


def value_case(name, operator, x, axis=None, keepdims=False, exclude=False):
    """sum, prod, mean, max, min, all, any against NumPy."""
    axes = reduced_axes(x.ndim, axis, exclude)
    dtype = x.dtype.type
    if operator in ("sum", "prod"):
        function = np.sum if operator == "sum" else np.prod
        if x.dtype == np.float16:
            expected = function(x.astype(np.float64), axis=axes, keepdims=keepdims)
        else:
            expected = function(x, axis=axes, keepdims=keepdims, dtype=x.dtype)
    elif operator == "mean":
        with warnings.catch_warnings():  # the mean of nothing is NaN, with a warning
            warnings.simplefilter("ignore", RuntimeWarning)
            expected = np.mean(x.astype(np.float64), axis=axes, keepdims=keepdims)
    else:
        function = {"max": np.max, "min": np.min, "all": np.all, "any": np.any}[operator]
        expected = function(x, axis=axes, keepdims=keepdims)
    expected = np.asarray(expected).astype(dtype)
    tolerance = TOLERANCE.get(dtype, EXACT) if operator in ("sum", "prod", "mean") else EXACT
    emit(name, operator, [x], expected, tolerance, attributes_of(axis, keepdims, exclude))


def arg_case(name, operator, x, axis=None, keepdims=False, exclude=False, select_last=False):
    axes = reduced_axes(x.ndim, axis, exclude)
    kept = [a for a in range(x.ndim) if a not in axes]
    moved = np.transpose(x, kept + list(axes))
    flat = moved.reshape([x.shape[a] for a in kept] + [-1])
    function = np.argmax if operator == "argmax" else np.argmin
    if select_last:
        expected = flat.shape[-1] - 1 - function(flat[..., ::-1], axis=-1)
    else:
        expected = function(flat, axis=-1)
    if keepdims:
        expected = expected.reshape([1 if a in axes else x.shape[a] for a in range(x.ndim)])
    extra = [("select_last_index", True)] if select_last else []
    emit(name, operator, [x], np.asarray(expected).astype(np.int32), EXACT,
         attributes_of(axis, keepdims, exclude, extra))


def variance_case(name, operator, x, axis=None, keepdims=False, unbiased=False):
    axes = reduced_axes(x.ndim, axis, False)
    mean = np.mean(x, axis=axes, keepdims=True).astype(x.dtype)
    # The kernels use the mean they are given (rounded to x's dtype), so the
    # expectation does too: sum((x - mean)^2) / (n - ddof) in float64.
    deviation = x.astype(np.float64) - mean.astype(np.float64)
    count = int(np.prod([x.shape[a] for a in axes]))
    expected = np.sum(deviation * deviation, axis=axes, keepdims=keepdims) / (
        count - (1 if unbiased else 0))
    if operator == "std":
        expected = np.sqrt(expected)
    expected = expected.astype(x.dtype)
    extra = [("unbiased", True)] if unbiased else []
    emit(name, operator, [x, mean], expected, TOLERANCE[x.dtype.type],
         attributes_of(axis, keepdims, False, extra))


def value_cases():
    x = uniform((3, 4, 5), -2, 2, np.float32)
    value_case("sum_f32_all", "sum", x)
    value_case("sum_f32_axis1", "sum", x, axis=[1])
    value_case("sum_f32_axis_neg1_keepdims", "sum", x, axis=[-1], keepdims=True)
    value_case("sum_f32_axes02", "sum", x, axis=[0, 2])
    value_case("sum_f32_exclude1", "sum", x, axis=[1], exclude=True)
    value_case("sum_f32_exclude1_keepdims", "sum", x, axis=[1], keepdims=True, exclude=True)
    value_case("sum_f32_all_keepdims", "sum", x, keepdims=True)
    value_case("sum_f64_axis0", "sum", uniform((4, 3), -1e3, 1e3, np.float64), axis=[0])
    value_case("sum_f16_axis1", "sum", uniform((3, 6), -1, 1, np.float16), axis=[1])
    value_case("sum_i32_axis1", "sum", integers((3, 4), -100, 100, np.int32), axis=[1])
    value_case("sum_i8_wraps", "sum", integers((2, 8), 60, 120, np.int8), axis=[1])
    value_case("sum_u8_wraps", "sum", integers((2, 8), 100, 250, np.uint8), axis=[-1])
    value_case("sum_i64_all", "sum", integers((2, 3, 2), -10**12, 10**12, np.int64))
    value_case("sum_f32_scalar", "sum", np.array(1.5, dtype=np.float32))
    value_case("sum_f32_empty_axis", "sum", np.zeros((2, 0), np.float32), axis=[1])
    value_case("sum_f32_empty_output", "sum", np.zeros((0, 3), np.float32), axis=[1])
    value_case("sum_i32_empty_all", "sum", np.zeros((0, 4), np.int32))

    value_case("prod_f32_axis0", "prod", uniform((4, 3), 0.5, 1.5, np.float32), axis=[0])
    value_case("prod_f64_all", "prod", uniform((2, 3), -2, 2, np.float64))
    value_case("prod_i32_wraps", "prod", integers((2, 6), 100, 1000, np.int32), axis=[1])
    value_case("prod_f32_empty_axis", "prod", np.zeros((3, 0), np.float32), axis=[1])

    value_case("mean_f32_axis1", "mean", x, axis=[1])
    value_case("mean_f32_all_keepdims", "mean", x, keepdims=True)
    value_case("mean_f64_exclude0", "mean", uniform((3, 2, 2), -5, 5, np.float64), axis=[0],
               exclude=True)
    value_case("mean_f16_axis0", "mean", uniform((4, 3), -1, 1, np.float16), axis=[0])
    value_case("mean_f32_empty_axis", "mean", np.zeros((2, 0), np.float32), axis=[1])

    with_nan = uniform((3, 5), -3, 3, np.float32)
    with_nan[1, 2] = np.nan
    with_nan[2, 0] = np.inf
    value_case("max_f32_axis1_nan", "max", with_nan, axis=[1])
    value_case("min_f32_axis0_nan", "min", with_nan, axis=[0])
    value_case("max_f32_all_nan", "max", with_nan)
    value_case("max_f32_axes_keepdims", "max", x, axis=[0, -1], keepdims=True)
    value_case("min_f64_axis1", "min", uniform((3, 4), -1, 1, np.float64), axis=[1])
    value_case("max_f16_axis1", "max", uniform((2, 5), -1, 1, np.float16), axis=[1])
    value_case("max_i32_axis0", "max", integers((4, 3), -2**31, 2**31 - 1, np.int32), axis=[0])
    value_case("min_i8_axis1", "min", integers((3, 4), -128, 127, np.int8), axis=[1])
    value_case("max_u8_all", "max", integers((3, 4), 0, 255, np.uint8))
    value_case("min_i64_exclude", "min", integers((2, 3, 2), -10**15, 10**15, np.int64),
               axis=[1], exclude=True)
    value_case("max_f32_neg_inf", "max", np.full((2, 3), -np.inf, np.float32), axis=[1])
    bools = rng.random((3, 4)) < 0.5
    bools[0, :] = True
    bools[1, :] = False
    value_case("max_bool_axis1", "max", bools, axis=[1])
    value_case("min_bool_axis1", "min", bools, axis=[1])

    value_case("all_bool_axis1", "all", bools, axis=[1])
    value_case("any_bool_axis1", "any", bools, axis=[1])
    value_case("all_bool_all", "all", bools)
    value_case("any_bool_axis0_keepdims", "any", bools, axis=[0], keepdims=True)
    value_case("all_bool_empty_axis", "all", np.zeros((2, 0), bool), axis=[1])
    value_case("any_bool_empty_axis", "any", np.zeros((2, 0), bool), axis=[1])


def arg_cases():
    x = uniform((3, 4, 5), -2, 2, np.float32)
    arg_case("argmax_f32_axis1", "argmax", x, axis=[1])
    arg_case("argmin_f32_axis_neg1", "argmin", x, axis=[-1])
    arg_case("argmax_f32_all", "argmax", x)
    arg_case("argmax_f32_all_keepdims", "argmax", x, keepdims=True)
    arg_case("argmin_f32_axes02", "argmin", x, axis=[0, 2])
    arg_case("argmax_f32_exclude0", "argmax", x, axis=[0], exclude=True)
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [0, -1, 5, 5]], np.int32)
    arg_case("argmax_i32_ties_first", "argmax", ties, axis=[1])
    arg_case("argmax_i32_ties_last", "argmax", ties, axis=[1], select_last=True)
    arg_case("argmin_i32_ties_last", "argmin", ties, axis=[0], select_last=True)
    arg_case("argmin_u8_axis1", "argmin", integers((3, 5), 0, 255, np.uint8), axis=[1])
    arg_case("argmax_i8_axis0", "argmax", integers((5, 3), -128, 127, np.int8), axis=[0])
    with_nan = uniform((3, 6), -3, 3, np.float32)
    with_nan[0, 2] = np.nan
    with_nan[0, 4] = np.nan
    with_nan[1, 5] = np.nan
    arg_case("argmax_f32_nan", "argmax", with_nan, axis=[1])
    arg_case("argmin_f32_nan", "argmin", with_nan, axis=[1])
    arg_case("argmax_f32_nan_all", "argmax", with_nan)
    arg_case("argmax_f64_axis0", "argmax", uniform((4, 3), -1, 1, np.float64), axis=[0])
    arg_case("argmin_f16_axis1", "argmin", uniform((2, 6), -1, 1, np.float16), axis=[1])
    arg_case("argmax_f32_neg_inf", "argmax", np.full((2, 3), -np.inf, np.float32), axis=[1])
    arg_case("argmax_f32_neg_inf_last", "argmax", np.full((2, 3), -np.inf, np.float32),
             axis=[1], select_last=True)


def variance_cases():
    x = uniform((3, 4, 5), -2, 2, np.float32)
    variance_case("variance_f32_axis1", "variance", x, axis=[1])
    variance_case("variance_f32_all_unbiased", "variance", x, unbiased=True)
    variance_case("variance_f64_axis_neg1_keepdims", "variance",
                  uniform((3, 4), -10, 10, np.float64), axis=[-1], keepdims=True)
    variance_case("std_f32_axes02", "std", x, axis=[0, 2])
    variance_case("std_f64_axis0_unbiased", "std", uniform((5, 2), -1, 1, np.float64),
                  axis=[0], unbiased=True)


def collapse_sum_cases():
    """collapse_sum_like: the sum that undoes broadcasting data's shape from
    collapse_type's (only collapse_type's shape matters)."""
    x = writer.uniform((2, 3, 4), -1, 1, np.float32)
    x64 = x.astype(np.float64)
    for name, like_shape, expected in [
            ("collapse_sum_like_leading", (3, 4), x64.sum(axis=0)),
            ("collapse_sum_like_ones", (2, 1, 4), x64.sum(axis=1, keepdims=True)),
            ("collapse_sum_like_both", (3, 1), x64.sum(axis=(0, 2)).reshape(3, 1)),
            ("collapse_sum_like_scalar", (), x64.sum()),
            ("collapse_sum_like_same", (2, 3, 4), x64)]:
        like = np.zeros(like_shape, np.float32)
        emit(name, "collapse_sum_like", [x, like], np.asarray(expected).astype(np.float32), F32)
    ints = writer.integers((3, 2), -50, 50, np.int32)
    emit("collapse_sum_like_i32", "collapse_sum_like", [ints, np.zeros((2,), np.int32)],
         ints.sum(axis=0).astype(np.int32), EXACT)


def main():
    writer.clear()
    value_cases()
    arg_cases()
    variance_cases()
    collapse_sum_cases()
    writer.write_index("generate_reduction_cases.py", [
        "# CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]",
        "# Inputs: CASE.in<N>.npy; expected output: CASE.out.npy.",
    ])


if __name__ == "__main__":
    main()
