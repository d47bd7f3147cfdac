#!/usr/bin/python3
"""relay-vm's own kernels against its external codegens (BYOC) and ONNX Runtime.

    /usr/bin/python3 bench/byoc/codegens.py [--relay-vm build/release/relay-vm]
        [--models resnet18,mobilenet_v2,...] [--codegens dnnl,cblas]
        [--runs 20] [--max-seconds 3] [--threads 2] [--markdown FILE]

For each case of each model (bench/models/models.py; all of them unless
--models names some), one after the other on the
same weights and inputs: `relay-vm run` with its own kernels, then with
`--byoc C` for each codegen C, then PyTorch (the reference every output is
checked against) and ONNX Runtime, timed as bench/models/compare.py times them
(whose functions this reuses; its docstring says how). A codegen that takes
nothing of a model runs it on relay-vm's kernels: its time is then relay-vm's.
The table (markdown) goes to stdout, progress to stderr; docs/byoc.md holds
the figures.

Needs the peers: run bench/models/install-peers.sh (as root) once.
"""
import argparse
import copy
import os
import shutil
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))

import compare  # noqa: E402  (bench/models/compare.py)
import models  # noqa: E402
import torch  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--relay-vm", default=os.path.join(compare.ROOT, "build", "release",
                                                           "relay-vm"))
    parser.add_argument("--models", default=",".join(models.BY_NAME))
    parser.add_argument("--codegens", default="dnnl,cblas",
                        help="each is one --byoc list: dnnl, cblas, dnnl+cblas ('+' for ',')")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--max-seconds", type=float, default=3.0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--timeout", type=int, default=600)
    parser.add_argument("--markdown", metavar="FILE")
    args = parser.parse_args()
    args.relay_vm = os.path.abspath(args.relay_vm)
    args.from_onnx = False
    args.relay_device = None
    args.relay_byoc = None
    if not os.access(args.relay_vm, os.X_OK):
        sys.exit(f"codegens.py: no relay-vm at {args.relay_vm}; build it (see README.md)")
    with_ort = shutil.which("node") is not None and os.path.exists(compare.ORT_PACKAGE)
    if not with_ort:
        print("codegens.py: no ONNX Runtime (run bench/models/install-peers.sh); its column "
              "is left empty", file=sys.stderr)
    torch.set_num_threads(args.threads)
    codegens = [item.replace("+", ",") for item in args.codegens.split(",") if item]
    systems = ["relay-vm"] + [f"--byoc {codegen}" for codegen in codegens]

    started = time.time()
    rows, failures = [], []
    with tempfile.TemporaryDirectory(prefix="relay-byoc-") as workdir:
        for name in args.models.split(","):
            model = models.BY_NAME[name]
            module = models.generate(model)
            for case in model.cases():
                results = {}
                for system, codegen in zip(systems, [None] + codegens):
                    run_args = copy.copy(args)
                    run_args.relay_byoc = codegen
                    results[system] = compare.run_relay_vm(run_args, model, case, workdir)
                results["PyTorch"] = compare.run_pytorch(args, module, model, case)
                results["ORT"] = compare.run_ort(args, model, case, workdir) if with_ort else None
                print(f"codegens.py: {model.title}, {case.label}: "
                      + ", ".join(f"{system} " + (compare.format_ms(result.ms) + " ms"
                                                  if result.ms is not None else "FAIL")
                                  for system, result in results.items() if result is not None),
                      file=sys.stderr)
                rows.append(row(model, case, results, systems, failures))

    lines = ["# relay-vm's kernels, its external codegens and ONNX Runtime", ""]
    lines += compare.header_lines(args, None)[:-1]
    lines.append(f"- command: `/usr/bin/python3 bench/byoc/codegens.py {' '.join(sys.argv[1:])}`"
                 f" (took {time.time() - started:.0f} s)")
    lines.append("- milliseconds per inference (medians); every output agrees with PyTorch's "
                 "unless the last column says otherwise")
    titles = systems + ["PyTorch", "ORT"]
    lines += ["", "| model | size | " + " | ".join(f"{title} ms" for title in titles)
              + " | outputs |", "| --- | --- |" + " ---: |" * len(titles) + " --- |"]
    lines += ["| " + " | ".join(cells) + " |" for cells in rows]
    if failures:
        lines += ["", "Failures:", ""] + [f"- {failure}" for failure in failures]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(report)
    return 1 if failures else 0


def row(model, case, results, systems, failures):
    reference = results["PyTorch"]
    cells, problems = [model.title, case.label], []
    for system in systems + ["PyTorch", "ORT"]:
        result = results.get(system)
        if result is None:
            cells.append("–")
            continue
        if result.error is not None:
            cells.append("FAIL")
            problems.append(f"{system} failed")
            failures.append(f"{model.title}, {case.label}: {system} failed: {result.error}")
            continue
        cells.append(compare.format_ms(result.ms))
        if system != "PyTorch" and reference.output is not None:
            why = compare.disagreement(result.output, reference.output)
            if why is not None:
                problems.append(f"{system} disagrees")
                failures.append(f"{model.title}, {case.label}: {system} disagrees with "
                                f"PyTorch: {why}")
    cells.append("FAIL: " + ", ".join(problems) if problems else "agree")
    return cells


if __name__ == "__main__":
    sys.exit(main())
