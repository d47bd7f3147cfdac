#!/usr/bin/python3
"""Generates tests/fixtures/conv/: inputs and NumPy-computed expected outputs
of nn.conv2d, the 2-D pools, image.resize2d, nn.upsampling and
image.grid_sample, read by tests/kernels/conv_kernels_test.cc.

Run from anywhere (needs NumPy, and PyTorch for grid_sample's oracle;
Debian's python3-numpy and python3-torch will do):

    /usr/bin/python3 tests/kernels/generate_conv_cases.py

The output is deterministic (fixed seed, fixed case list).

For every case it writes CASE.in0.npy (and CASE.in1.npy, conv2d's weight),
CASE.out.npy and one line of cases.txt:

    CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]

TOLERANCE bounds |actual - expected| <= TOLERANCE * max(1, |expected|) for
floating-point outputs; integer outputs match exactly. Attributes: strides,
padding, dilation, pool_size, output_size and size are comma-separated
integers; groups is an integer; scale_h and scale_w are numbers; ceil_mode,
count_include_pad and align_corners are true or false; the rest are strings.

The oracle is a direct NumPy implementation of TVM's semantics, written
independently of the kernels (plain loops over output elements):
- padding (top, left, bottom, right) is zeros for conv2d and is excluded
  from max pooling;
- avg_pool2d divides by the window's elements inside the input, or with
  count_include_pad by those inside the padded input (not the extra border
  ceil_mode adds); ceil_mode rounds the output extent up;
- adaptive pools cover [floor(i * in / out), ceil((i + 1) * in / out));
- resize2d follows topi.image.resize: coordinate modes half_pixel,
  align_corners, asymmetric, pytorch_half_pixel, tf_half_pixel_for_nn;
  nearest rounding "" (round for align_corners, else floor), round (half to
  even), floor (+1e-5), ceil (-1e-5), round_prefer_floor/ceil; indices clamp
  to the input; linear interpolates the four clamped neighbours.
"""

import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20241123

writer = FixtureWriter("conv", SEED)
uniform = writer.uniform
integers = writer.integers

TOLERANCE = {np.float16: 2e-3, np.float32: 1e-5, np.float64: 1e-12}


def format_attribute(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(int(item)) for item in value)
    return str(value)


def emit(name, operator, inputs, expected, attributes):
    expected = np.asarray(expected)
    tolerance = TOLERANCE.get(expected.dtype.type, 0)
    writer.emit_tolerance_case(name, operator, inputs, expected, tolerance,
                               [(key, format_attribute(value)) for key, value in attributes],
                               max_ndim=4, max_size=300)


def pad4(padding):
    if len(padding) == 1:
        return [padding[0]] * 4
    if len(padding) == 2:
        return [padding[0], padding[1], padding[0], padding[1]]
    return list(padding)


def pair(values):
    return (values[0], values[-1])


