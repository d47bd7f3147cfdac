#!/usr/bin/python3
"""Generates tests/fixtures/nn/: inputs and NumPy-computed expected outputs of
Relay's neural-network operators (nn.dense, nn.matmul, nn.batch_matmul,
nn.bias_add, nn.prelu, nn.softmax, nn.log_softmax, nn.layer_norm,
nn.instance_norm, nn.group_norm, nn.batch_norm, nn.dropout,
nn.batch_flatten) and of dft and det (C++ kernels with float results that
need a tolerance), read by tests/kernels/nn_kernels_test.cc.

Run from anywhere (needs NumPy; Debian's python3-numpy will do):

    /usr/bin/python3 tests/kernels/generate_nn_cases.py

The output is deterministic (fixed seed, fixed case list).

For every case it writes CASE.in<N>.npy and one line of cases.txt:

    CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]

and the expected result: CASE.out.npy for a tensor result, or
CASE.out0.npy, CASE.out1.npy, ... for the fields of a tuple result
(nn.batch_norm, nn.dropout). TOLERANCE bounds
|actual - expected| <= TOLERANCE * max(1, |expected|) for floating-point
outputs; integer outputs must match exactly. Attribute values: axis, units and
num_groups are integers; epsilon and rate are floats; out_dtype is a dtype
name; center, scale, transpose_a and transpose_b are `true` or `false`.

NumPy is the oracle. Float results are computed in float64 from the inputs and
rounded once to the output dtype (the kernels accumulate dot products in
float32, as BLAS does, and the normalisations in float64; the reductions here
are short enough for the float32 tolerance). Integer dense products are
computed in int64 and wrapped to out_dtype. Semantics follow TVM's Relay:
- nn.dense(data, weight) = data @ weight.T;
- nn.batch_matmul transposes tensor_b by default, and a batch of 1
  broadcasts;
- nn.softmax and nn.log_softmax subtract the maximum along the axis first;
- nn.layer_norm normalises over `axis`; nn.instance_norm over every axis but
  0 and `axis`; nn.group_norm over every axis but 0 and `axis` and over the
  channels of a group (num_groups groups along `axis`); all with biased
  variance, then * gamma (scale) + beta (center) per channel along `axis`;
- nn.batch_norm at inference: (x - moving_mean) / sqrt(moving_var + eps)
  [* gamma] [+ beta] along `axis`, returning (output, moving_mean,
  moving_var) with the moving statistics unchanged;
- nn.dropout at inference: (data, a mask of ones);
- dft along the last axis is numpy.fft.fft, and with inverse
  numpy.fft.ifft (divided by N), of re + i im, as (real, imaginary);
- det is numpy.linalg.det.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20250301

writer = FixtureWriter("nn", SEED)
uniform = writer.uniform
integers = writer.integers

F16 = 2e-3
F32 = 1e-5
F64 = 1e-10
EXACT = 0
TOLERANCE = {np.dtype(np.float16): F16, np.dtype(np.float32): F32, np.dtype(np.float64): F64}

MAX_NDIM = 4
MAX_SIZE = 400


def format_attribute(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def tolerance_of(expected):
    return EXACT if expected.dtype.kind in "biu" else TOLERANCE[expected.dtype]


def emit(name, operator, inputs, expected, **attributes):
    """One case with a tensor result."""
    expected = np.asarray(expected)
    writer.emit_tolerance_case(name, operator, inputs, expected, tolerance_of(expected),
                               [(key, format_attribute(value)) for key, value in attributes.items()],
                               MAX_NDIM, MAX_SIZE)


def emit_tuple(name, operator, inputs, fields, **attributes):
    """One case with a tuple result: CASE.out<N>.npy per field."""
    writer.add_case_name(name)
    writer.save_inputs(name, inputs, MAX_NDIM, MAX_SIZE)
    tolerance = max(tolerance_of(np.asarray(field)) for field in fields)
    for position, field in enumerate(fields):
        writer.save("%s.out%d.npy" % (name, position), np.asarray(field))
    line = [name, operator, str(len(inputs)), repr(float(tolerance))]
    line += ["%s=%s" % (key, format_attribute(value)) for key, value in attributes.items()]
    writer.add_index_line(line)


def wide(array):
    return np.asarray(array, dtype=np.float64)


# ---- dense, matmul, batch_matmul ----------------------------------------------------------

def dense_cases():
    data, weight = uniform((4, 6), -1, 1, np.float32), uniform((5, 6), -1, 1, np.float32)
    emit("dense_f32", "nn.dense", [data, weight], (wide(data) @ wide(weight).T).astype(np.float32))
    emit("dense_f32_units", "nn.dense", [data, weight],
         (wide(data) @ wide(weight).T).astype(np.float32), units=5)
    data3 = uniform((2, 3, 6), -1, 1, np.float32)
    emit("dense_f32_rank3", "nn.dense", [data3, weight],
         (wide(data3) @ wide(weight).T).astype(np.float32))
    data64, weight64 = uniform((3, 7), -5, 5, np.float64), uniform((2, 7), -5, 5, np.float64)
    emit("dense_f64", "nn.dense", [data64, weight64], wide(data64) @ wide(weight64).T)
    data16, weight16 = uniform((3, 4), -1, 1, np.float16), uniform((2, 4), -1, 1, np.float16)
    emit("dense_f16", "nn.dense", [data16, weight16],
         (wide(data16) @ wide(weight16).T).astype(np.float16))
    data8, weight8 = integers((3, 5), -128, 127, np.int8), integers((4, 5), -128, 127, np.int8)
    emit("dense_i8_out_i32", "nn.dense", [data8, weight8],
         (data8.astype(np.int64) @ weight8.astype(np.int64).T).astype(np.int32),
         out_dtype="int32")
    emit("dense_f32_out_f64", "nn.dense", [data, weight], wide(data) @ wide(weight).T,
         out_dtype="float64")
    # A long reduction, within 1e-5 with float32 accumulation.
    long_data, long_weight = uniform((2, 150), -1, 1, np.float32), uniform((2, 150), -1, 1, np.float32)
    emit("dense_f32_long_reduction", "nn.dense", [long_data, long_weight],
         (wide(long_data) @ wide(long_weight).T).astype(np.float32))


def matmul_cases():
    for transpose_a in (False, True):
        for transpose_b in (False, True):
            a = uniform((5, 3) if transpose_a else (3, 5), -1, 1, np.float32)
            b = uniform((4, 5) if transpose_b else (5, 4), -1, 1, np.float32)
            a_matrix = wide(a).T if transpose_a else wide(a)
            b_matrix = wide(b).T if transpose_b else wide(b)
            name = "matmul_f32_ta%d_tb%d" % (transpose_a, transpose_b)
            emit(name, "nn.matmul", [a, b], (a_matrix @ b_matrix).astype(np.float32),
                 transpose_a=transpose_a, transpose_b=transpose_b)
    a3 = uniform((2, 3, 5), -1, 1, np.float32)
    b = uniform((5, 4), -1, 1, np.float32)
    emit("matmul_f32_rank3", "nn.matmul", [a3, b], (wide(a3) @ wide(b)).astype(np.float32))
    a3t = uniform((2, 5, 3), -1, 1, np.float32)
    emit("matmul_f32_rank3_ta", "nn.matmul", [a3t, b],
         (np.swapaxes(wide(a3t), -1, -2) @ wide(b)).astype(np.float32), transpose_a=True)
    vector = uniform((5,), -1, 1, np.float32)
    emit("matmul_f32_vector", "nn.matmul", [vector, b], (wide(vector) @ wide(b)).astype(np.float32))


def batch_matmul_cases():
    a, b = uniform((2, 3, 4), -1, 1, np.float32), uniform((2, 5, 4), -1, 1, np.float32)
    emit("batch_matmul_f32_default_tb", "nn.batch_matmul", [a, b],
         (wide(a) @ np.swapaxes(wide(b), 1, 2)).astype(np.float32))
    b_plain = uniform((2, 4, 5), -1, 1, np.float32)
    emit("batch_matmul_f32_no_transpose", "nn.batch_matmul", [a, b_plain],
         (wide(a) @ wide(b_plain)).astype(np.float32), transpose_b=False)
    a_t = uniform((2, 4, 3), -1, 1, np.float32)
    emit("batch_matmul_f32_ta_tb", "nn.batch_matmul", [a_t, b],
         (np.swapaxes(wide(a_t), 1, 2) @ np.swapaxes(wide(b), 1, 2)).astype(np.float32),
         transpose_a=True, transpose_b=True)
    a1 = uniform((1, 3, 4), -1, 1, np.float32)
    b3 = uniform((3, 5, 4), -1, 1, np.float32)
    emit("batch_matmul_f32_broadcast_a", "nn.batch_matmul", [a1, b3],
         (wide(a1) @ np.swapaxes(wide(b3), 1, 2)).astype(np.float32))
    a3 = uniform((3, 3, 4), -1, 1, np.float32)
    b1 = uniform((1, 5, 4), -1, 1, np.float32)
    emit("batch_matmul_f32_broadcast_b", "nn.batch_matmul", [a3, b1],
         (wide(a3) @ np.swapaxes(wide(b1), 1, 2)).astype(np.float32))
    a64, b64 = uniform((2, 2, 3), -3, 3, np.float64), uniform((2, 4, 3), -3, 3, np.float64)
    emit("batch_matmul_f64", "nn.batch_matmul", [a64, b64], a64 @ np.swapaxes(b64, 1, 2))


# ---- per-channel elementwise --------------------------------------------------------------

def channel_shape(ndim, axis, channels):
    shape = [1] * ndim
    shape[axis] = channels
    return shape


def bias_add_cases():
    x = uniform((2, 3, 4, 2), -1, 1, np.float32)
    bias = uniform((3,), -1, 1, np.float32)
    emit("bias_add_f32_axis1", "nn.bias_add", [x, bias],
         (wide(x) + wide(bias).reshape(channel_shape(4, 1, 3))).astype(np.float32))
    x2, bias2 = uniform((4, 5), -1, 1, np.float32), uniform((5,), -1, 1, np.float32)
    emit("bias_add_f32_axis_neg1", "nn.bias_add", [x2, bias2], x2 + bias2, axis=-1)
    x3, bias3 = uniform((3, 2, 2), -1, 1, np.float64), uniform((3,), -1, 1, np.float64)
    emit("bias_add_f64_axis0", "nn.bias_add", [x3, bias3], x3 + bias3.reshape(3, 1, 1), axis=0)
    xi, biasi = integers((2, 4), -100, 100, np.int32), integers((4,), -100, 100, np.int32)
    emit("bias_add_i32_axis1", "nn.bias_add", [xi, biasi], xi + biasi)
    # Same rank and axis as bias_add_f32_axis1, other extents: the kernel has
    # symbolic dimensions.
    x4, bias4 = uniform((1, 5, 2, 3), -1, 1, np.float32), uniform((5,), -1, 1, np.float32)
    emit("bias_add_f32_axis1_other_shape", "nn.bias_add", [x4, bias4],
         (wide(x4) + wide(bias4).reshape(channel_shape(4, 1, 5))).astype(np.float32))


def prelu_cases():
    x = uniform((2, 3, 2, 2), -1, 1, np.float32)
    alpha = uniform((3,), 0, 0.5, np.float32)
    a = wide(alpha).reshape(channel_shape(4, 1, 3))
    emit("prelu_f32_axis1", "nn.prelu", [x, alpha],
         np.where(wide(x) > 0, wide(x), a * wide(x)).astype(np.float32))
    x_nhwc = uniform((2, 2, 2, 3), -1, 1, np.float32)
    emit("prelu_f32_axis3", "nn.prelu", [x_nhwc, alpha],
         np.where(wide(x_nhwc) > 0, wide(x_nhwc), wide(alpha) * wide(x_nhwc)).astype(np.float32),
         axis=3)


# ---- softmax ------------------------------------------------------------------------------

def softmax(x, axis):
    x = wide(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return np.exp(shifted) / np.exp(shifted).sum(axis=axis, keepdims=True)


def log_softmax(x, axis):
    x = wide(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def softmax_cases():
    x = uniform((3, 5), -3, 3, np.float32)
    x3 = uniform((2, 4, 3), -3, 3, np.float32)
    # Values whose exponentials overflow unless the maximum is subtracted.
    large = np.array([[1000, 999, 998], [-1000, -1001, -990]], np.float32)
    x64 = uniform((2, 6), -10, 10, np.float64)
    for operator, function in (("nn.softmax", softmax), ("nn.log_softmax", log_softmax)):
        prefix = operator[3:]
        emit(prefix + "_f32_axis_neg1", operator, [x], function(x, -1).astype(np.float32))
        emit(prefix + "_f32_axis0", operator, [x], function(x, 0).astype(np.float32), axis=0)
        emit(prefix + "_f32_rank3_axis1", operator, [x3], function(x3, 1).astype(np.float32),
             axis=1)
        emit(prefix + "_f32_large_values", operator, [large],
             function(large, -1).astype(np.float32))
        emit(prefix + "_f64", operator, [x64], function(x64, -1))
        x16 = uniform((2, 5), -2, 2, np.float16)
        emit(prefix + "_f16", operator, [x16], function(x16, -1).astype(np.float16))


# ---- normalisations -----------------------------------------------------------------------

def normalize(x, reduce_axes, gamma, beta, axis, epsilon, center, scale):
    x = wide(x)
    mean = x.mean(axis=reduce_axes, keepdims=True)
    variance = x.var(axis=reduce_axes, keepdims=True)
    out = (x - mean) / np.sqrt(variance + epsilon)
    shape = channel_shape(x.ndim, axis, x.shape[axis])
    if scale:
        out = out * wide(gamma).reshape(shape)
    if center:
        out = out + wide(beta).reshape(shape)
    return out


def norm_case(name, operator, x, axis, reduce_axes, epsilon=1e-5, center=True, scale=True,
              **extra):
    channels = x.shape[axis]
    gamma = uniform((channels,), 0.5, 1.5, x.dtype)
    beta = uniform((channels,), -0.5, 0.5, x.dtype)
    expected = normalize(x, reduce_axes, gamma, beta, axis, epsilon, center, scale)
    emit(name, operator, [x, gamma, beta], expected.astype(x.dtype), axis=axis, epsilon=epsilon,
         center=center, scale=scale, **extra)


def group_norm_expected(x, gamma, beta, groups, epsilon):
    x = wide(x)
    batch, channels = x.shape[0], x.shape[1]
    grouped = x.reshape((batch, groups, channels // groups) + x.shape[2:])
    axes = tuple(range(2, grouped.ndim))
    mean = grouped.mean(axis=axes, keepdims=True)
    variance = grouped.var(axis=axes, keepdims=True)
    out = ((grouped - mean) / np.sqrt(variance + epsilon)).reshape(x.shape)
    shape = channel_shape(x.ndim, 1, channels)
    return out * wide(gamma).reshape(shape) + wide(beta).reshape(shape)


def normalization_cases():
    x = uniform((3, 8), -2, 2, np.float32) + 1
    norm_case("layer_norm_f32_axis_neg1", "nn.layer_norm", x, 1, (1,))
    x3 = uniform((2, 4, 3), -2, 2, np.float32)
    norm_case("layer_norm_f32_axis1", "nn.layer_norm", x3, 1, (1,), epsilon=1e-3)
    norm_case("layer_norm_f32_no_center_scale", "nn.layer_norm", x, 1, (1,), center=False,
              scale=False)
    norm_case("layer_norm_f64", "nn.layer_norm", uniform((2, 5), -3, 3, np.float64), 1, (1,))
    x4 = uniform((2, 3, 4, 2), -2, 2, np.float32)
    norm_case("instance_norm_f32", "nn.instance_norm", x4, 1, (2, 3))
    x_nhwc = uniform((2, 4, 2, 3), -2, 2, np.float32)
    norm_case("instance_norm_f32_axis3", "nn.instance_norm", x_nhwc, 3, (1, 2))

    xg = uniform((2, 6, 3, 2), -2, 2, np.float32)
    gamma = uniform((6,), 0.5, 1.5, np.float32)
    beta = uniform((6,), -0.5, 0.5, np.float32)
    emit("group_norm_f32_3_groups", "nn.group_norm", [xg, gamma, beta],
         group_norm_expected(xg, gamma, beta, 3, 1e-5).astype(np.float32), num_groups=3)
    emit("group_norm_f32_1_group", "nn.group_norm", [xg, gamma, beta],
         group_norm_expected(xg, gamma, beta, 1, 1e-5).astype(np.float32), num_groups=1)


def batch_norm_expected(x, gamma, beta, mean, variance, axis, epsilon, center, scale):
    shape = channel_shape(x.ndim, axis, x.shape[axis])
    out = (wide(x) - wide(mean).reshape(shape)) / np.sqrt(wide(variance).reshape(shape) + epsilon)
    if scale:
        out = out * wide(gamma).reshape(shape)
    if center:
        out = out + wide(beta).reshape(shape)
    return out.astype(x.dtype)


def batch_norm_case(name, x, axis, epsilon=1e-5, center=True, scale=True):
    channels = x.shape[axis]
    gamma = uniform((channels,), 0.5, 1.5, x.dtype)
    beta = uniform((channels,), -0.5, 0.5, x.dtype)
    mean = uniform((channels,), -1, 1, x.dtype)
    variance = uniform((channels,), 0.1, 2, x.dtype)
    expected = batch_norm_expected(x, gamma, beta, mean, variance, axis, epsilon, center, scale)
    emit_tuple(name, "nn.batch_norm", [x, gamma, beta, mean, variance],
               [expected, mean, variance], axis=axis, epsilon=epsilon, center=center, scale=scale)


def batch_norm_cases():
    batch_norm_case("batch_norm_f32_nchw", uniform((2, 3, 4, 4), -2, 2, np.float32), 1)
    batch_norm_case("batch_norm_f32_nhwc", uniform((2, 3, 2, 4), -2, 2, np.float32), 3,
                    epsilon=1e-3)
    batch_norm_case("batch_norm_f32_no_scale", uniform((4, 3), -2, 2, np.float32), 1,
                    scale=False)
    batch_norm_case("batch_norm_f32_no_center", uniform((4, 3), -2, 2, np.float32), 1,
                    center=False)
    batch_norm_case("batch_norm_f64", uniform((3, 2, 2), -2, 2, np.float64), 1)


def other_cases():
    x = uniform((3, 4), -1, 1, np.float32)
    emit_tuple("dropout_f32", "nn.dropout", [x], [x, np.ones_like(x)], rate=0.5)
    x3 = uniform((2, 3, 4), -1, 1, np.float32)
    emit("batch_flatten_f32", "nn.batch_flatten", [x3], x3.reshape(2, 12))


# ---- dft and det (C++ kernels; here for their float tolerance and tuple results) ------------

def dft_case(name, shape, dtype, inverse=False):
    re, im = uniform(shape, -1, 1, dtype), uniform(shape, -1, 1, dtype)
    signal = wide(re) + 1j * wide(im)
    # numpy.fft.ifft divides by N, as dft's inverse does.
    result = np.fft.ifft(signal, axis=-1) if inverse else np.fft.fft(signal, axis=-1)
    emit_tuple(name, "dft", [re, im], [result.real.astype(dtype), result.imag.astype(dtype)],
               inverse=inverse)


def dft_cases():
    dft_case("dft_f32_radix2", (3, 8), np.float32)
    dft_case("dft_f32_length10_inverse", (2, 10), np.float32, inverse=True)
    dft_case("dft_f64_prime_length_rank3", (2, 3, 7), np.float64)
    dft_case("dft_f64_radix2_inverse", (2, 16), np.float64, inverse=True)
    dft_case("dft_f16", (4, 6), np.float16)
    dft_case("dft_f32_length1", (5, 1), np.float32)


def det_case(name, data):
    emit(name, "det", [data], np.linalg.det(wide(data)).astype(data.dtype))


def det_cases():
    det_case("det_f32_batch_3x3", uniform((2, 3, 3), -2, 2, np.float32))
    det_case("det_f64_4x4", uniform((4, 4), -2, 2, np.float64))
    # A zero first column's entry: the factorisation must pivot.
    det_case("det_f32_needs_pivot", np.array([[0, 1, 2], [3, 4, 5], [6, 7, 9]], np.float32))
    det_case("det_f32_singular", np.array([[1, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32))
    det_case("det_f32_1x1_batch", uniform((3, 1, 1), -2, 2, np.float32))
    # numpy.linalg.det of a 0 x 0 matrix is 1, the empty product.
    det_case("det_f32_empty_matrices", np.zeros((2, 0, 0), np.float32))


def main():
    writer.clear()
    dense_cases()
    matmul_cases()
    batch_matmul_cases()
    bias_add_cases()
    prelu_cases()
    softmax_cases()
    normalization_cases()
    batch_norm_cases()
    other_cases()
    dft_cases()
    det_cases()
    writer.write_index("generate_nn_cases.py", [
        "# CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]",
        "# Inputs: CASE.in<N>.npy; expected output: CASE.out.npy, or CASE.out<N>.npy per field",
        "# of a tuple result.",
    ])


if __name__ == "__main__":
    main()
