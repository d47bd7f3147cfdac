#!/usr/bin/python3
"""Generates tests/fixtures/transform/: inputs and NumPy-computed expected
outputs of Relay's injective data-movement operators (reshape, transpose,
strided_slice, take, concatenate, nn.pad, ...) and of its search and scan
operators (topk, argsort, sort, cumsum, cumprod, argwhere), read by
tests/kernels/transform_kernels_test.cc.

Run from anywhere (needs NumPy):

    /usr/bin/python3 tests/kernels/generate_transform_cases.py

The output is deterministic (fixed seed, fixed case list).

For every case it writes CASE.in0.npy, CASE.in1.npy, ... and CASE.out.npy, and
one line of cases.txt:

    CASE OPERATOR INPUTS OUTPUTS [KEY=VALUE ...]

INPUTS is N (N tensor inputs) or tupleN (one tuple input of N fields, as
concatenate and stack take). OUTPUTS is 1 (one tensor, CASE.out.npy) or
tupleN (a tuple result, as split's: CASE.out0.npy ... CASE.out<N-1>.npy). Outputs must match bit for bit: the operators
only move data (the scans add numbers every order adds exactly). A VALUE is
- an integer, or a word (mode names, dtype names);
- a list of integers, written with commas: `1,0,2`; a one-element list keeps
  a trailing comma (`1,`); `[]` is the empty list;
- a list of integer pairs (nn.pad's pad_width): `1:2,0:0` (one pair: `1:2,`).

NumPy is the oracle; where Relay's spelling differs from NumPy's the
expectation is built with the NumPy equivalent:
- reshape's special values (0 copies, -2 copies the rest, -3 merges two,
  -4 splits one) are resolved here into the explicit shape passed to
  numpy.reshape;
- strided_slice is a tuple of Python slices;
- take's modes clip and wrap are numpy.take's;
- nn.pad's constant, edge and reflect modes are numpy.pad's.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture_writer import FixtureWriter  # noqa: E402

SEED = 20261122

writer = FixtureWriter("transform", SEED)
rng = writer.rng


def format_attribute(value):
    if isinstance(value, str):
        return value
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (list, tuple)):
        if len(value) == 0:
            return "[]"
        if isinstance(value[0], (list, tuple)):
            text = ",".join(f"{int(a)}:{int(b)}" for a, b in value)
        else:
            text = ",".join(str(int(item)) for item in value)
        return text + "," if len(value) == 1 else text
    raise TypeError(value)


def emit(name, operator, inputs, expected, attributes=(), tuple_input=False):
    """Writes one case: its inputs, NumPy's expected output(s) and its index line;
    `expected` is an array, or a list of arrays for a tuple result."""
    writer.add_case_name(name)
    writer.save_inputs(name, inputs)
    # np.array, not np.ascontiguousarray, which would make a scalar 1-D.
    if isinstance(expected, list):
        for position, value in enumerate(expected):
            writer.save(f"{name}.out{position}.npy", np.array(value, order="C"))
        outputs = f"tuple{len(expected)}"
    else:
        writer.save(f"{name}.out.npy", np.array(expected, order="C"))
        outputs = "1"
    count = f"tuple{len(inputs)}" if tuple_input else str(len(inputs))
    writer.add_index_line([name, operator, count, outputs] +
                          [f"{key}={format_attribute(value)}" for key, value in attributes])


def data(shape, dtype="float32"):
    """Distinct values (so a wrong source index shows) of `dtype`."""
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype in ("float16", "float32", "float64"):
        return (np.arange(count, dtype=np.float64).reshape(shape) * 0.5 - 3.25).astype(dtype)
    return (np.arange(count).reshape(shape) % 100 - 17).astype(dtype)


def generate():
    # ---- reshape family ---------------------------------------------------------------
    x = data((2, 3, 4))
    emit("reshape_minus1", "reshape", [x], x.reshape(-1, 4), [("newshape", [-1, 4])])
    emit("reshape_flat", "reshape", [x], x.reshape(24), [("newshape", [-1])])
    emit("reshape_copy0", "reshape", [x], x.reshape(2, 12), [("newshape", [0, -1])])
    emit("reshape_minus2", "reshape", [x], x.reshape(2, 3, 4, 1), [("newshape", [-2, 1])])
    emit("reshape_minus3", "reshape", [x], x.reshape(6, 4), [("newshape", [-3, 4])])
    emit("reshape_minus4", "reshape", [x], x.reshape(1, 2, 3, 4),
         [("newshape", [-4, 1, -1, -2])])
    for dtype in ("float16", "int8", "int64", "bool", "uint8", "float64"):
        y = data((3, 4), dtype)
        emit(f"reshape_{dtype}", "reshape", [y], y.reshape(2, 6), [("newshape", [2, 6])])
    z = data((0, 3))
    emit("reshape_zero_size", "reshape", [z], z.reshape(3, 0), [("newshape", [3, -1])])
    s = data((1, 1))
    emit("reshape_to_scalar", "reshape", [s], s.reshape(()), [("newshape", [])])
    emit("batch_flatten", "nn.batch_flatten", [x], x.reshape(2, 12))
    y = data((2, 1, 3, 1), "int32")
    emit("squeeze_all", "squeeze", [y], np.squeeze(y))
    emit("squeeze_negative_axis", "squeeze", [y], np.squeeze(y, axis=-1), [("axis", [-1])])
    emit("expand_dims_middle", "expand_dims", [x], np.expand_dims(x, 1), [("axis", 1)])
    emit("expand_dims_negative", "expand_dims", [x], x.reshape(2, 3, 4, 1, 1),
         [("axis", -1), ("num_newaxis", 2)])

    # ---- permutations -----------------------------------------------------------------
    emit("transpose_default", "transpose", [x], np.transpose(x))
    emit("transpose_axes", "transpose", [x], np.transpose(x, (1, 0, 2)), [("axes", [1, 0, 2])])
    emit("transpose_negative_axes", "transpose", [x], np.transpose(x, (2, 0, 1)),
         [("axes", [-1, 0, 1])])
    b = data((3, 5), "bool")
    emit("transpose_bool", "transpose", [b], b.T)
    h = data((2, 0, 3), "float16")
    emit("transpose_zero_size", "transpose", [h], np.transpose(h, (2, 1, 0)),
         [("axes", [2, 1, 0])])
    emit("reverse_axis1", "reverse", [x], np.flip(x, 1), [("axis", 1)])
    emit("reverse_negative_axis", "reverse", [x], np.flip(x, -1), [("axis", -1)])
    v = data((7,), "int16")
    emit("reverse_1d_int16", "reverse", [v], v[::-1], [("axis", 0)])

    # ---- broadcast, tile, repeat ---------------------------------------------------------
    r = data((3, 1))
    emit("broadcast_to", "broadcast_to", [r], np.broadcast_to(r, (2, 3, 4)),
         [("shape", [2, 3, 4])])
    emit("broadcast_to_zero", "broadcast_to", [r], np.broadcast_to(r, (3, 0)),
         [("shape", [3, 0])])
    emit("tile_same_rank", "tile", [r], np.tile(r, (2, 3)), [("reps", [2, 3])])
    emit("tile_longer_reps", "tile", [v], np.tile(v, (2, 1, 2)), [("reps", [2, 1, 2])])
    emit("tile_shorter_reps", "tile", [x], np.tile(x, (2,)), [("reps", [2])])
    emit("repeat_axis0", "repeat", [x], np.repeat(x, 2, axis=0), [("repeats", 2), ("axis", 0)])
    emit("repeat_negative_axis", "repeat", [x], np.repeat(x, 3, axis=-1),
         [("repeats", 3), ("axis", -1)])

    # ---- strided_slice ----------------------------------------------------------------------
    w = data((5, 6), "int32")
    emit("slice_basic", "strided_slice", [w], w[1:4, 2:5], [("begin", [1, 2]), ("end", [4, 5])])
    emit("slice_strides", "strided_slice", [w], w[0:5:2, 1:6:3],
         [("begin", [0, 1]), ("end", [5, 6]), ("strides", [2, 3])])
    emit("slice_negative_stride", "strided_slice", [w], w[4:0:-1, ::-2],
         [("begin", [4, 5]), ("end", [0, -100]), ("strides", [-1, -2])])
    emit("slice_negative_indices", "strided_slice", [w], w[-3:-1],
         [("begin", [-3]), ("end", [-1])])
    emit("slice_clamped", "strided_slice", [w], w[:, 2:100],
         [("begin", [-100, 2]), ("end", [100, 100])])
    emit("slice_axes", "strided_slice", [x], x[:, :, 3:0:-2],
         [("begin", [3]), ("end", [0]), ("strides", [-2]), ("axes", [-1])])
    emit("slice_size_mode", "strided_slice", [w], w[1:3, 2:],
         [("begin", [1, 2]), ("end", [2, -1]), ("slice_mode", "size")])
    emit("slice_empty", "strided_slice", [w], w[2:2], [("begin", [2]), ("end", [2])])

    # ---- take -------------------------------------------------------------------------------
    indices = np.array([[0, 2], [4, -1], [7, -9]], dtype=np.int32)
    emit("take_axis0_clip", "take", [x.reshape(6, 4), indices],
         np.take(x.reshape(6, 4), indices, axis=0, mode="clip"), [("axis", 0)])
    emit("take_axis1_wrap", "take", [x, indices], np.take(x, indices, axis=1, mode="wrap"),
         [("axis", 1), ("mode", "wrap")])
    emit("take_negative_axis_clip", "take", [x, indices],
         np.take(x, indices, axis=-1, mode="clip"), [("axis", -1)])
    flat_indices = np.array([0, 5, 23, 30, -3], dtype=np.int64)
    emit("take_flat_clip", "take", [x, flat_indices], np.take(x, flat_indices, mode="clip"))
    emit("take_flat_wrap", "take", [x, flat_indices], np.take(x, flat_indices, mode="wrap"),
         [("mode", "wrap")])
    emit("take_fast_in_range", "take", [w, np.array([4, 0, 1], dtype=np.int64)],
         np.take(w, [4, 0, 1], axis=0), [("axis", 0), ("mode", "fast")])
    emit("take_empty_indices", "take", [w, np.zeros((0,), dtype=np.int32)],
         np.take(w, np.zeros((0,), dtype=np.int32), axis=1), [("axis", 1)])
    emit("take_scalar_index", "take", [w, np.array(3, dtype=np.int32)], np.take(w, 3, axis=1),
         [("axis", 1)])

    # ---- creation ---------------------------------------------------------------------------
    emit("zeros_f32", "zeros", [], np.zeros((2, 3), np.float32),
         [("shape", [2, 3]), ("dtype", "float32")])
    emit("ones_int8", "ones", [], np.ones((4,), np.int8), [("shape", [4]), ("dtype", "int8")])
    emit("ones_bool", "ones", [], np.ones((2, 2), np.bool_), [("shape", [2, 2]), ("dtype", "bool")])
    emit("zeros_scalar", "zeros", [], np.zeros((), np.float16), [("shape", []), ("dtype", "float16")])
    fill = np.array(2.5, dtype=np.float32)
    emit("full_default_dtype", "full", [fill], np.full((3, 2), 2.5, np.float32), [("shape", [3, 2])])
    emit("full_cast_to_int", "full", [fill], np.full((3,), 2, np.int32),
         [("shape", [3]), ("dtype", "int32")])
    emit("zeros_like_int64", "zeros_like", [data((2, 3), "int64")], np.zeros((2, 3), np.int64))
    emit("ones_like_f16", "ones_like", [h], np.ones_like(h))
    emit("ones_like_f64", "ones_like", [data((3,), "float64")], np.ones((3,), np.float64))
    emit("full_like_f32", "full_like", [x, np.array(7, dtype=np.int32)],
         np.full_like(x, 7))

    # ---- pad ----------------------------------------------------------------------------------
    p = data((2, 3))
    pad_value = np.array(-1.5, dtype=np.float32)
    emit("pad_constant", "nn.pad", [p, pad_value],
         np.pad(p, ((1, 2), (0, 3)), constant_values=-1.5), [("pad_width", [[1, 2], [0, 3]])])
    emit("pad_constant_int_value", "nn.pad", [data((3,), "int32"), np.array(9.0, np.float64)],
         np.pad(data((3,), "int32"), ((2, 1),), constant_values=9),
         [("pad_width", [[2, 1]])])
    emit("pad_edge", "nn.pad", [p, pad_value], np.pad(p, ((2, 1), (1, 2)), mode="edge"),
         [("pad_width", [[2, 1], [1, 2]]), ("pad_mode", "edge")])
    emit("pad_reflect", "nn.pad", [p, pad_value], np.pad(p, ((1, 1), (2, 2)), mode="reflect"),
         [("pad_width", [[1, 1], [2, 2]]), ("pad_mode", "reflect")])
    e = data((0, 2))
    emit("pad_empty_input", "nn.pad", [e, pad_value],
         np.pad(e, ((1, 1), (0, 1)), constant_values=-1.5), [("pad_width", [[1, 1], [0, 1]])])

    # ---- concatenate, stack -----------------------------------------------------------------------
    a, c, d = data((2, 3)), data((2, 1)), data((2, 4))
    emit("concatenate_axis1", "concatenate", [a, c, d], np.concatenate([a, c, d], axis=1),
         [("axis", 1)], tuple_input=True)
    emit("concatenate_negative_axis", "concatenate", [a, c], np.concatenate([a, c], axis=-1),
         [("axis", -1)], tuple_input=True)
    f, g = data((1, 3), "int8"), data((3, 3), "int8")
    emit("concatenate_axis0_int8", "concatenate", [f, g], np.concatenate([f, g]),
         tuple_input=True)
    empty = data((0, 3), "int8")
    emit("concatenate_with_empty", "concatenate", [f, empty, g], np.concatenate([f, empty, g]),
         tuple_input=True)
    emit("concatenate_single", "concatenate", [g], g, tuple_input=True)
    emit("stack_axis0", "stack", [a, a * 2, a + 1], np.stack([a, a * 2, a + 1]),
         tuple_input=True)
    bool_fields = [data((2, 2), "bool"), data((2, 2), "bool")]
    emit("stack_negative_axis_bool", "stack", bool_fields, np.stack(bool_fields, axis=-1),
         [("axis", -1)], tuple_input=True)

    # ---- split ------------------------------------------------------------------------------
    emit("split_sections", "split", [x], np.split(x, 3, axis=1),
         [("indices_or_sections", 3), ("axis", 1)])
    emit("split_indices_negative_axis", "split", [x], np.split(x, [1, 3], axis=-1),
         [("indices_or_sections", [1, 3]), ("axis", -1)])
    emit("split_one_section_f16", "split", [h], np.split(h, 1, axis=2),
         [("indices_or_sections", 1), ("axis", 2)])
    k = data((6,), "int64")
    emit("split_index_list_of_one", "split", [k], np.split(k, [4]),
         [("indices_or_sections", [4])])

    # ---- arange, shape_of, ndarray_size -----------------------------------------------------
    # arange is start + i * step in the dtype (TVM's definition); the bounds
    # are exactly representable so that no rounding can differ.
    def arange(start, stop, step, dtype):
        bounds = [np.array(value, dtype=dtype) for value in (start, stop, step)]
        length = max(0, int(np.ceil((stop - start) / step)))
        expected = (np.array(start, dtype) + np.arange(length).astype(dtype) * np.array(step, dtype))
        return bounds, expected.astype(dtype)
    for name, start, stop, step, dtype in [("arange_f32", 1.25, 9.0, 0.5, "float32"),
                                           ("arange_i32_negative_step", 10, -3, -3, "int32"),
                                           ("arange_i64", 0, 7, 1, "int64"),
                                           ("arange_f64_fraction", -2.0, 1.0, 0.75, "float64"),
                                           ("arange_empty", 5, 1, 1, "int32")]:
        bounds, expected = arange(start, stop, step, dtype)
        emit(name, "arange", bounds, expected, [("dtype", dtype)])
    s3 = data((2, 3, 4))
    emit("shape_of_rank3", "shape_of", [s3], np.array(s3.shape, np.int32))
    emit("shape_of_int64", "shape_of", [data((5, 0), "int8")], np.array([5, 0], np.int64),
         [("dtype", "int64")])
    emit("shape_of_scalar", "shape_of", [np.array(2.5, np.float32)], np.zeros((0,), np.int32))
    emit("ndarray_size_rank3", "ndarray_size", [s3], np.array(24, np.int32))
    emit("ndarray_size_int64", "ndarray_size", [data((3, 0, 2), "bool")], np.array(0, np.int64),
         [("dtype", "int64")])

    # ---- gather (numpy.take_along_axis) -----------------------------------------------------
    g = data((3, 4))
    g_indices = np.array([[0, 3], [2, 1], [3, 3]], np.int32)
    emit("gather_axis1", "gather", [g, g_indices], np.take_along_axis(g, g_indices, axis=1),
         [("axis", 1)])
    g0_indices = np.array([[2, 0, 1, 2], [0, 0, 0, 1]], np.int64)
    emit("gather_axis0_int64_indices", "gather", [g, g0_indices],
         np.take_along_axis(g, g0_indices, axis=0), [("axis", 0)])
    g3 = data((2, 3, 2), "int32")
    g3_indices = np.array([[[1, 0], [0, 0], [1, 1]], [[0, 1], [1, 0], [0, 0]]], np.int32)
    emit("gather_negative_axis", "gather", [g3, g3_indices],
         np.take_along_axis(g3, g3_indices, axis=-1), [("axis", -1)])

    # ---- search and scan operators (C++ kernels) ------------------------------------------
    # Descending orders are NumPy's stable ascending order of the negated
    # data: ties keep the lower position first, as topk and argsort do.
    t = rng.permutation(15).reshape(3, 5).astype(np.float32) - 7
    order = np.argsort(-t, axis=1, kind="stable")[:, :2]
    emit("topk_both_axis1", "topk", [t],
         [np.take_along_axis(t, order, axis=1), order.astype(np.int32)], [("k", 2), ("axis", 1)])
    order0 = np.argsort(t, axis=0, kind="stable")[:2]
    emit("topk_smallest_values_axis0", "topk", [t], np.take_along_axis(t, order0, axis=0),
         [("k", 2), ("axis", 0), ("is_ascend", 1), ("ret_type", "values")])
    ties = np.array([[3, 1, 3, 2, 1], [0, 0, 5, 0, 5]], np.int32)
    emit("topk_ties_int64_indices", "topk", [ties],
         np.argsort(-ties, axis=1, kind="stable")[:, :3].astype(np.int64),
         [("k", 3), ("ret_type", "indices"), ("dtype", "int64")])
    emit("argsort_descending_axis0", "argsort", [ties],
         np.argsort(-ties, axis=0, kind="stable").astype(np.int32), [("axis", 0), ("is_ascend", 0)])
    with_nan = np.array([[2.5, np.nan, -1.0, 2.5], [np.nan, 0.0, -3.0, 7.0]], np.float32)
    emit("argsort_nan_last", "argsort", [with_nan],
         np.argsort(with_nan, axis=1, kind="stable").astype(np.int32))
    emit("sort_nan_last", "sort", [with_nan], np.sort(with_nan, axis=1))
    s3 = data((2, 3, 4), "float64")[:, ::-1, :].copy()
    emit("sort_descending_middle_axis", "sort", [s3], np.sort(s3, axis=1)[:, ::-1, :],
         [("axis", 1), ("is_ascend", 0)])
    c = data((3, 4), "int32")
    emit("cumsum_axis1", "cumsum", [c], np.cumsum(c, axis=1).astype(np.int32), [("axis", 1)])
    emit("cumsum_exclusive_axis0", "cumsum", [c], (np.cumsum(c, axis=0) - c).astype(np.int32),
         [("axis", 0), ("exclusive", 1)])
    emit("cumsum_flattened_float", "cumsum", [data((2, 3))], np.cumsum(data((2, 3))))
    small = np.array([[1, -2, 3], [2, 2, -1]], np.int8)
    emit("cumsum_int8_as_int64", "cumsum", [small], np.cumsum(small, axis=1, dtype=np.int64),
         [("axis", 1), ("dtype", "int64")])
    emit("cumprod_axis0", "cumprod", [small.astype(np.int64)],
         np.cumprod(small.astype(np.int64), axis=0), [("axis", 0)])
    halves = np.array([0.5, 2.0, -1.5, 4.0, 0.25], np.float32)
    emit("cumprod_float", "cumprod", [halves], np.cumprod(halves), [("axis", 0)])
    mask = rng.integers(0, 2, size=(3, 4)).astype(np.bool_)
    emit("argwhere_bool", "argwhere", [mask], np.argwhere(mask).astype(np.int32))
    signed = np.array([0.0, -0.0, 1.5, 0.0, -2.0], np.float32)
    emit("argwhere_float_negative_zero", "argwhere", [signed], np.argwhere(signed).astype(np.int32))
    emit("argwhere_none", "argwhere", [np.zeros((2, 2, 2), np.int64)],
         np.zeros((0, 3), np.int32))

    # ---- unique_along (C++ kernel): numpy.unique's four results --------------------------
    def unique(x, axis=None, sorted=True):
        values, first, inverse, counts = np.unique(x, True, True, True, axis=axis)
        inverse = inverse.reshape(-1)
        if not sorted:
            # Renumbered by first occurrence.
            order = np.argsort(first, kind="stable")
            number = np.empty_like(order)
            number[order] = np.arange(len(order))
            first, counts, inverse = first[order], counts[order], number[inverse]
            values = np.take(x.reshape(-1) if axis is None else x, first,
                             axis=0 if axis is None else axis)
        return [values, first.astype(np.int64), inverse.astype(np.int64),
                counts.astype(np.int64)]

    def emit_unique(name, x, axis=None, sorted=True):
        attributes = ([] if axis is None else [("axis", axis)]) + [("sorted", int(sorted))]
        emit(name, "unique_along", [x], unique(x, axis, sorted), attributes)

    u = rng.integers(-3, 4, size=(12,)).astype(np.int32)
    emit_unique("unique_along_flat_sorted", u)
    emit_unique("unique_along_flat_first_occurrence", u, sorted=False)
    u2 = rng.integers(0, 3, size=(3, 4)).astype(np.float32)
    emit_unique("unique_along_flattens_2d", u2)
    rows = np.array([[1, 0, 2], [0, 5, 1], [1, 0, 2], [0, 5, 0], [0, 5, 1]], np.int64)
    emit_unique("unique_along_rows_sorted", rows, axis=0)
    emit_unique("unique_along_rows_first_occurrence", rows, axis=0, sorted=False)
    u3 = rng.integers(0, 2, size=(2, 5, 2)).astype(np.int8)
    emit_unique("unique_along_middle_axis", u3, axis=1)
    emit_unique("unique_along_negative_axis", rows.T.copy(), axis=-1, sorted=False)
    with_nans = np.array([2.0, np.nan, -1.0, 2.0, np.nan, -0.5], np.float64)
    emit_unique("unique_along_nan_once_last", with_nans)
    emit_unique("unique_along_bool", rng.integers(0, 2, size=(7,)).astype(np.bool_))


def main():
    writer.clear()
    generate()
    writer.write_index("generate_transform_cases.py", [
        "# CASE OPERATOR INPUTS OUTPUTS [KEY=VALUE ...]",
        "# Inputs: CASE.in<N>.npy; expected output: CASE.out.npy or CASE.out<N>.npy.",
    ])


if __name__ == "__main__":
    main()
