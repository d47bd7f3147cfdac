#!/usr/bin/env python3
"""The 10^6-iteration counting loop end to end, process start included:
relay-vm (bench/programs/count_loop.relay) against CPython
(bench/count_loop.py), each run alternately in the same minute.

    /usr/bin/python3 bench/compare_count_loop.py [RELAY_VM] [--runs N]

RELAY_VM defaults to build/release/relay-vm. The peer is this very Python
interpreter (sys.executable): run it as /usr/bin/python3, not through a
shim such as pyenv's, which adds its own start-up time to every run.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def wall_time(command):
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("relay_vm", nargs="?",
                        default=os.path.join(HERE, "..", "build", "release", "relay-vm"))
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    relay = [args.relay_vm, "run", os.path.join(HERE, "programs", "count_loop.relay")]
    python = [sys.executable, os.path.join(HERE, "count_loop.py")]
    times = {"relay-vm": [], "cpython": []}
    wall_time(relay)  # warm the page cache for both
    wall_time(python)
    for _ in range(args.runs):
        times["relay-vm"].append(wall_time(relay))
        times["cpython"].append(wall_time(python))
    for name, samples in times.items():
        print(f"{name:9s} median {statistics.median(samples) * 1e3:6.1f} ms, "
              f"min {min(samples) * 1e3:6.1f} ms ({len(samples)} runs)")
    ratio = statistics.median(times["cpython"]) / statistics.median(times["relay-vm"])
    print(f"relay-vm is {ratio:.2f}x CPython's speed (median over median)")


if __name__ == "__main__":
    main()
