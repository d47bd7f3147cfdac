#!/usr/bin/python3
"""Runs training steps under memory budgets (relay-vm run --memory-budget).

    /usr/bin/python3 bench/dtr/budgets.py [--relay-vm build/release/relay-vm]
        [--runs 5] [--markdown FILE]

Two training steps, each a forward pass, its gradient (derived by relay-vm)
and an SGD update:
  mlp32    a 32-layer perceptron (width 64, tanh, batch 1024, squared error):
           plain dataflow, so its gradient is dataflow too (the first-order
           path of docs/autodiff.md). Written by this script to
           build/bench-dtr/mlp32_step.relay, with its weights and data.
  lstm128  examples/train_lstm.relay's @step on one sequence of 128 steps:
           the gradient goes through the recursive loop over the steps (the
           higher-order path: closures and references).

For each: the unbudgeted run's peak memory (--stats), then budgets of 100%,
50% and 25% of it, and the smallest budget that works (bisection, to 1% of
the peak). For each budget: the peak, evictions and recomputations of one
run, the median time of --runs runs (relay-vm times them itself, --repeat),
and whether the result is identical, byte for byte, to the unbudgeted one.
A budget that fails says why (the bytes it needed at once, or thrashing).
The table (markdown) goes to stdout.
"""

import argparse
import os
import re
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "build", "bench-dtr")


def write_mlp32():
    layers, width, batch = 32, 64, 1024
    params = "".join(f", %w{l}: Tensor[({width}, {width}), float32], %b{l}: Tensor[({width},), float32]"
                     for l in range(layers))
    args = "".join(f", %w{l}, %b{l}" for l in range(layers))
    body = "  let %h0 = %x;\n" + "".join(
        f"  let %h{l + 1} = tanh(nn.bias_add(nn.dense(%h{l}, %w{l}), %b{l}));\n"
        for l in range(layers))
    data = f"%x: Tensor[(?, {width}), float32], %y: Tensor[(?, {width}), float32]"
    text = '#[version = "0.0.5"]\n'
    text += "// A 32-layer perceptron's training step (bench/dtr/budgets.py wrote it).\n"
    text += f"def @loss({data}{params}) {{\n{body}"
    text += f"  let %error = subtract(%h{layers}, %y);\n  mean(multiply(%error, %error))\n}}\n"
    text += f"def @main({data}{params}) {{\n"
    text += f"  let %step = @loss_grad(%x, %y{args});\n  let %d = %step.1;\n  (%step.0"
    for l in range(layers):
        # Slots 0 and 1 are x's and y's gradients.
        text += f",\n   subtract(%w{l}, multiply(0.1f, %d.{2 * l + 2}))"
        text += f", subtract(%b{l}, multiply(0.1f, %d.{2 * l + 3}))"
    text += ")\n}\n"
    path = os.path.join(WORK, "mlp32_step.relay")
    with open(path, "w") as file:
        file.write(text)
    rng = np.random.default_rng(2026)
    weights = {}
    for l in range(layers):
        bound = 1.0 / np.sqrt(width)
        weights[f"w{l}"] = rng.uniform(-bound, bound, (width, width)).astype(np.float32)
        weights[f"b{l}"] = rng.uniform(-bound, bound, (width,)).astype(np.float32)
    weights["x"] = rng.uniform(-1, 1, (batch, width)).astype(np.float32)
    weights["y"] = rng.uniform(-1, 1, (batch, width)).astype(np.float32)
    np.savez(os.path.join(WORK, "mlp32_inputs.npz"), **weights)
    return [path, "--params", os.path.join(WORK, "mlp32_inputs.npz")]


def write_lstm128():
    rng = np.random.default_rng(2027)
    sequence = rng.normal(0, 0.5, (128, 8)).astype(np.float32)
    np.save(os.path.join(WORK, "lstm128_sequence.npy"), sequence)
    return [os.path.join(ROOT, "examples", "train_lstm.relay"), "--entry", "step",
            "--params", os.path.join(ROOT, "examples", "lstm_params.npz"),
            "--input", "sequence=" + os.path.join(WORK, "lstm128_sequence.npy"),
            "--input", "label=2", "--input", "rate=0.1"]


