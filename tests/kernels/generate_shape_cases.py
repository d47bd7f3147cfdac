#!/usr/bin/python3
"""Generates tests/fixtures/operator_shapes.txt: output types of Relay shape
operators, computed by NumPy as an independent oracle.

Run from the repository root:  /usr/bin/python3 tests/kernels/generate_shape_cases.py

Each line of the fixture is one call:

    operator | inputs | attributes | expected

- inputs: space-separated types; a tensor is DTYPE[d0,d1,...] (DTYPE[] for a
  scalar), a tuple of tensors is {T,T,...}.
- attributes: a JSON object of Relay attributes (names and values as Relay
  spells them).
- expected: the output type in the same notation, or `error` when NumPy (or
  the Relay rule stated below) rejects the call.

Where Relay's rule differs from NumPy's the generator says so and applies the
Relay rule explicitly:
- argmax/argmin return int32 (NumPy returns int64);
- reshape's 0 copies the input dimension at the same position (NumPy would
  make a zero-size dimension) and -2/-3/-4 are Relay-only; both are computed
  by `relay_reshape` below, written from Relay's documentation, and NumPy
  checks the element count;
- strided_slice rejects a slice that runs against its stride (NumPy returns an
  empty slice); split by indices needs strictly increasing indices inside
  (0, extent); tile and repeat need counts >= 1;
- expand_dims with num_newaxis=k inserts k axes at the position
  axis (axis + rank + 1 when negative).
"""

import json
import os
import random

import numpy as np

SEED = 20240607
OUTPUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures",
                      "operator_shapes.txt")

rng = random.Random(SEED)
lines = []


def tensor(shape, dtype="float32"):
    return "%s[%s]" % (dtype, ",".join(str(d) for d in shape))


def tuple_of(shapes, dtype="float32"):
    return "{" + ",".join(tensor(s, dtype) for s in shapes) + "}"


def emit(op, inputs, attrs, expected):
    lines.append("%s | %s | %s | %s" % (op, " ".join(inputs), json.dumps(attrs, sort_keys=True),
                                         expected))


def oracle(function):
    """The NumPy result's type, or 'error' when NumPy raises."""
    try:
        result = function()
    except (ValueError, IndexError, TypeError):
        return "error"
    if isinstance(result, (list, tuple)):
        return "{" + ",".join(tensor(r.shape, str(r.dtype)) for r in result) + "}"
    return tensor(np.shape(result), str(np.asarray(result).dtype))


def random_shape(max_rank=4, max_dim=5, allow_zero=True, min_rank=0):
    rank = rng.randint(min_rank, max_rank)
    low = 0 if allow_zero and rng.random() < 0.15 else 1
    return tuple(rng.randint(low, max_dim) for _ in range(rank))


def empty(shape, dtype=np.float32):
    return np.empty(shape, dtype=dtype)


# ---- broadcasting ----------------------------------------------------------------------

def broadcast_partner(shape):
    """A shape that usually broadcasts with `shape` (and sometimes does not)."""
    partner = []
    for dim in shape[rng.randint(0, len(shape)):] if shape else ():
        choice = rng.random()
        if choice < 0.4:
            partner.append(dim)
        elif choice < 0.75:
            partner.append(1)
        else:
            partner.append(rng.randint(0, 5))
    prefix = [rng.randint(1, 3) for _ in range(rng.randint(0, 2))]
    return tuple(prefix + partner)


for _ in range(60):
    left = random_shape()
    right = broadcast_partner(left)
    if rng.random() < 0.5:
        left, right = right, left
    op = rng.choice(["add", "multiply", "maximum", "less", "equal"])
    numpy_op = {"add": np.add, "multiply": np.multiply, "maximum": np.maximum, "less": np.less,
                "equal": np.equal}[op]
    emit(op, [tensor(left), tensor(right)], {},
         oracle(lambda: numpy_op(empty(left), empty(right))))