def window_extent(size, pad_total, kernel, dilation, stride, ceil_mode):
    span = size + pad_total - (dilation * (kernel - 1) + 1)
    if ceil_mode:
        return -(-span // stride) + 1
    return span // stride + 1


# ---- conv2d ------------------------------------------------------------------------------

def conv2d_reference(data, weight, strides, padding, dilation, groups, out_dtype):
    """NCHW data, OIHW weight; accumulates in float64 (or int64 for integers)."""
    n_count, channels, height, width = data.shape
    out_channels, per_group, kernel_h, kernel_w = weight.shape
    top, left, bottom, right = pad4(padding)
    sh, sw = pair(strides)
    dh, dw = pair(dilation)
    wide = np.float64 if data.dtype.kind == "f" else np.int64
    padded = np.zeros((n_count, channels, height + top + bottom, width + left + right), wide)
    padded[:, :, top:top + height, left:left + width] = data
    out_h = window_extent(height, top + bottom, kernel_h, dh, sh, False)
    out_w = window_extent(width, left + right, kernel_w, dw, sw, False)
    out = np.zeros((n_count, out_channels, out_h, out_w), wide)
    out_per_group = out_channels // groups
    for k in range(out_channels):
        base = (k // out_per_group) * per_group
        for y in range(out_h):
            for x in range(out_w):
                window = padded[:, base:base + per_group,
                                y * sh:y * sh + dh * (kernel_h - 1) + 1:dh,
                                x * sw:x * sw + dw * (kernel_w - 1) + 1:dw]
                out[:, k, y, x] = np.sum(window * weight[k].astype(wide), axis=(1, 2, 3))
    return out.astype(out_dtype)


def conv_case(name, data_shape, weight_shape, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
              groups=1, dtype=np.float32, out_dtype=None, layouts=None):
    if np.dtype(dtype).kind == "f":
        data = uniform(data_shape, -1, 1, dtype)
        weight = uniform(weight_shape, -1, 1, dtype)
    else:
        data = integers(data_shape, -100, 100, dtype)
        weight = integers(weight_shape, -100, 100, dtype)
    expected = conv2d_reference(data, weight, strides, padding, dilation, groups,
                                out_dtype or dtype)
    attributes = [("strides", strides), ("padding", padding), ("dilation", dilation),
                  ("groups", groups)]
    if out_dtype is not None:
        attributes.append(("out_dtype", np.dtype(out_dtype).name))
    if layouts == "NHWC":
        data, weight = data.transpose(0, 2, 3, 1), weight.transpose(2, 3, 1, 0)
        expected = expected.transpose(0, 2, 3, 1)
        attributes += [("data_layout", "NHWC"), ("kernel_layout", "HWIO")]
    emit(name, "nn.conv2d", [np.ascontiguousarray(data), np.ascontiguousarray(weight)],
         np.ascontiguousarray(expected), attributes)


def conv_cases():
    conv_case("conv_basic", (1, 2, 5, 5), (3, 2, 3, 3))
    conv_case("conv_batch2_1x1", (2, 3, 3, 4), (2, 3, 1, 1))
    conv_case("conv_stride2_pad1", (1, 2, 6, 7), (2, 2, 3, 3), strides=(2, 2), padding=(1, 1))
    conv_case("conv_pad_asymmetric", (1, 1, 5, 4), (2, 1, 3, 2), padding=(2, 0, 1, 3))
    conv_case("conv_pad_one_value", (1, 2, 4, 4), (2, 2, 3, 3), padding=(1,))
    conv_case("conv_dilation2", (1, 2, 7, 7), (2, 2, 3, 3), dilation=(2, 2), padding=(1, 2))
    conv_case("conv_strides_21", (1, 1, 7, 6), (2, 1, 2, 3), strides=(2, 1), dilation=(1, 2))
    conv_case("conv_groups2", (1, 4, 5, 5), (6, 2, 3, 3), groups=2, padding=(1, 1))
    conv_case("conv_depthwise", (1, 3, 5, 5), (3, 1, 3, 3), groups=3, padding=(1, 1),
              strides=(2, 2))
    conv_case("conv_depthwise_multiplier2", (1, 2, 4, 4), (4, 1, 2, 2), groups=2)
    conv_case("conv_f64", (1, 2, 4, 4), (2, 2, 2, 2), dtype=np.float64, padding=(1, 1))
    conv_case("conv_i8_to_i32", (1, 2, 4, 4), (2, 2, 3, 3), dtype=np.int8, out_dtype=np.int32,
              padding=(1, 1))
    conv_case("conv_nhwc_hwio", (1, 2, 5, 5), (3, 2, 3, 3), padding=(1, 1), strides=(2, 2),
              layouts="NHWC")


# ---- pools -------------------------------------------------------------------------------

def pool_reference(data, kind, pool_size, strides, padding, dilation, ceil_mode,
                   count_include_pad):
    n_count, channels, height, width = data.shape
    top, left, bottom, right = pad4(padding)
    kh, kw = pair(pool_size)
    sh, sw = pair(strides)
    dh, dw = pair(dilation)
    out_h = window_extent(height, top + bottom, kh, dh, sh, ceil_mode)
    out_w = window_extent(width, left + right, kw, dw, sw, ceil_mode)
    out = np.zeros((n_count, channels, out_h, out_w), np.float64)
    for y in range(out_h):
        for x in range(out_w):
            rows = [y * sh - top + dh * i for i in range(kh)]
            columns = [x * sw - left + dw * j for j in range(kw)]
            inside_rows = [r for r in rows if 0 <= r < height]
            inside_columns = [c for c in columns if 0 <= c < width]
            window = data[:, :, inside_rows][:, :, :, inside_columns].astype(np.float64)
            if kind == "max":
                out[:, :, y, x] = window.max(axis=(2, 3))
                continue
            if count_include_pad:
                count = (len([r for r in rows if -top <= r < height + bottom]) *
                         len([c for c in columns if -left <= c < width + right]))
            else:
                count = len(inside_rows) * len(inside_columns)
            out[:, :, y, x] = window.sum(axis=(2, 3)) / max(count, 1)
    return out.astype(data.dtype)


def pool_case(name, kind, shape, pool_size, strides=(1, 1), padding=(0, 0), dilation=(1, 1),
              ceil_mode=False, count_include_pad=None, dtype=np.float32, layout=None):
    if np.dtype(dtype).kind == "f":
        data = uniform(shape, -5, 5, dtype)
    else:
        data = integers(shape, -100, 100, dtype)
    expected = pool_reference(data, kind, pool_size, strides, padding, dilation, ceil_mode,
                              bool(count_include_pad))
    attributes = [("pool_size", pool_size), ("strides", strides), ("padding", padding),
                  ("dilation", dilation), ("ceil_mode", ceil_mode)]
    if count_include_pad is not None:
        attributes.append(("count_include_pad", count_include_pad))
    if layout == "NHWC":
        data, expected = data.transpose(0, 2, 3, 1), expected.transpose(0, 2, 3, 1)
        attributes.append(("layout", "NHWC"))
    emit(name, "nn.%s_pool2d" % kind, [np.ascontiguousarray(data)],
         np.ascontiguousarray(expected), attributes)


def pool_cases():
    pool_case("max_pool_2x2", "max", (1, 2, 4, 6), (2, 2), strides=(2, 2))
    pool_case("max_pool_3x3_pad1", "max", (1, 2, 5, 5), (3, 3), strides=(2, 2), padding=(1, 1))
    pool_case("max_pool_ceil_mode", "max", (1, 1, 5, 6), (2, 2), strides=(2, 2), ceil_mode=True)
    pool_case("max_pool_dilation2", "max", (1, 1, 7, 7), (2, 3), dilation=(2, 2),
              padding=(1, 0, 0, 2))
    pool_case("max_pool_negative_values", "max", (1, 1, 4, 4), (3, 3), padding=(1, 1))
    pool_case("max_pool_i32", "max", (1, 2, 4, 4), (2, 2), strides=(2, 2), padding=(1, 1),
              dtype=np.int32)
    pool_case("max_pool_f16", "max", (1, 1, 4, 4), (2, 2), dtype=np.float16)
    pool_case("max_pool_nhwc", "max", (1, 3, 4, 5), (2, 2), strides=(1, 2), layout="NHWC")
    pool_case("avg_pool_2x2", "avg", (1, 2, 4, 4), (2, 2), strides=(2, 2))
    pool_case("avg_pool_pad_exclude", "avg", (1, 2, 5, 5), (3, 3), strides=(2, 2),
              padding=(1, 1), count_include_pad=False)
    pool_case("avg_pool_pad_include", "avg", (1, 2, 5, 5), (3, 3), strides=(2, 2),
              padding=(1, 1), count_include_pad=True)
    pool_case("avg_pool_ceil_include", "avg", (1, 1, 6, 6), (3, 3), strides=(2, 2),
              padding=(1, 1), ceil_mode=True, count_include_pad=True)
    pool_case("avg_pool_ceil_exclude", "avg", (1, 1, 6, 6), (3, 3), strides=(2, 2),
              padding=(1, 1), ceil_mode=True, count_include_pad=False)
    pool_case("avg_pool_pad_asymmetric", "avg", (1, 1, 5, 5), (2, 3), padding=(0, 1, 2, 1),
              count_include_pad=True)
    pool_case("avg_pool_dilation2", "avg", (1, 1, 7, 6), (2, 2), dilation=(2, 2),
              padding=(1, 1), count_include_pad=False)
    pool_case("avg_pool_f64", "avg", (1, 2, 4, 4), (3, 3), padding=(1, 1), dtype=np.float64)


def adaptive_reference(data, kind, out_h, out_w):
    n_count, channels, height, width = data.shape
    out = np.zeros((n_count, channels, out_h, out_w), np.float64)
    for y in range(out_h):
        for x in range(out_w):
            y0, y1 = (y * height) // out_h, -(-((y + 1) * height) // out_h)
            x0, x1 = (x * width) // out_w, -(-((x + 1) * width) // out_w)
            window = data[:, :, y0:y1, x0:x1].astype(np.float64)
            out[:, :, y, x] = window.max(axis=(2, 3)) if kind == "max" else window.mean(
                axis=(2, 3))
    return out.astype(data.dtype)


def adaptive_cases():
    x = uniform((2, 3, 4, 5), -3, 3, np.float32)
    emit("global_avg_pool", "nn.global_avg_pool2d", [x], adaptive_reference(x, "avg", 1, 1), [])
    emit("global_max_pool", "nn.global_max_pool2d", [x], adaptive_reference(x, "max", 1, 1), [])
    x_nhwc = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    emit("global_avg_pool_nhwc", "nn.global_avg_pool2d", [x_nhwc],
         adaptive_reference(x, "avg", 1, 1).transpose(0, 2, 3, 1), [("layout", "NHWC")])
    y = uniform((1, 2, 7, 5), -3, 3, np.float32)
    emit("adaptive_avg_pool_3x2", "nn.adaptive_avg_pool2d", [y], adaptive_reference(y, "avg", 3, 2),
         [("output_size", (3, 2))])
    emit("adaptive_avg_pool_upsample", "nn.adaptive_avg_pool2d", [y],
         adaptive_reference(y, "avg", 9, 6), [("output_size", (9, 6))])
    emit("adaptive_avg_pool_one_value", "nn.adaptive_avg_pool2d", [y],
         adaptive_reference(y, "avg", 4, 4), [("output_size", (4,))])
    emit("adaptive_avg_pool_same_size", "nn.adaptive_avg_pool2d", [y],
         adaptive_reference(y, "avg", 7, 5), [])
    emit("adaptive_max_pool_3x2", "nn.adaptive_max_pool2d", [y], adaptive_reference(y, "max", 3, 2),
         [("output_size", (3, 2))])
    z = uniform((1, 1, 6, 6), -3, 3, np.float64)
    emit("adaptive_avg_pool_f64", "nn.adaptive_avg_pool2d", [z], adaptive_reference(z, "avg", 4, 3),
         [("output_size", (4, 3))])


# ---- resize2d ----------------------------------------------------------------------------

def input_coordinate(index, size_in, size_out, mode):
    scale = size_in / size_out
    if mode == "align_corners":
        return (size_in - 1) / (size_out - 1) * index if size_out > 1 else 0.0
    if mode == "asymmetric":
        return index * scale
    if mode == "tf_half_pixel_for_nn":
        return (index + 0.5) * scale
    if mode == "pytorch_half_pixel" and size_out <= 1:
        return 0.0
    return (index + 0.5) * scale - 0.5


def nearest(coordinate, rounding, mode):
    if rounding == "":
        rounding = "round" if mode in ("align_corners", "tf_half_pixel_for_nn") else "floor"
    if rounding == "round":
        return int(np.round(coordinate))  # half to even
    if rounding == "round_prefer_floor":
        return math.ceil(coordinate - 0.5)
    if rounding == "round_prefer_ceil":
        return math.floor(coordinate + 0.5)
    if rounding == "ceil":
        return math.ceil(coordinate - 1e-5)
    return math.floor(coordinate + 1e-5)


def resize_reference(data, size, method, mode, rounding):
    n_count, channels, height, width = data.shape
    out_h, out_w = size
    out = np.zeros((n_count, channels, out_h, out_w), np.float64)

    def pixel(row, column):
        row = min(max(row, 0), height - 1)
        column = min(max(column, 0), width - 1)
        return data[:, :, row, column].astype(np.float64)

    for y in range(out_h):
        for x in range(out_w):
            in_y = input_coordinate(y, height, out_h, mode)
            in_x = input_coordinate(x, width, out_w, mode)
            if method == "nearest_neighbor":
                out[:, :, y, x] = pixel(nearest(in_y, rounding, mode),
                                        nearest(in_x, rounding, mode))
                continue
            y0, x0 = math.floor(in_y), math.floor(in_x)
            fy, fx = in_y - y0, in_x - x0
            top = pixel(y0, x0) * (1 - fx) + pixel(y0, x0 + 1) * fx
            bottom = pixel(y0 + 1, x0) * (1 - fx) + pixel(y0 + 1, x0 + 1) * fx
            out[:, :, y, x] = top * (1 - fy) + bottom * fy
    return out.astype(data.dtype)


def resize_case(name, shape, size, method, mode, rounding="", dtype=np.float32, layout=None):
    if np.dtype(dtype).kind == "f":
        data = uniform(shape, -2, 2, dtype)
    else:
        data = integers(shape, -100, 100, dtype)
    expected = resize_reference(data, size, method, mode, rounding)
    attributes = [("size", size), ("method", method), ("coordinate_transformation_mode", mode)]
    if rounding:
        attributes.append(("rounding_method", rounding))
    if layout == "NHWC":
        data, expected = data.transpose(0, 2, 3, 1), expected.transpose(0, 2, 3, 1)
        attributes.append(("layout", "NHWC"))
    emit(name, "image.resize2d", [np.ascontiguousarray(data)], np.ascontiguousarray(expected),
         attributes)


def resize_cases():
    resize_case("resize_linear_half_pixel_up", (1, 2, 3, 4), (5, 7), "linear", "half_pixel")
    resize_case("resize_linear_half_pixel_down", (1, 1, 6, 5), (4, 2), "linear", "half_pixel")
    resize_case("resize_linear_align_corners", (1, 2, 3, 3), (5, 4), "linear", "align_corners")
    resize_case("resize_bilinear_asymmetric", (1, 1, 4, 3), (6, 5), "bilinear", "asymmetric")
    resize_case("resize_linear_pytorch_half_pixel", (1, 1, 3, 4), (1, 6), "linear",
                "pytorch_half_pixel")
    resize_case("resize_linear_f64_nhwc", (1, 3, 4, 2), (3, 5), "linear", "half_pixel",
                dtype=np.float64, layout="NHWC")
    resize_case("resize_nearest_asymmetric", (1, 2, 3, 4), (6, 7), "nearest_neighbor",
                "asymmetric")
    resize_case("resize_nearest_half_pixel_round", (1, 1, 4, 5), (7, 3), "nearest_neighbor",
                "half_pixel", rounding="round")
    resize_case("resize_nearest_half_pixel_floor", (1, 1, 4, 5), (7, 3), "nearest_neighbor",
                "half_pixel", rounding="floor")
    resize_case("resize_nearest_align_corners", (1, 1, 4, 3), (7, 6), "nearest_neighbor",
                "align_corners")
    resize_case("resize_nearest_prefer_ceil", (1, 1, 3, 3), (5, 7), "nearest_neighbor",
                "half_pixel", rounding="round_prefer_ceil")
    resize_case("resize_nearest_i32", (1, 2, 3, 3), (4, 5), "nearest_neighbor", "asymmetric",
                dtype=np.int32)


# ---- nn.upsampling ---------------------------------------------------------------------------

def upsampling_case(name, shape, scale_h, scale_w, method, align_corners=False):
    data = uniform(shape, -2, 2, np.float32)
    # Rounded half away from zero, as TVM's (Python's round goes to even).
    size = (int(np.floor(shape[2] * scale_h + 0.5)), int(np.floor(shape[3] * scale_w + 0.5)))
    if method == "nearest_neighbor" and not align_corners and scale_h == int(scale_h) and \
            scale_w == int(scale_w):
        # Each pixel repeated scale times along each axis.
        expected = np.repeat(np.repeat(data, int(scale_h), axis=2), int(scale_w), axis=3)
    elif method == "nearest_neighbor":
        expected = resize_reference(data, size, method,
                                    "align_corners" if align_corners else "asymmetric", "")
    else:
        expected = resize_reference(data, size, "linear",
                                    "align_corners" if align_corners else "half_pixel", "")
    emit(name, "nn.upsampling", [data], expected,
         [("scale_h", scale_h), ("scale_w", scale_w), ("method", method),
          ("align_corners", align_corners)])


def upsampling_cases():
    upsampling_case("upsampling_nearest_2x", (1, 2, 3, 4), 2.0, 2.0, "nearest_neighbor")
    upsampling_case("upsampling_nearest_3x2", (2, 1, 2, 3), 3.0, 2.0, "nearest_neighbor")
    upsampling_case("upsampling_nearest_half", (1, 1, 6, 4), 0.5, 0.5, "nearest_neighbor")
    upsampling_case("upsampling_bilinear_2x", (1, 2, 3, 4), 2.0, 2.0, "bilinear")
    upsampling_case("upsampling_bilinear_align_corners", (1, 1, 3, 3), 2.0, 1.5, "bilinear",
                    align_corners=True)


# ---- image.grid_sample -----------------------------------------------------------------------

def grid_sample_cases():
    # PyTorch's grid_sample is the oracle here (ONNX's GridSample follows it).
    import torch
    import torch.nn.functional as functional

    def case(name, data_shape, grid_hw, method, padding, align_corners):
        data = uniform(data_shape, -2, 2, np.float32)
        # Positions reaching past [-1, 1], so the padding mode matters.
        grid = uniform((data_shape[0], grid_hw[0], grid_hw[1], 2), -1.4, 1.4, np.float32)
        expected = functional.grid_sample(
            torch.from_numpy(data), torch.from_numpy(grid), mode=method, padding_mode=padding,
            align_corners=align_corners).numpy()
        emit(name, "image.grid_sample", [data, grid], expected,
             [("method", method), ("padding_mode", padding), ("align_corners", align_corners)])

    case("grid_sample_bilinear_zeros", (2, 3, 4, 5), (3, 4), "bilinear", "zeros", False)
    case("grid_sample_bilinear_reflection", (1, 2, 5, 4), (4, 4), "bilinear", "reflection", False)
    case("grid_sample_nearest_border", (1, 2, 4, 4), (5, 3), "nearest", "border", False)
    case("grid_sample_nearest_zeros_align", (1, 1, 3, 5), (4, 4), "nearest", "zeros", True)
    case("grid_sample_bicubic_reflection_align", (1, 2, 5, 5), (3, 4), "bicubic", "reflection",
         True)
    case("grid_sample_bicubic_zeros", (2, 1, 4, 6), (3, 3), "bicubic", "zeros", False)
    # Not bicubic with border padding: there ONNX Runtime (whose semantics
    # relay-vm follows) clamps the position before taking the 4x4 taps,
    # PyTorch clamps each tap, and the two differ near the border.


# ---- conv2d_transpose ----------------------------------------------------------------------

def conv2d_transpose_reference(data, weight, strides, padding, dilation, output_padding, groups):
    """NCHW data, IOHW weight (in, out / groups, kh, kw), in float64: each input
    element scatters data * weight over the output window it reaches, on a canvas
    that is then cropped by the padding."""
    n_count, channels, height, width = data.shape
    _, per_group, kernel_h, kernel_w = weight.shape
    top, left, bottom, right = pad4(padding)
    sh, sw = pair(strides)
    dh, dw = pair(dilation)
    oph, opw = pair(output_padding)
    out_h = (height - 1) * sh - top - bottom + dh * (kernel_h - 1) + oph + 1
    out_w = (width - 1) * sw - left - right + dw * (kernel_w - 1) + opw + 1
    canvas = np.zeros((n_count, per_group * groups, top + out_h + bottom + sh + dh * kernel_h,
                       left + out_w + right + sw + dw * kernel_w))
    in_per_group = channels // groups
    for channel in range(channels):
        group = channel // in_per_group
        for y in range(height):
            for x in range(width):
                for ky in range(kernel_h):
                    for kx in range(kernel_w):
                        canvas[:, group * per_group:(group + 1) * per_group,
                               y * sh + ky * dh, x * sw + kx * dw] += (
                            data[:, channel, y, x][:, None] * weight[channel, :, ky, kx][None, :])
    return canvas[:, :, top:top + out_h, left:left + out_w]


def conv_transpose_case(name, data_shape, weight_shape, strides=(1, 1), padding=(0, 0),
                        dilation=(1, 1), output_padding=(0, 0), groups=1):
    data = uniform(data_shape, -1, 1, np.float32)
    weight = uniform(weight_shape, -1, 1, np.float32)
    expected = conv2d_transpose_reference(data.astype(np.float64), weight.astype(np.float64),
                                          strides, padding, dilation, output_padding, groups)
    emit(name, "nn.conv2d_transpose", [data, weight], expected.astype(np.float32),
         [("strides", strides), ("padding", padding), ("dilation", dilation),
          ("output_padding", output_padding), ("groups", groups)])


def conv_transpose_cases():
    conv_transpose_case("conv_transpose_basic", (1, 2, 3, 3), (2, 3, 3, 3))
    conv_transpose_case("conv_transpose_stride2_pad1", (2, 2, 3, 4), (2, 2, 3, 3), strides=(2, 2),
                        padding=(1, 1))
    conv_transpose_case("conv_transpose_output_padding", (1, 1, 3, 3), (1, 2, 3, 3),
                        strides=(2, 2), padding=(1, 1), output_padding=(1, 1))
    conv_transpose_case("conv_transpose_dilation_asymmetric", (1, 2, 4, 3), (2, 1, 2, 3),
                        strides=(1, 2), padding=(0, 1, 1, 0), dilation=(2, 1))
    conv_transpose_case("conv_transpose_groups2", (1, 4, 3, 3), (4, 1, 2, 2), strides=(2, 2),
                        groups=2)


def main():
    writer.clear()
    conv_cases()
    pool_cases()
    adaptive_cases()
    resize_cases()
    conv_transpose_cases()
    upsampling_cases()
    grid_sample_cases()
    writer.write_index("generate_conv_cases.py", [
        "# CASE OPERATOR INPUT_COUNT TOLERANCE [KEY=VALUE ...]",
        "# Integer lists are comma-separated; see generate_conv_cases.py for the semantics.",
    ])


if __name__ == "__main__":
    main()