def run(relay_vm, program, budget=None, runs=0, output=None):
    command = [relay_vm, "run"] + program + ["--stats"]
    if budget is not None:
        command += ["--memory-budget", str(budget)]
    if runs:
        command += ["--repeat", str(runs)]
    if output:
        command += ["--output", output]
    environment = dict(os.environ, RELAY_NUM_THREADS="2")
    result = subprocess.run(command, capture_output=True, text=True, env=environment)
    if result.returncode != 0:
        if "reasonable time" in result.stderr:
            return "fails: thrashes (more than 50 recomputations per operator call)"
        needs = re.search(r"needs at least (\d+) bytes", result.stderr)
        return "fails: needs " + needs.group(1) + " bytes at once" if needs else "fails"
    stats = {}
    for key in ("peak memory", "evictions", "recomputations"):
        stats[key] = int(re.search(key + r": (\d+)", result.stderr).group(1))
    median = re.search(r"median ([0-9.]+) ms", result.stderr)
    stats["ms"] = float(median.group(1)) if median else None
    return stats


def same_files(left, right):
    a, b = np.load(left), np.load(right)
    return list(a.keys()) == list(b.keys()) and all(
        a[key].tobytes() == b[key].tobytes() for key in a.keys())


def measure(relay_vm, name, program, runs):
    baseline_output = os.path.join(WORK, f"{name}_unbudgeted.npz")
    baseline = run(relay_vm, program, runs=runs, output=baseline_output)
    if isinstance(baseline, str):
        sys.exit(f"{name}: the unbudgeted run failed")
    peak = baseline["peak memory"]
    works, fails = peak, 0
    while works - fails > peak // 100:
        middle = (works + fails) // 2
        if isinstance(run(relay_vm, program, middle), dict):
            works = middle
        else:
            fails = middle
    rows = [("none", None, baseline, True)]
    output = os.path.join(WORK, f"{name}_budget.npz")
    for label, budget in (("100%", peak), ("50%", peak // 2), ("25%", peak // 4)):
        stats = run(relay_vm, program, budget, runs=runs, output=output)
        rows.append((label, budget, stats,
                     isinstance(stats, dict) and same_files(baseline_output, output)))
    # Eviction weighs measured kernel times, so a budget at the edge may
    # fail on another run: the smallest is the first that works for all the
    # timed runs too.
    while True:
        stats = run(relay_vm, program, works, runs=runs, output=output)
        if isinstance(stats, dict):
            break
        works += peak // 100
    rows.append((f"smallest ({100 * works / peak:.0f}%)", works, stats,
                 same_files(baseline_output, output)))
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--relay-vm", default=os.path.join(ROOT, "build", "release", "relay-vm"))
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--markdown")
    options = parser.parse_args()
    os.makedirs(WORK, exist_ok=True)
    lines = ["| step | budget | bytes | peak (bytes) | evictions | recomputations "
             "| median ms | slowdown | result |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, program in (("mlp32", write_mlp32()), ("lstm128", write_lstm128())):
        rows = measure(options.relay_vm, name, program, options.runs)
        base_ms = rows[0][2]["ms"]
        for label, budget, stats, same in rows:
            if isinstance(stats, str):
                lines.append(f"| {name} | {label} | {budget} | {stats} | | | | | |")
                continue
            lines.append(
                f"| {name} | {label} | {budget if budget else ''} | {stats['peak memory']} "
                f"| {stats['evictions']} | {stats['recomputations']} | {stats['ms']:.2f} "
                f"| {stats['ms'] / base_ms:.2f}x | {'identical' if same else 'DIFFERS'} |")
        print(f"{name} done", file=sys.stderr)
    table = "\n".join(lines) + "\n"
    print(table)
    if options.markdown:
        with open(options.markdown, "w") as file:
            file.write(table)


if __name__ == "__main__":
    main()