for left, right in [((2, 3), (4, 3)), ((0,), (2,)), ((5, 1, 4), (3, 1)), ((), (7,)),
                    ((1, 0), (3, 1)), ((2, 1), (1, 2))]:
    emit("subtract", [tensor(left), tensor(right)], {},
         oracle(lambda: np.subtract(empty(left), empty(right))))

for _ in range(20):
    x_shape = random_shape()
    y_shape = broadcast_partner(x_shape)
    condition_shape = broadcast_partner(x_shape)
    emit("where", [tensor(condition_shape, "bool"), tensor(x_shape), tensor(y_shape)], {},
         oracle(lambda: np.where(empty(condition_shape, bool), empty(x_shape), empty(y_shape))))

# ---- reductions ------------------------------------------------------------------------

def reduce_axes(rank, exclude, axes):
    if axes is None:
        return None
    if not exclude:
        return tuple(axes)
    chosen = {a + rank if a < 0 else a for a in axes}
    return tuple(a for a in range(rank) if a not in chosen)


for _ in range(70):
    shape = random_shape(max_rank=4, min_rank=0 if rng.random() < 0.1 else 1)
    rank = len(shape)
    op = rng.choice(["sum", "mean", "max", "min", "prod", "argmax", "argmin", "all", "any"])
    keepdims = rng.random() < 0.4
    attrs = {"keepdims": keepdims}
    if op in ("argmax", "argmin"):
        # NumPy's argmax takes one axis at most.
        axes = None if rng.random() < 0.3 or rank == 0 else [rng.randint(-rank, rank - 1)]
        exclude = False
    else:
        choice = rng.random()
        if choice < 0.2 or rank == 0:
            axes = None
        elif choice < 0.3:
            # An axis near or past either end of the valid range [-rank, rank).
            axes = [rng.choice([-1, 1]) * rng.randint(rank, rank + 2) - rng.randint(0, 1)]
        else:
            axes = rng.sample(range(-rank, rank), rng.randint(1, rank))
        exclude = rng.random() < 0.3 and axes is not None
    attrs["axis"] = axes
    attrs["exclude"] = exclude
    dtype = "bool" if op in ("all", "any") else "float32"

    def run(shape=shape, rank=rank, axes=axes, exclude=exclude, keepdims=keepdims, dtype=dtype):
        chosen = reduce_axes(rank, exclude, axes)
        if chosen is not None:
            # np.sum rejects out-of-range and duplicate axes, as Relay does.
            normalized = [a + rank if a < 0 else a for a in (axes if exclude else chosen)]
            if len(set(normalized)) != len(normalized) or any(not 0 <= a < rank for a in normalized):
                raise ValueError("bad axis")
        # Shapes come from np.sum, which (unlike max) accepts zero-size axes.
        return np.sum(empty(shape, np.float32), axis=chosen, keepdims=keepdims)

    expected = oracle(run)
    if expected != "error":
        out_dtype = {"argmax": "int32", "argmin": "int32"}.get(op, dtype)
        expected = expected.rsplit("[", 1)
        expected = out_dtype + "[" + expected[1]
    emit(op, [tensor(shape, dtype)], attrs, expected)

# ---- reshape ---------------------------------------------------------------------------

