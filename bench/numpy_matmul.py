#!/usr/bin/env python3
"""NumPy (BLAS) reference for bench/dense_bench.cc's dense and matmul cases.

Times, in float32 at M = N = K = 256, 512, 1024, a @ b.T with a of shape
(M, K) and b of shape (N, K) -- the layout of nn.dense -- and a @ b with b of
shape (K, N) -- nn.matmul's -- and prints the best of several repetitions
after a warm-up, in GFLOP/s (2 * M * N * K flops).

    /usr/bin/python3 bench/numpy_matmul.py

Needs a python3 with numpy (on the development machine /usr/bin/python3 has
it). The BLAS library actually loaded is printed: numpy may be linked against
the Netlib reference libblas rather than OpenBLAS. The thread count is whatever the BLAS picks: set
OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS) to pin it; the values seen are
printed, as is OPENBLAS_CORETYPE, which is left as it is.
"""

import os
import sys
import time

import numpy as np

SIZES = (256, 512, 1024)
REPETITIONS = 10
ENV_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                 "OPENBLAS_CORETYPE")


def loaded_blas_libraries():
    """The BLAS shared objects mapped into this process (Linux only), resolved
    through symlinks: shows whether numpy really runs OpenBLAS or, say, the
    Netlib reference libblas that Debian's alternatives may select."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            paths = {line.split()[-1] for line in maps if "blas" in line.lower()}
    except OSError:
        return ["(unknown: no /proc/self/maps)"]
    return sorted(os.path.realpath(path) for path in paths if path.startswith("/"))


def best_seconds(a, b, repetitions):
    """Best wall time of a @ b over `repetitions` runs, after one warm-up."""
    np.matmul(a, b)
    best = float("inf")
    for _ in range(repetitions):
        start = time.perf_counter()
        np.matmul(a, b)
        best = min(best, time.perf_counter() - start)
    return best


def main():
    print(f"numpy {np.__version__}, python {sys.version.split()[0]}")
    print(f"os.cpu_count(): {os.cpu_count()}")
    for name in ENV_VARIABLES:
        print(f"{name}: {os.environ.get(name, '(unset)')}")
    np.matmul(np.ones((2, 2), np.float32), np.ones((2, 2), np.float32))
    for library in loaded_blas_libraries() or ["(none found)"]:
        print(f"BLAS library: {library}")
    print()
    print(f"{'case':>8}  {'M=N=K':>6}  {'best ms':>9}  {'GFLOP/s':>9}")
    rng = np.random.default_rng(0)
    for case in ("dense", "matmul"):
        for size in SIZES:
            a = rng.uniform(-1, 1, (size, size)).astype(np.float32)
            b = rng.uniform(-1, 1, (size, size)).astype(np.float32)
            # dense multiplies by the transpose of a row-major (N, K) weight.
            seconds = best_seconds(a, b.T if case == "dense" else b, REPETITIONS)
            gflops = 2.0 * size ** 3 / seconds * 1e-9
            print(f"{case:>8}  {size:>6}  {seconds * 1e3:>9.3f}  {gflops:>9.1f}")


if __name__ == "__main__":
    main()
