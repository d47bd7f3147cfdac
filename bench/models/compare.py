#!/usr/bin/python3
"""Runs the model suite on relay-vm, PyTorch and ONNX Runtime; prints a table.

    /usr/bin/python3 bench/models/compare.py [--relay-vm build/release/relay-vm]
        [--runs 20] [--max-seconds 3] [--models lstm_512,transformer,...]
        [--systems relay-vm,pytorch,ort] [--markdown FILE] [--update-docs]
        [--relay-device opencl:0]

For every model of bench/models/models.py and every case of it (a sequence
length, a batch size), one after the other: relay-vm, then PyTorch, then ONNX
Runtime, each on the same weights and inputs, each with 2 threads. Each output
is checked against PyTorch's (the reference); a disagreement or a failure is a
FAIL in the table's last column, with the details listed under the table. The
table (markdown) goes to stdout, progress to stderr.

Timing, all medians of wall-clock times of one inference, after warm-up,
excluding start-up, loading and compilation:
  relay-vm   `relay-vm run MODEL.relay --params W.npz --input ... --repeat N`
             with RELAY_NUM_THREADS=2; relay-vm times the runs itself and
             prints the median on stderr. A first call with --repeat 1 (which
             also writes the output and compiles the kernels into the disk
             cache) gives the time of one run, from which N is chosen.
  PyTorch    in this process: torch.set_num_threads(2), torch.inference_mode(),
             warm-up runs (at least 3 and half a second), then N timed runs
             of the module, with OMP_WAIT_POLICY=PASSIVE unless the environment
             sets it (the comment where it is set says why).
  ORT        bench/models/ort_runner.js (onnxruntime-node, CPU provider,
             2 intra-op threads, 1 inter-op thread, all graph optimisations),
             the same warm-up, then N timed runs.
--relay-device runs relay-vm's tensor work on that device (`relay-vm run
--device`, docs/devices.md); the peers stay on the CPU.
N is --runs, or fewer where N runs would take more than --max-seconds (at
least 3 runs), so that slow models keep the whole suite short. A case is
measured again (up to three times in all) when other processes took more than
10% of the CPUs meanwhile; the report names the cases that stayed busy.

Needs the peers: run bench/models/install-peers.sh (as root) once. Models are
generated into build/bench-models/ on first use (models.py).
"""

import argparse
import datetime
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

# PyTorch's OpenMP threads, by default, spin while they wait for work; on two
# cores that shared with anything else (Python itself, PyTorch's own helper
# threads) this stalls whole runs for 4-16 ms, so that medians of the default
# jump between, say, 0.8 and 16 ms from one run of this script to the next.
# Waiting passively is as fast or faster for every model here and stable; it
# must be set before torch loads OpenMP. OMP_WAIT_POLICY=ACTIVE in the
# environment measures the default instead.
OMP_WAIT_POLICY_OURS = "OMP_WAIT_POLICY" not in os.environ
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORT_RUNNER = os.path.join(HERE, "ort_runner.js")
ORT_PACKAGE = os.path.join(ROOT, "build", "bench-peers", "node_modules", "onnxruntime-node",
                           "package.json")
DOCS = os.path.join(ROOT, "docs", "performance.md")
DOCS_BEGIN = "<!-- compare.py results begin -->"
DOCS_END = "<!-- compare.py results end -->"
SYSTEMS = ("relay-vm", "pytorch", "ort")
# Warm-up for every system: at least 3 runs and at least half a second, since
# times fall over the first runs (allocators, caches, OpenMP's thread team,
# clock speeds, the scheduler spreading a new process's threads over the
# CPUs, which can take milliseconds: a batch-one perceptron ran at one
# thread's speed for its first 1-2 ms). relay-vm gets its first run and
# --warmup's seconds.
WARMUP = 3
WARMUP_SECONDS = 0.5
# A case is measured again (twice at most) when other processes took more
# than this share of the CPUs while it ran: two threads on two cores wait for
# each other when a third process takes one.
BUSY_SHARE = 0.10
# Agreement: np.allclose(output, reference, rtol, atol * max(1, max |reference|)).
# The absolute part scales with the output's magnitude: ResNet's logits are
# in the tens, and float32 rounding in a 512-long dot product is relative to
# the magnitudes summed, not to the (possibly near-zero) result.
RTOL = 1e-3
ATOL = 1e-4
RELAY_TIMING = re.compile(r"relay-vm: (\d+) runs, median ([0-9.]+) ms, min ([0-9.]+) ms")