def relay_reshape(shape, newshape):
    """Relay's reshape rule for 0, -1, -2, -3, -4 (allowzero=False), from its
    documentation; raises ValueError where Relay reports an error."""
    out = []
    copied_out = []  # whether each output dimension was copied from the input
    copied_in = set()
    infer_at = None
    source = 0  # the input dimension the next value refers to

    def push(dim, copied):
        out.append(dim)
        copied_out.append(copied)

    i = 0
    while i < len(newshape):
        value = newshape[i]
        if value > 0:
            push(value, False)
            source += 1
        elif value == 0:
            if source >= len(shape):
                raise ValueError("0 beyond rank")
            copied_in.add(source)
            push(shape[source], True)
            source += 1
        elif value == -1:
            if infer_at is not None:
                raise ValueError("two -1")
            infer_at = len(out)
            push(1, False)
            source += 1
        elif value == -2:
            while source < len(shape):
                copied_in.add(source)
                push(shape[source], True)
                source += 1
        elif value == -3:
            if source + 1 >= len(shape):
                raise ValueError("-3 beyond rank")
            copied_in.update((source, source + 1))
            push(shape[source] * shape[source + 1], True)
            source += 2
        elif value == -4:
            if i + 2 >= len(newshape) or source >= len(shape):
                raise ValueError("-4 incomplete")
            whole = shape[source]
            copied_in.add(source)
            source += 1
            first, second = newshape[i + 1], newshape[i + 2]
            i += 2
            if first == -1 and second == -1:
                raise ValueError("both -1")
            if first == -1:
                if whole % second:
                    raise ValueError("indivisible")
                first = whole // second
            if second == -1:
                if whole % first:
                    raise ValueError("indivisible")
                second = whole // first
            if first * second != whole:
                raise ValueError("bad split")
            push(first, True)
            push(second, True)
        else:
            raise ValueError("bad value")
        i += 1
    if infer_at is not None:
        # The -1 takes what the input dimensions not copied hold, divided by
        # the output dimensions not copied.
        remaining = int(np.prod([d for k, d in enumerate(shape) if k not in copied_in]))
        divisor = int(np.prod([d for k, d in enumerate(out) if not copied_out[k] and k != infer_at]))
        if divisor == 0 or remaining % divisor:
            raise ValueError("cannot infer")
        out[infer_at] = remaining // divisor
    # NumPy checks that the element counts agree.
    return empty(shape).reshape(out)


def numpy_reshape_with_copy(shape, newshape):
    """0 at position i means shape[i]; the rest is NumPy's reshape."""
    translated = []
    for index, value in enumerate(newshape):
        if value == 0:
            if index >= len(shape):
                raise ValueError("0 beyond rank")
            translated.append(shape[index])
        else:
            translated.append(value)
    return empty(shape).reshape(translated)


for _ in range(40):
    shape = random_shape(max_rank=4, allow_zero=False)
    total = int(np.prod(shape))
    choice = rng.random()
    if choice < 0.3:
        # A factorisation of the element count with one -1.
        newshape = []
        left = total
        while left > 1 and rng.random() < 0.7:
            factor = rng.choice([f for f in range(1, left + 1) if left % f == 0])
            newshape.append(factor)
            left //= factor
        newshape.append(left)
        newshape[rng.randrange(len(newshape))] = -1
    elif choice < 0.55:
        newshape = [0 if rng.random() < 0.5 else d for d in shape]
        if newshape and rng.random() < 0.6:
            newshape[rng.randrange(len(newshape))] = -1
    else:
        # Possibly wrong sizes: NumPy decides.
        newshape = [rng.choice([-1, 1, 2, 3, 4, 6]) for _ in range(rng.randint(1, 3))]
        if newshape.count(-1) > 1:
            newshape = [abs(v) for v in newshape]
    emit("reshape", [tensor(shape)], {"newshape": newshape},
         oracle(lambda: numpy_reshape_with_copy(shape, newshape)))

for shape, newshape in [
        ((2, 3, 4), [-2]), ((2, 3, 4), [2, -2]), ((2, 3, 4), [-2, 1, 1]),
        ((2, 3, 4), [-3, 4]), ((2, 3, 4, 5), [-3, -3]), ((2, 3, 4), [0, -3]),
        ((2, 3, 4), [-3, -2]), ((2, 3, 4), [-4, 1, 2, -2]), ((2, 3, 4), [2, -4, -1, 3, -2]),
        ((6, 4), [-4, 2, -1, 0]), ((6, 4), [-4, -1, 3, -1]), ((2, 3, 4), [-1, 0]),
        ((6,), [-4, 4, -1]), ((6,), [-4, -1, -1]), ((2, 3), [-3, -3]), ((2, 3, 4), [-5]),
        ((2, 3, 4), [4, 0, 2]), ((2, 3, 4), [2, 0, 0]), ((2, 3, 4), [6, 1, -1]),
        ((2, 3, 4), [3, -1, 8]), ((2, 3, 4), [-1]), ((2, 0, 3), [-2, -1]), ((0, 4), [-1, 2]),
        ((2, 3, 4), [-1, -2])]:
    emit("reshape", [tensor(shape)], {"newshape": newshape},
         oracle(lambda: relay_reshape(shape, newshape)))

