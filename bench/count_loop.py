#!/usr/bin/env python3
"""CPython peer of bench/programs/count_loop.relay: the same 10^6-iteration
counting loop (a while loop: CPython cannot recurse a million deep).

    time /usr/bin/python3 bench/count_loop.py

bench/compare_count_loop.py runs both, alternately, and prints the ratio.
"""


def count(n, acc):
    while n != 0:
        n = n - 1
        acc = acc + 1
    return acc


if __name__ == "__main__":
    print(count(1000000, 0))
