#!/usr/bin/python3
"""Generates tests/fixtures/contraction/: inputs and NumPy-computed expected
outputs for the contraction schedule (kernels/compute/contraction_schedule.h),
read by tests/kernels/contraction_schedule_test.cc.

The cases are dense, matmul, batch_matmul and conv2d calls large enough for
the schedule to take them (unlike the small cases of generate_nn_cases.py and
generate_conv_cases.py), with extents that are not multiples of the register
tile, so the clamped rows and the partial column panels are exercised, and
fused chains whose epilogue (bias_add, relu) runs when a tile is stored.

Run from anywhere (needs NumPy; Debian's python3-numpy will do):

    /usr/bin/python3 tests/kernels/generate_contraction_cases.py

Index format (cases.txt), one line per case:

    CASE OPERATORS INPUT_COUNT TOLERANCE [KEY=VALUE ...]

OPERATORS is one operator or a chain joined by '+' ("nn.dense+nn.bias_add+
nn.relu"): the first operator takes the first inputs it needs, each later one
takes the previous result and then the next inputs it needs. KEY=VALUE
attributes belong to the first operator; integer lists are comma-separated.
TOLERANCE bounds |actual - expected| <= TOLERANCE * max(1, |expected|).

NumPy is the oracle: products are computed in float64 and rounded once. The
kernels accumulate float32 in float32 (as BLAS does), hence the float32
tolerance of 1e-4 for reductions of up to a few hundred terms.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20261122

writer = FixtureWriter("contraction", SEED)
uniform = writer.uniform

TOLERANCE = {np.dtype(np.float16): 4e-3, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-10}
MAX_NDIM = 4
MAX_SIZE = 8000


def format_attribute(value):
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def emit(name, operators, inputs, expected, **attributes):
    expected = np.asarray(expected)
    writer.emit_tolerance_case(name, operators, inputs, expected, TOLERANCE[expected.dtype],
                               [(key, format_attribute(value)) for key, value in attributes.items()],
                               MAX_NDIM, MAX_SIZE)


def wide(array):
    return np.asarray(array, dtype=np.float64)


def dense_cases():
    data, weight = uniform((37, 70), -1, 1, np.float32), uniform((45, 70), -1, 1, np.float32)
    emit("dense_edges", "nn.dense", [data, weight], (wide(data) @ wide(weight).T).astype(np.float32))
    data3 = uniform((3, 13, 40), -1, 1, np.float32)
    weight50 = uniform((50, 40), -1, 1, np.float32)
    emit("dense_rank3", "nn.dense", [data3, weight50],
         (wide(data3) @ wide(weight50).T).astype(np.float32))
    data64, weight64 = uniform((40, 40), -2, 2, np.float64), uniform((24, 40), -2, 2, np.float64)
    emit("dense_f64", "nn.dense", [data64, weight64], wide(data64) @ wide(weight64).T)
    data16, weight16 = uniform((30, 40), -1, 1, np.float16), uniform((40, 40), -1, 1, np.float16)
    emit("dense_f16", "nn.dense", [data16, weight16],
         (wide(data16) @ wide(weight16).T).astype(np.float16))
    bias = uniform((45,), -1, 1, np.float32)
    emit("dense_bias_relu", "nn.dense+nn.bias_add+nn.relu", [data, weight, bias],
         np.maximum(wide(data) @ wide(weight).T + wide(bias), 0).astype(np.float32))


def matmul_cases():
    for transpose_a in (False, True):
        for transpose_b in (False, True):
            a = uniform((50, 33) if transpose_a else (33, 50), -1, 1, np.float32)
            b = uniform((40, 50) if transpose_b else (50, 40), -1, 1, np.float32)
            a_matrix = wide(a).T if transpose_a else wide(a)
            b_matrix = wide(b).T if transpose_b else wide(b)
            emit("matmul_ta%d_tb%d" % (transpose_a, transpose_b), "nn.matmul", [a, b],
                 (a_matrix @ b_matrix).astype(np.float32),
                 transpose_a=transpose_a, transpose_b=transpose_b)
    a3, b = uniform((2, 17, 30), -1, 1, np.float32), uniform((30, 36), -1, 1, np.float32)
    emit("matmul_rank3", "nn.matmul", [a3, b], (wide(a3) @ wide(b)).astype(np.float32))


def batch_matmul_cases():
    a, b = uniform((3, 20, 24), -1, 1, np.float32), uniform((3, 36, 24), -1, 1, np.float32)
    bt = np.swapaxes(wide(b), 1, 2)
    emit("batch_matmul_tb", "nn.batch_matmul", [a, b], (wide(a) @ bt).astype(np.float32))
    b_plain = uniform((3, 24, 36), -1, 1, np.float32)
    emit("batch_matmul_plain", "nn.batch_matmul", [a, b_plain],
         (wide(a) @ wide(b_plain)).astype(np.float32), transpose_b=False)
    a_t = uniform((3, 24, 20), -1, 1, np.float32)
    emit("batch_matmul_ta_tb", "nn.batch_matmul", [a_t, b],
         (np.swapaxes(wide(a_t), 1, 2) @ bt).astype(np.float32), transpose_a=True)
    a1 = uniform((1, 20, 24), -1, 1, np.float32)
    emit("batch_matmul_broadcast_a", "nn.batch_matmul", [a1, b], (wide(a1) @ bt).astype(np.float32))
    b1 = uniform((1, 36, 24), -1, 1, np.float32)
    emit("batch_matmul_broadcast_b", "nn.batch_matmul", [a, b1],
         (wide(a) @ np.swapaxes(wide(b1), 1, 2)).astype(np.float32))


def small_rows_cases():
    """Few rows (matrix-vector products) take the small-rows schedule: odd
    row, column and depth counts (1, 3, 7 rows; 7, 31, 257 columns; depths
    shorter than a vector, with a tail, and of whole vectors)."""
    for rows, columns, depth in [(1, 257, 31), (7, 31, 257), (1, 7, 257), (3, 257, 7),
                                 (2, 33, 64), (5, 31, 31)]:
        data = uniform((rows, depth), -1, 1, np.float32)
        weight = uniform((columns, depth), -1, 1, np.float32)
        emit("small_rows_dense_%dx%dx%d" % (rows, columns, depth), "nn.dense", [data, weight],
             (wide(data) @ wide(weight).T).astype(np.float32))
    # An epilogue whose broadcast indexes the one row by a constant (as an
    # LSTM step's fused dense + add + bias_add does).
    data, weight = uniform((1, 100), -1, 1, np.float32), uniform((60, 100), -1, 1, np.float32)
    other, bias = uniform((1, 60), -1, 1, np.float32), uniform((60,), -1, 1, np.float32)
    emit("small_rows_dense_add_bias", "nn.dense+add+nn.bias_add", [data, weight, other, bias],
         (wide(data) @ wide(weight).T + wide(other) + wide(bias)).astype(np.float32))
    # A batch of matrix-vector products (attention over one query).
    a, b = uniform((3, 1, 40), -1, 1, np.float32), uniform((3, 36, 40), -1, 1, np.float32)
    emit("small_rows_batch_matmul", "nn.batch_matmul", [a, b],
         (wide(a) @ np.swapaxes(wide(b), 1, 2)).astype(np.float32))
    # Rows spread over two axes of the data.
    data3 = uniform((2, 3, 50), -1, 1, np.float32)
    weight3 = uniform((40, 50), -1, 1, np.float32)
    emit("small_rows_dense_rank3", "nn.dense", [data3, weight3],
         (wide(data3) @ wide(weight3).T).astype(np.float32))


def depthwise_cases():
    """Depthwise convolutions take their own schedule (kernels/compute/
    depthwise_schedule.h): odd sizes, strides, asymmetric padding, dilation,
    a batch of two and a fused epilogue."""
    def depthwise_reference(data, weight, strides, padding, dilation):
        out = [conv2d_reference(data[:, c:c + 1], weight[c:c + 1], strides, padding, dilation)
               for c in range(data.shape[1])]
        return np.concatenate(out, axis=1)

    for name, data_shape, window, strides, padding, dilation in [
            ("depthwise_3x3_pad1", (1, 7, 31, 31), 3, (1, 1), (1, 1, 1, 1), (1, 1)),
            ("depthwise_stride2_batch2", (2, 5, 17, 13), 3, (2, 2), (1, 1, 1, 1), (1, 1)),
            ("depthwise_5x5_asymmetric", (1, 3, 12, 9), 5, (1, 2), (2, 1, 0, 3), (1, 1)),
            ("depthwise_dilation2_nopad", (1, 4, 11, 11), 3, (1, 1), (0, 0, 0, 0), (2, 2))]:
        data = uniform(data_shape, -1, 1, np.float32)
        weight = uniform((data_shape[1], 1, window, window), -1, 1, np.float32)
        emit(name, "nn.conv2d", [data, weight],
             depthwise_reference(wide(data), wide(weight), strides, padding,
                                 dilation).astype(np.float32),
             strides=strides, padding=padding, dilation=dilation, groups=data_shape[1])
    data = uniform((1, 6, 14, 14), -1, 1, np.float32)
    weight = uniform((6, 1, 3, 3), -1, 1, np.float32)
    bias = uniform((6,), -1, 1, np.float32)
    expected = depthwise_reference(wide(data), wide(weight), (1, 1), (1, 1, 1, 1), (1, 1))
    emit("depthwise_bias_relu", "nn.conv2d+nn.bias_add+nn.relu", [data, weight, bias],
         np.maximum(expected + wide(bias)[None, :, None, None], 0).astype(np.float32),
         padding=(1, 1, 1, 1), groups=6)


def conv2d_reference(data, weight, strides, padding, dilation):
    """NCHW data, OIHW weight, padding (top, left, bottom, right); in float64."""
    n_count, channels, height, width = data.shape
    out_channels, _, kernel_h, kernel_w = weight.shape
    top, left, bottom, right = padding
    sh, sw = strides
    dh, dw = dilation
    padded = np.zeros((n_count, channels, height + top + bottom, width + left + right))
    padded[:, :, top:top + height, left:left + width] = data
    out_h = (height + top + bottom - dh * (kernel_h - 1) - 1) // sh + 1
    out_w = (width + left + right - dw * (kernel_w - 1) - 1) // sw + 1
    out = np.zeros((n_count, out_channels, out_h, out_w))
    for ry in range(kernel_h):
        for rx in range(kernel_w):
            window = padded[:, :, ry * dh:ry * dh + sh * (out_h - 1) + 1:sh,
                            rx * dw:rx * dw + sw * (out_w - 1) + 1:sw]
            out += np.einsum("nchw,kc->nkhw", window, wide(weight[:, :, ry, rx]))
    return out


def conv_case(name, data_shape, weight_shape, strides=(1, 1), padding=(0, 0, 0, 0),
              dilation=(1, 1), dtype=np.float32, nhwc=False, chain=None, extra=(),
              operators="nn.conv2d+nn.bias_add+nn.relu"):
    data = uniform(data_shape, -1, 1, dtype)
    weight = uniform(weight_shape, -1, 1, dtype)
    expected = conv2d_reference(wide(data), wide(weight), strides, padding, dilation)
    attributes = dict(strides=strides, padding=padding, dilation=dilation)
    if chain is not None:
        expected = chain(expected)
    if nhwc:
        data, weight = data.transpose(0, 2, 3, 1), weight.transpose(2, 3, 1, 0)
        expected = expected.transpose(0, 2, 3, 1)
        attributes.update(data_layout="NHWC", kernel_layout="HWIO")
    if chain is None:
        operators = "nn.conv2d"
    emit(name, operators,
         [np.ascontiguousarray(data), np.ascontiguousarray(weight)] + list(extra),
         np.ascontiguousarray(expected).astype(dtype), **attributes)


def conv_cases():
    conv_case("conv_3x3_pad1", (1, 8, 12, 12), (32, 8, 3, 3), padding=(1, 1, 1, 1))
    conv_case("conv_stride2_dilation2", (2, 6, 13, 11), (20, 6, 3, 3), strides=(2, 2),
              padding=(1, 0, 2, 1), dilation=(2, 2))
    conv_case("conv_1x1_batch2", (2, 16, 7, 7), (40, 16, 1, 1))
    conv_case("conv_nhwc_hwio", (1, 8, 10, 10), (24, 8, 3, 3), padding=(1, 1, 1, 1), nhwc=True)
    conv_case("conv_f64", (1, 4, 8, 8), (16, 4, 3, 3), padding=(1, 1, 1, 1), dtype=np.float64)
    bias = uniform((32,), -1, 1, np.float32)
    conv_case("conv_bias_relu", (1, 8, 12, 12), (32, 8, 3, 3), padding=(1, 1, 1, 1),
              chain=lambda out: np.maximum(out + wide(bias)[None, :, None, None], 0),
              extra=[bias])


def conv_transpose_cases():
    # The transposed convolution's window test (a strided grid) makes its
    # data operand a packed one, like a padded convolution's.
    from generate_conv_cases import conv2d_transpose_reference  # noqa: E402
    data = uniform((1, 8, 6, 6), -1, 1, np.float32)
    weight = uniform((8, 16, 3, 3), -1, 1, np.float32)
    expected = conv2d_transpose_reference(wide(data), wide(weight), (2, 2), (1, 1), (1, 1), (0, 0),
                                          1)
    emit("conv_transpose_stride2", "nn.conv2d_transpose", [data, weight],
         expected.astype(np.float32), strides=(2, 2), padding=(1, 1, 1, 1))


def conv_in_place_cases():
    """Convolutions whose data needs no packing (written after the others,
    so that their random inputs do not shift the earlier cases')."""
    # Unpadded: the data is read in place along (channel, row, column) loops;
    # 29 output channels are the columns (a panel and a part, even with
    # AVX-512's 32-float tiles).
    conv_case("conv_3x3_unpadded", (1, 5, 11, 10), (29, 5, 3, 3))
    # 1x1 at stride 1: the output pixels (oh, ow) are the columns, flattened
    # (117 of them: panels of 16 or 32 and a part, which reads the last full
    # panel's worth and stores its new columns); 30 output channels as rows
    # (5 blocks of 6: pixels tile no worse than channels would).
    conv_case("conv_1x1_pixel_columns", (1, 24, 13, 9), (30, 24, 1, 1))
    # ... with an epilogue reading a residual along the same pixels.
    bias30 = uniform((30,), -1, 1, np.float32)
    residual = uniform((1, 30, 13, 9), -1, 1, np.float32)
    conv_case("conv_1x1_bias_residual", (1, 24, 13, 9), (30, 24, 1, 1),
              chain=lambda out: out + wide(bias30)[None, :, None, None] + wide(residual),
              extra=[bias30, residual], operators="nn.conv2d+nn.bias_add+add")


def strided_cases():
    """Stride-2 layers (written after the others, so that their random
    inputs do not shift the earlier cases')."""
    # A 1x1 convolution at stride 2: its output pixels (13 x 9, not read
    # contiguously) are the columns, packed; 31 output channels as rows; the
    # epilogue of a residual block's downsample (bias, residual, relu).
    bias31 = uniform((31,), -1, 1, np.float32)
    residual = uniform((1, 31, 13, 9), -1, 1, np.float32)
    conv_case("conv_1x1_stride2_residual", (1, 16, 26, 18), (31, 16, 1, 1), strides=(2, 2),
              chain=lambda out: np.maximum(
                  out + wide(bias31)[None, :, None, None] + wide(residual), 0),
              extra=[bias31, residual], operators="nn.conv2d+nn.bias_add+add+nn.relu")
    # Depthwise at stride 2 with an even left padding (data column 2 m at an
    # even padded column) and an odd width (a last column without a pair);
    # the cases above have a left padding of 1.
    data = uniform((1, 3, 9, 37), -1, 1, np.float32)
    weight = uniform((3, 1, 3, 3), -1, 1, np.float32)
    expected = np.concatenate(
        [conv2d_reference(wide(data[:, c:c + 1]), wide(weight[c:c + 1]), (2, 2), (1, 2, 0, 1),
                          (1, 1)) for c in range(3)], axis=1)
    emit("depthwise_stride2_even_left", "nn.conv2d", [data, weight], expected.astype(np.float32),
         strides=(2, 2), padding=(1, 2, 0, 1), dilation=(1, 1), groups=3)
    # A 3-channel stem-like convolution at stride 2 (75 k): each output
    # row's 41 pixels are columns, in panels each task packs just before
    # computing them (the second a tile half as wide), and the output
    # channels rows; with a bias and relu epilogue.
    bias10 = uniform((10,), -1, 1, np.float32)
    conv_case("conv_stride2_window_panels", (1, 3, 21, 85), (10, 3, 5, 5), strides=(2, 2),
              chain=lambda out: np.maximum(out + wide(bias10)[None, :, None, None], 0),
              extra=[bias10])


def main():
    writer.clear()
    dense_cases()
    matmul_cases()
    batch_matmul_cases()
    conv_cases()
    conv_transpose_cases()
    small_rows_cases()  # last: earlier cases keep their random inputs
    depthwise_cases()
    # More rows than the small-rows schedule takes: the packed schedule with
    # the data read in place, and a fused epilogue.
    data, weight = uniform((70, 40), -1, 1, np.float32), uniform((45, 40), -1, 1, np.float32)
    bias = uniform((45,), -1, 1, np.float32)
    emit("packed_dense_bias_relu", "nn.dense+nn.bias_add+nn.relu", [data, weight, bias],
         np.maximum(wide(data) @ wide(weight).T + wide(bias), 0).astype(np.float32))
    conv_in_place_cases()  # after the others, which keep their random inputs
    strided_cases()  # likewise
    writer.write_index("generate_contraction_cases.py", [
        "# CASE OPERATORS INPUT_COUNT TOLERANCE [KEY=VALUE ...]",
        "# Inputs: CASE.in<N>.npy; expected output: CASE.out.npy.",
    ])


if __name__ == "__main__":
    main()