# ---- transpose, squeeze, expand_dims -------------------------------------------------

for _ in range(20):
    shape = random_shape(max_rank=5)
    rank = len(shape)
    choice = rng.random()
    if choice < 0.2:
        axes = None
    elif choice < 0.8:
        axes = [a - rank if rng.random() < 0.3 else a for a in rng.sample(range(rank), rank)]
    else:
        axes = [rng.randint(-rank - 1, rank) for _ in range(max(rank, 1) + rng.choice([-1, 0]))]
    emit("transpose", [tensor(shape)], {"axes": axes},
         oracle(lambda: np.transpose(empty(shape), axes)))

for _ in range(20):
    shape = tuple(rng.choice([1, 1, 2, 3, 0]) for _ in range(rng.randint(0, 4)))
    rank = len(shape)
    if rng.random() < 0.3 or rank == 0:
        axis = None
    else:
        axis = rng.sample(range(-rank, rank), rng.randint(1, rank))
    emit("squeeze", [tensor(shape)], {"axis": axis},
         oracle(lambda: np.squeeze(empty(shape), axis=None if axis is None else tuple(axis))))


def relay_expand_dims(shape, axis, count):
    rank = len(shape)
    if not -rank - 1 <= axis <= rank:
        raise ValueError("axis out of range")
    pivot = axis + rank + 1 if axis < 0 else axis
    return np.expand_dims(empty(shape), tuple(range(pivot, pivot + count)))


for _ in range(16):
    shape = random_shape(max_rank=3)
    rank = len(shape)
    axis = rng.randint(-rank - 2, rank + 1)
    count = rng.choice([0, 1, 1, 2, 3])
    emit("expand_dims", [tensor(shape)], {"axis": axis, "num_newaxis": count},
         oracle(lambda: relay_expand_dims(shape, axis, count)))

# ---- concatenate, stack, split ---------------------------------------------------------

for _ in range(16):
    base = random_shape(max_rank=3)
    while not base:
        base = random_shape(max_rank=3)
    rank = len(base)
    axis = rng.randint(-rank, rank - 1)
    shapes = []
    for _ in range(rng.randint(1, 3)):
        shape = list(base)
        shape[axis] = rng.randint(0, 4)
        if rng.random() < 0.15:
            other = rng.randrange(rank)
            shape[other] += 1
        shapes.append(tuple(shape))
    emit("concatenate", [tuple_of(shapes)], {"axis": axis},
         oracle(lambda: np.concatenate([empty(s) for s in shapes], axis=axis)))

for _ in range(12):
    base = random_shape(max_rank=3)
    rank = len(base)
    axis = rng.randint(-rank - 1, rank)
    shapes = [base] * rng.randint(1, 3)
    if rng.random() < 0.2 and rank > 0:
        shapes = shapes + [tuple(d + 1 for d in base)]
    emit("stack", [tuple_of(shapes)], {"axis": axis},
         oracle(lambda: np.stack([empty(s) for s in shapes], axis=axis)))