try:
    import torch

    import models
except ImportError as error:  # torch (or onnx) not installed
    sys.exit(f"compare.py: {error}; install the peers with bench/models/install-peers.sh")


class Measurement:
    """One system's result on one case: a median time and an output, or an error."""

    def __init__(self, ms=None, runs=0, output=None, error=None):
        self.ms = ms
        self.runs = runs
        self.output = output
        self.error = error


class CpuMeter:
    """Other processes' share of the CPUs since the meter was made: the
    machine's busy time (/proc/stat) less this process's and its finished
    children's (the relay-vm and node processes). None where /proc is not."""

    def __init__(self):
        self.start = self.sample()

    @staticmethod
    def sample():
        try:
            with open("/proc/stat") as stat:
                fields = [int(value) for value in stat.readline().split()[1:9]]
        except (OSError, ValueError):
            return None
        # user, nice, system, idle, iowait, irq, softirq, steal: all but idle and
        # iowait are busy (steal is other virtual machines on the same cores).
        busy = (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")
        times = os.times()
        ours = times.user + times.system + times.children_user + times.children_system
        return time.monotonic(), busy, ours

    def others_share(self):
        end = self.sample()
        if self.start is None or end is None or end[0] <= self.start[0]:
            return None
        others = (end[1] - self.start[1]) - (end[2] - self.start[2])
        return max(0.0, others) / ((end[0] - self.start[0]) * (os.cpu_count() or 1))


def child_environment():
    """The environment for relay-vm and node: the OpenMP setting is PyTorch's."""
    env = dict(os.environ)
    if OMP_WAIT_POLICY_OURS:
        del env["OMP_WAIT_POLICY"]
    return env


def last_lines(text, count=3):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return "\n".join(lines[-count:])


def run_relay_vm(args, model, case, workdir):
    output = os.path.join(workdir, "relay-vm.npy")
    if args.from_onnx and model.onnx_path is not None:
        # The same model through the ONNX importer (docs/onnx.md).
        command = [args.relay_vm, "run", model.onnx_path]
    else:
        command = [args.relay_vm, "run", model.relay, "--params", model.params_path]
    for name in case.inputs:
        command += ["--input", f"{name}={model.input_path(case, name)}"]
    command += ["--output", output]
    if args.relay_device:
        command += ["--device", args.relay_device]
    if getattr(args, "relay_byoc", None):
        command += ["--byoc", args.relay_byoc]
    env = dict(child_environment(), RELAY_NUM_THREADS=str(args.threads))

    def run(repeat, warmup_seconds=0):
        # The result also goes to stdout, in full for small tensors: discard it.
        timing = ["--repeat", str(repeat)]
        if warmup_seconds > 0:
            timing += ["--warmup", str(warmup_seconds)]
        process = subprocess.run(command + timing, env=env, text=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                 timeout=args.timeout)
        if process.returncode != 0:
            raise RuntimeError(f"exit status {process.returncode}: "
                               + last_lines(process.stderr))
        match = RELAY_TIMING.search(process.stderr)
        if not match:
            raise RuntimeError("no timing line on stderr: " + last_lines(process.stderr))
        return int(match.group(1)), float(match.group(2))

    try:
        _, probe_ms = run(1)
        result = np.load(output)
        runs = runs_within(args, probe_ms)
        runs, median = run(runs, WARMUP_SECONDS) if runs > 1 else (1, probe_ms)
        return Measurement(median, runs, result)
    except subprocess.TimeoutExpired:
        return Measurement(error=f"timed out after {args.timeout} s: {' '.join(command)}")
    except (RuntimeError, OSError, ValueError) as error:
        # The command to reproduce it, from the repository's root.
        shown = [part.replace(ROOT + os.sep, "") for part in command[:-1]] + ["out.npy"]
        return Measurement(error=f"{error}\n  command: RELAY_NUM_THREADS={args.threads} "
                           + " ".join(shown))


def runs_within(args, ms_per_run):
    return max(3, min(args.runs, int(args.max_seconds * 1000 / max(ms_per_run, 1e-3))))


def run_pytorch(args, module, model, case):
    tensors = [torch.from_numpy(np.load(model.input_path(case, name))) for name in case.inputs]
    try:
        with torch.inference_mode():
            warmup_start = time.perf_counter()
            runs = 0
            while runs < WARMUP or time.perf_counter() - warmup_start < WARMUP_SECONDS:
                result = module(*tensors)
                runs += 1
            times = []
            started = time.perf_counter()
            for _ in range(args.runs):
                start = time.perf_counter()
                result = module(*tensors)
                end = time.perf_counter()
                times.append((end - start) * 1000)
                if len(times) >= 3 and end - started > args.max_seconds:
                    break
        return Measurement(statistics.median(times), len(times), result.numpy().copy())
    except Exception as error:  # report, don't stop the suite
        return Measurement(error=f"{type(error).__name__}: {error}")


def run_ort(args, model, case, workdir):
    if model.onnx_path is None:
        return None  # no ONNX peer for this model
    output = os.path.join(workdir, "ort.npy")
    command = ["node", ORT_RUNNER, model.onnx_path]
    for name in case.inputs:
        command += ["--input", f"{name}={model.input_path(case, name)}"]
    command += ["--output", output, "--runs", str(args.runs), "--warmup", str(WARMUP),
                "--warmup-seconds", str(WARMUP_SECONDS),
                "--max-seconds", str(args.max_seconds), "--threads", str(args.threads)]
    try:
        process = subprocess.run(command, text=True, capture_output=True, timeout=args.timeout,
                                 env=child_environment())
    except subprocess.TimeoutExpired:
        return Measurement(error=f"timed out after {args.timeout} s")
    except OSError as error:
        return Measurement(error=str(error))
    if process.returncode != 0:
        return Measurement(error=last_lines(process.stderr or process.stdout))
    report = json.loads(process.stdout.strip().splitlines()[-1])
    return Measurement(report["median_ms"], report["runs"], np.load(output))


def disagreement(output, reference):
    """None if `output` agrees with `reference`, else why not."""
    if output.shape != reference.shape:
        return f"shape {output.shape}, PyTorch's {reference.shape}"
    atol = ATOL * max(1.0, float(np.abs(reference).max()))
    if np.allclose(output, reference, rtol=RTOL, atol=atol):
        return None
    error = np.abs(output.astype(np.float64) - reference)
    worst = np.unravel_index(np.argmax(error - RTOL * np.abs(reference)), error.shape)
    return (f"max |difference| {error.max():.3g} (at {tuple(map(int, worst))}: "
            f"{output[worst]:.6g} against PyTorch's {reference[worst]:.6g}); "
            f"rtol {RTOL:g}, atol {atol:.3g}")


def format_ms(ms):
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    if ms >= 1:
        return f"{ms:.2f}"
    return f"{ms:.3f}"  # relay-vm prints its times to the microsecond


def command_version(command):
    try:
        process = subprocess.run(command, capture_output=True, text=True, timeout=30)
        return (process.stdout or process.stderr).strip().splitlines()[0]
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "unknown"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def header_lines(args, busy):
    try:
        with open(ORT_PACKAGE) as package:
            ort_version = json.load(package)["version"]
    except (OSError, ValueError, KeyError):
        ort_version = "not installed"
    commit = command_version(["git", "-C", ROOT, "describe", "--always", "--dirty"])
    torch_package = command_version(["dpkg-query", "-W", "-f", "${Version}", "python3-torch"])
    cores = os.cpu_count()
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else cores
    return [
        f"- date: {datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')}",
        f"- machine: {cpu_model()}, {cores} logical cores ({available} usable), "
        f"{platform.system()} {platform.release()}"
        + (f"; other processes took {busy:.0%} of the CPUs during the run"
           if busy is not None else ""),
        f"- threads: {args.threads} in every system (RELAY_NUM_THREADS={args.threads}; "
        f"torch.set_num_threads({args.threads}) with OMP_WAIT_POLICY="
        f"{os.environ['OMP_WAIT_POLICY']}; ONNX Runtime intra-op {args.threads}, inter-op 1)",
        f"- relay-vm: {command_version([args.relay_vm, '--version'])}, commit {commit}",
        f"- peers: PyTorch {torch.__version__} (Debian python3-torch {torch_package}), "
        "ONNX Runtime "
        f"{ort_version} (onnxruntime-node, CPU), Node.js {command_version(['node', '--version'])}, "
        f"ONNX opset {models.ONNX_OPSET}",
        f"- times: medians of up to {args.runs} runs after warm-up, at most about "
        f"{args.max_seconds:g} s of timed runs per system and case; ratios above 1 mean "
        "relay-vm is faster",
    ]


def table_cell(text):
    return text.replace("|", "\\|").replace("\n", " ")


def check_generated_relay(model, module):
    """Warns when a committed .relay that models.py writes is out of date."""
    text = models.generated_relay_text(model, module)
    if text is None:
        return
    with open(model.relay) as relay:
        if relay.read() != text:
            print(f"compare.py: warning: {os.path.relpath(model.relay, ROOT)} is not what "
                  "models.py writes; run `/usr/bin/python3 bench/models/models.py "
                  "--write-relay`", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    parser.add_argument("--relay-vm", default=os.path.join(ROOT, "build", "release", "relay-vm"),
                        help="the relay-vm command (default: build/release/relay-vm)")
    parser.add_argument("--from-onnx", action="store_true",
                        help="run relay-vm on each model's ONNX export (through its importer) "
                             "instead of the hand-written .relay and .npz, where there is one")
    parser.add_argument("--runs", type=int, default=20, help="timed runs per system (20)")
    parser.add_argument("--max-seconds", type=float, default=3.0,
                        help="fewer runs (at least 3) where they would take longer (3)")
    parser.add_argument("--threads", type=int, default=2, help="threads in every system (2)")
    parser.add_argument("--models", default=",".join(models.BY_NAME),
                        help="comma-separated models (default: all): "
                        + ",".join(models.BY_NAME))
    parser.add_argument("--systems", default=",".join(SYSTEMS),
                        help="comma-separated systems to run (default: relay-vm,pytorch,ort); "
                        "PyTorch always runs, as the reference")
    parser.add_argument("--markdown", metavar="FILE", help="also write the report to FILE")
    parser.add_argument("--relay-device", metavar="DEVICE",
                        help="run relay-vm's tensor work on DEVICE (opencl:0, cuda:0); "
                        "the peers stay on the CPU")
    parser.add_argument("--update-docs", action="store_true",
                        help="replace the results in docs/performance.md with this run's")
    parser.add_argument("--timeout", type=int, default=600,
                        help="seconds before a relay-vm or ORT process is given up (600)")
    args = parser.parse_args()

    if args.update_docs and args.relay_device:
        parser.error("--update-docs records CPU figures; leave out --relay-device")
    names = [name for name in args.models.split(",") if name]
    unknown = [name for name in names if name not in models.BY_NAME]
    if unknown:
        parser.error(f"unknown model(s) {', '.join(unknown)}; the models are "
                     + ", ".join(models.BY_NAME))
    systems = set(args.systems.split(",")) | {"pytorch"}
    if systems - set(SYSTEMS):
        parser.error(f"unknown system(s) {', '.join(systems - set(SYSTEMS))}")
    if "relay-vm" in systems and not os.access(args.relay_vm, os.X_OK):
        sys.exit(f"compare.py: no relay-vm at {args.relay_vm}; build it (see README.md) "
                 "or pass --relay-vm")
    if "ort" in systems and not shutil.which("node"):
        sys.exit("compare.py: no node command; run bench/models/install-peers.sh")
    args.relay_vm = os.path.abspath(args.relay_vm)
    torch.set_num_threads(args.threads)

    rows = []
    failures = []
    busy_cases = []
    started = time.time()
    run_meter = CpuMeter()
    with tempfile.TemporaryDirectory(prefix="relay-bench-") as workdir:
        for name in names:
            model = models.BY_NAME[name]
            module = models.generate(model)
            check_generated_relay(model, module)
            for case in model.cases():
                for attempt in range(3):
                    meter = CpuMeter()
                    results = {}
                    # One system after the other on the same case, so that all
                    # three see the same state of the machine.
                    if "relay-vm" in systems:
                        results["relay-vm"] = run_relay_vm(args, model, case, workdir)
                    results["pytorch"] = run_pytorch(args, module, model, case)
                    if "ort" in systems:
                        results["ort"] = run_ort(args, model, case, workdir)
                    busy = meter.others_share()
                    print(f"compare.py: {model.title}, {case.label}: "
                          + ", ".join(f"{system} " + (format_ms(result.ms) + " ms"
                                                      if result.ms is not None else "FAIL")
                                      for system, result in results.items() if result is not None)
                          + (f" (other processes: {busy:.0%} of the CPUs)"
                             if busy is not None else ""), file=sys.stderr)
                    if busy is None or busy <= BUSY_SHARE:
                        break
                    if attempt < 2:
                        print("compare.py: the machine is busy; measuring again",
                              file=sys.stderr)
                else:
                    busy_cases.append(f"{model.title}, {case.label} ({busy:.0%})")
                rows.append(make_row(model, case, results, failures))
    busy = run_meter.others_share()

    command = ["/usr/bin/python3", os.path.relpath(os.path.abspath(sys.argv[0]), ROOT)]
    lines = ["# relay-vm model benchmarks", ""] + header_lines(args, busy)
    lines.append(f"- command: `{' '.join(command + sys.argv[1:])}` (from the repository's "
                 f"root; took {time.time() - started:.0f} s)")
    lines += ["", "| model | size | relay-vm ms | PyTorch ms | ORT ms | PyTorch/relay-vm "
              "| ORT/relay-vm | outputs |",
              "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    lines += ["| " + " | ".join(table_cell(cell) for cell in row) + " |" for row in rows]
    if busy_cases:
        lines += ["", f"Measured while other processes took more than {BUSY_SHARE:.0%} of "
                  "the CPUs (three times; the times are unreliable): " + "; ".join(busy_cases)
                  + "."]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {failure}" for failure in failures]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(report)
    if args.update_docs:
        update_docs(report)
    return 1 if failures else 0


def make_row(model, case, results, failures):
    reference = results["pytorch"]
    times = {}
    problems = []
    for system, title in [("relay-vm", "relay-vm"), ("pytorch", "PyTorch"), ("ort", "ORT")]:
        result = results.get(system)
        if result is None:
            times[system] = "–"  # not run: no ONNX peer, or left out by --systems
            continue
        if result.error is not None:
            times[system] = "FAIL"
            problems.append(f"{title} failed")
            failures.append(f"{model.title}, {case.label}: {title} failed: {result.error}")
            continue
        times[system] = format_ms(result.ms)
        if system != "pytorch" and reference.output is not None:
            why = disagreement(result.output, reference.output)
            if why is not None:
                problems.append(f"{title} disagrees")
                failures.append(f"{model.title}, {case.label}: {title} disagrees with "
                                f"PyTorch: {why}")
    relay = results.get("relay-vm")

    def ratio(system):
        peer = results.get(system)
        if (relay is None or peer is None or relay.ms is None or peer.ms is None
                or relay.error or peer.error):
            return "–"
        return f"{peer.ms / relay.ms:.2f}"

    check = "FAIL: " + ", ".join(problems) if problems else "agree"
    return [model.title, case.label, times["relay-vm"], times["pytorch"], times["ort"],
            ratio("pytorch"), ratio("ort"), check]


def update_docs(report):
    with open(DOCS) as docs:
        text = docs.read()
    begin = text.find(DOCS_BEGIN)
    end = text.find(DOCS_END)
    if begin < 0 or end < begin:
        sys.exit(f"compare.py: {DOCS} has no {DOCS_BEGIN} ... {DOCS_END} section")
    # The report's title would be a second top-level heading in the document.
    body = report.split("\n", 2)[2]
    text = text[:begin + len(DOCS_BEGIN)] + "\n" + body + text[end:]
    with open(DOCS, "w") as docs:
        docs.write(text)
    print(f"compare.py: updated {os.path.relpath(DOCS, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