for _ in range(24):
    shape = random_shape(max_rank=3)
    while not shape:
        shape = random_shape(max_rank=3)
    rank = len(shape)
    axis = rng.randint(-rank, rank - 1)
    extent = shape[axis]
    if rng.random() < 0.5:
        sections = rng.randint(1, 4)
        emit("split", [tensor(shape)], {"indices_or_sections": sections, "axis": axis},
             oracle(lambda: np.split(empty(shape), sections, axis=axis)))
    else:
        # Relay: strictly increasing split points inside (0, extent).
        if extent < 2:
            continue
        points = sorted(rng.sample(range(1, extent), rng.randint(1, extent - 1)))
        emit("split", [tensor(shape)], {"indices_or_sections": points, "axis": axis},
             oracle(lambda: np.split(empty(shape), points, axis=axis)))

# ---- strided_slice ---------------------------------------------------------------------

def relay_strided_slice(shape, begin, end, strides, axes):
    rank = len(shape)
    if axes is None:
        axes = list(range(len(begin)))
    slices = [slice(None)] * rank
    for slot, axis in enumerate(axes):
        stride = strides[slot] if slot < len(strides) else 1
        start, stop, step = slice(begin[slot], end[slot], stride).indices(shape[axis])
        if (step > 0 and start > stop) or (step < 0 and start < stop):
            raise ValueError("slice runs against its stride")  # Relay's rule
        slices[axis] = slice(begin[slot], end[slot], stride)
    return empty(shape)[tuple(slices)]


for _ in range(40):
    shape = random_shape(max_rank=3, max_dim=7)
    while not shape:
        shape = random_shape(max_rank=3, max_dim=7)
    rank = len(shape)
    use_axes = rng.random() < 0.3
    if use_axes:
        axes = rng.sample(range(rank), rng.randint(1, rank))
        count = len(axes)
    else:
        axes = None
        count = rng.randint(1, rank)
    begin = [rng.randint(-9, 9) for _ in range(count)]
    end = [rng.randint(-9, 9) for _ in range(count)]
    strides = [rng.choice([1, 1, 2, 3, -1, -2]) for _ in range(count)]
    attrs = {"begin": begin, "end": end, "strides": strides, "axes": axes, "slice_mode": "end"}
    emit("strided_slice", [tensor(shape)], attrs,
         oracle(lambda: relay_strided_slice(shape, begin, end, strides, axes)))

# ---- take, tile, repeat, broadcast_to ------------------------------------------------

for _ in range(20):
    shape = random_shape(max_rank=3, allow_zero=False)
    indices_shape = random_shape(max_rank=2)
    rank = len(shape)
    if rng.random() < 0.3 or rank == 0:
        axis = None
    else:
        axis = rng.randint(-rank, rank - 1)
    emit("take", [tensor(shape), tensor(indices_shape, "int32")], {"axis": axis},
         oracle(lambda: np.take(empty(shape), np.zeros(indices_shape, np.int32), axis=axis)))

for _ in range(16):
    shape = random_shape(max_rank=3)
    reps = [rng.randint(1, 3) for _ in range(rng.randint(0, 4))]
    emit("tile", [tensor(shape)], {"reps": reps}, oracle(lambda: np.tile(empty(shape), reps)))

for _ in range(12):
    shape = random_shape(max_rank=3)
    while not shape:
        shape = random_shape(max_rank=3)
    rank = len(shape)
    axis = rng.randint(-rank - 1, rank)
    repeats = rng.randint(1, 3)
    emit("repeat", [tensor(shape)], {"repeats": repeats, "axis": axis},
         oracle(lambda: np.repeat(empty(shape), repeats, axis=axis)))

for _ in range(20):
    target = random_shape(max_rank=4)
    source = broadcast_partner(target)
    emit("broadcast_to", [tensor(source)], {"shape": list(target)},
         oracle(lambda: np.broadcast_to(empty(source), target)))

with open(OUTPUT, "w") as output:
    output.write("# Generated by tests/kernels/generate_shape_cases.py (seed %d); do not edit.\n"
                 % SEED)
    output.write("# operator | inputs | attributes (JSON) | expected type or error\n")
    seen = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            output.write(line + "\n")
print("wrote %d cases to %s" % (len(set(lines)), os.path.normpath(OUTPUT)))
