#!/usr/bin/python3
"""Loopback load test of `relay-vm serve`: latency and throughput of an MLP and an LSTM.

    /usr/bin/python3 bench/serve/run.py [--seconds 3] [--clients 1,8,64] [--update-docs]

For each model, the server runs twice (--workers 2, each worker's kernels on
one thread: RELAY_NUM_THREADS=1, --threads): without dynamic batching, and
with --max-batch 64 --batch-timeout-us 500. At each number of concurrent
clients, build/release/bench/serve_load posts one request back to back on a
keep-alive connection per client for --seconds (after a tenth of that as
warm-up) and reports p50/p99 latency and throughput. Every answer must be 200,
and before timing, the server's answer is checked against PyTorch's module
with the same weights. The same request's inputs are also run by
relay::VirtualMachine::Invoke directly (serve_load direct, on as many
threads), and the server's per-request overhead is its p50 at one client minus
that (medians of 5 alternating one-second runs of each). The server's own
share, from its request read to its answer written (its latency histogram's
sum over count, at /metrics), minus Invoke's mean, is reported too: it leaves
out the client and the loopback trips. For context, the
round trip of HTTP alone (GET /v2/health/live: no body, no JSON, no worker)
and the protocol's work (serve_load protocol: reading the request, writing the
answer) are measured too. The overhead is measured twice: with the tensors as
JSON numbers, and as bytes (Triton's binary data extension, its clients'
default).

The models (bench/models/models.py writes their weights into
build/bench-models/):
  mlp   bench/models/mlp.relay, 784-512-512-10; a request is one row.
  lstm  bench/serve/lstm_batch_first.relay, LSTM 128/128 (lstm_128's weights),
        batch first; a request is one sequence of 16 steps.

With --slow-clients M (300 by default; 0: none), each model gets one more row,
without batching at 8 clients: the same load with M more connections held open
for the whole run, each sending a request's first line and then one header
line a second, never finishing (the clients that stalled the server while it
had a thread per connection).

--relay-vm PATH measures another build of relay-vm (an older one, to compare).
--update-docs writes the table into docs/serving.md.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "bench", "models"))
import models  # noqa: E402

BUILD = os.path.join(ROOT, "build", "release")
OUT = os.path.join(ROOT, "build", "bench-serve")
BATCHING = ["--max-batch", "64", "--batch-timeout-us", "500"]
ROUNDS = 5


def mlp_case():
    module = models.generate(models.BY_NAME["mlp"])
    x = np.random.default_rng(7).normal(size=(1, 784)).astype(np.float32)
    with torch.no_grad():
        expected = module(torch.from_numpy(x)).numpy()
    return {"name": "mlp", "title": "MLP 784-512-512-10, 1 row",
            "program": os.path.join(ROOT, "bench", "models", "mlp.relay"),
            "params": models.BY_NAME["mlp"].params_path,
            "input": ("input", x), "expected": expected}


def lstm_case():
    module = models.generate(models.BY_NAME["lstm_128"])
    sequence = np.random.default_rng(8).normal(size=(1, 16, 128)).astype(np.float32)
    with torch.no_grad():
        _, (hidden, _) = module.lstm(torch.from_numpy(sequence).transpose(0, 1))
    return {"name": "lstm", "title": "LSTM 128/128, 16 steps",
            "program": os.path.join(HERE, "lstm_batch_first.relay"),
            "params": models.BY_NAME["lstm_128"].params_path,
            "input": ("sequence", sequence), "expected": hidden[0].numpy()}


def write_body(case):
    name, value = case["input"]
    body = {"inputs": [{"name": name, "shape": list(value.shape), "datatype": "FP32",
                        "data": value.flatten().tolist()}]}
    path = os.path.join(OUT, case["name"] + "_request.json")
    with open(path, "w") as file:
        json.dump(body, file)
    return path, json.dumps(body).encode()


def write_binary_body(case):
    """The same request in Triton's binary data extension: JSON, then the input's bytes,
    the output asked for in bytes too. Returns the file and the JSON's length."""
    name, value = case["input"]
    header = json.dumps({"inputs": [{"name": name, "shape": list(value.shape), "datatype": "FP32",
                                     "parameters": {"binary_data_size": value.nbytes}}],
                         "parameters": {"binary_data_output": True}}).encode()
    path = os.path.join(OUT, case["name"] + "_request.bin")
    with open(path, "wb") as file:
        file.write(header + value.astype("<f4").tobytes())
    return path, len(header)


def environment(args):
    return dict(os.environ, RELAY_NUM_THREADS=str(args.threads))


class Server:
    def __init__(self, relay_vm, case, extra, args):
        self.process = subprocess.Popen(
            [relay_vm, "serve", case["program"], "--params", case["params"], "--name", case["name"],
             "--port", "0", "--workers", "2"] + extra,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(args))
        line = self.process.stdout.readline()
        match = re.search(r":(\d+) \(", line)
        if not match:
            raise SystemExit(f"run.py: relay-vm serve did not start: {line}{self.process.stderr.read()}")
        self.port = int(match.group(1))

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        if self.process.wait(timeout=60) != 0:
            raise SystemExit("run.py: relay-vm serve did not exit 0 on SIGTERM")


def check_answer(server, case, body):
    request = urllib.request.Request(f"http://127.0.0.1:{server.port}/v2/models/{case['name']}/infer",
                                     data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        output = json.load(response)["outputs"][0]
    got = np.array(output["data"], np.float32).reshape(output["shape"])
    if not np.allclose(got, case["expected"], rtol=1e-4, atol=1e-5):
        raise SystemExit(f"run.py: {case['name']}: the server's answer differs from PyTorch's "
                         f"(largest difference {np.abs(got - case['expected']).max()})")


def serve_load(arguments, args):
    output = subprocess.run([os.path.join(BUILD, "bench", "serve_load")] + arguments,
                            check=True, capture_output=True, text=True, env=environment(args)).stdout
    return json.loads(output.strip().splitlines()[-1])


def median(values):
    return sorted(values)[len(values) // 2]


def measure_overhead(relay_vm, case, body_path, body, protocol, args, json_length=None):
    """Medians of ROUNDS alternating one-second runs of direct Invoke, the server at one
    client, and HTTP alone (GET /v2/health/live): single runs on a shared 2-core machine
    vary with where the scheduler puts the threads."""
    server = Server(relay_vm, case, [], args)
    direct, direct_mean, served, inside, http_alone = [], [], [], [], []
    binary = ["--json-length", str(json_length)] if json_length is not None else []
    try:
        check_answer(server, case, body)
        for _ in range(ROUNDS):
            result = serve_load(["direct", "--program", case["program"], "--params",
                                 case["params"], "--body", body_path, "--seconds", "1"] + binary,
                                args)
            direct.append(result["p50_us"])
            direct_mean.append(result["mean_us"])
            before = server_time(server, case)
            served.append(serve_load(["http", "--port", str(server.port), "--model", case["name"],
                                      "--body", body_path, "--clients", "1", "--seconds", "1"]
                                     + binary, args)["p50_us"])
            after = server_time(server, case)
            inside.append((after[0] - before[0]) / (after[1] - before[1]) * 1e6)
            http_alone.append(serve_load(["http", "--port", str(server.port), "--health",
                                          "--clients", "1", "--seconds", "1"], args)["p50_us"])
    finally:
        server.stop()
    print(f"{case['name']}: direct {direct} (means {direct_mean}), served {served} (in the "
          f"server {inside}), HTTP alone {http_alone}, JSON in and out {protocol['p50_us']:.1f} us",
          file=sys.stderr)
    title = case["title"] + (", binary tensor data" if binary else ", JSON tensor data")
    return (title, median(direct), median(served), median(http_alone), protocol["p50_us"],
            median(direct_mean), median(inside))


def server_time(server, case):
    """The server's own account of its infer requests so far: (seconds from each request's
    arrival to its answer, summed; requests)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/metrics") as response:
        text = response.read().decode()
    label = f'{{model="{case["name"]}"}}'
    total = float(re.search(r"relay_serve_request_duration_seconds_sum" + re.escape(label) + r" (\S+)", text).group(1))
    count = float(re.search(r"relay_serve_request_duration_seconds_count" + re.escape(label) + r" (\S+)", text).group(1))
    return total, count


def measure(args):
    os.makedirs(OUT, exist_ok=True)
    relay_vm = args.relay_vm
    rows = []
    overheads = []
    for case in (mlp_case(), lstm_case()):
        body_path, body = write_body(case)
        protocol = serve_load(["protocol", "--program", case["program"], "--params", case["params"],
                               "--body", body_path, "--seconds", str(args.seconds)], args)
        overheads.append(measure_overhead(relay_vm, case, body_path, body, protocol, args))
        binary_path, json_length = write_binary_body(case)
        binary_protocol = serve_load(["protocol", "--program", case["program"], "--params",
                                      case["params"], "--body", binary_path, "--json-length",
                                      str(json_length), "--seconds", str(args.seconds)], args)
        overheads.append(measure_overhead(relay_vm, case, binary_path, body, binary_protocol, args,
                                          json_length))
        for batching in (False, True):
            server = Server(relay_vm, case, BATCHING if batching else [], args)
            try:
                check_answer(server, case, body)
                for clients in args.clients:
                    result = serve_load(["http", "--port", str(server.port), "--model", case["name"],
                                         "--body", body_path, "--clients", str(clients),
                                         "--seconds", str(args.seconds)], args)
                    print(f"{case['name']} batching={batching} clients={clients}: {result}",
                          file=sys.stderr)
                    rows.append((case["title"], batching, str(clients), result))
                if not batching and args.slow_clients > 0:
                    result = serve_load(["http", "--port", str(server.port), "--model", case["name"],
                                         "--body", body_path, "--clients", "8",
                                         "--slow-clients", str(args.slow_clients),
                                         "--seconds", str(args.seconds)], args)
                    print(f"{case['name']} clients=8 slow={args.slow_clients}: {result}",
                          file=sys.stderr)
                    rows.append((case["title"], batching, f"8, and {args.slow_clients} slow", result))
            finally:
                server.stop()
    return rows, overheads


def table(rows, overheads, args):
    lines = ["| model | dynamic batching | clients | throughput (requests/s) | p50 (µs) | p99 (µs) |",
             "|---|---|---:|---:|---:|---:|"]
    for title, batching, clients, result in rows:
        lines.append(f"| {title} | {'on' if batching else 'off'} | {clients} | "
                     f"{result['throughput']:.0f} | {result['p50_us']:.0f} | {result['p99_us']:.0f} |")
    lines += ["", "| model, request | direct `Invoke` p50 (µs) | server p50, 1 client (µs) | "
              "overhead, at the client (µs) | HTTP alone, p50 (µs) | direct `Invoke` mean (µs) | "
              "time in the server, mean (µs) | overhead, in the server (µs) | "
              "request read and answer written, p50 (µs) |",
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for title, direct, served, http_alone, protocol, direct_mean, inside in overheads:
        lines.append(f"| {title} | {direct:.1f} | {served:.1f} | {served - direct:.1f} | "
                     f"{http_alone:.1f} | {direct_mean:.1f} | {inside:.1f} | "
                     f"{inside - direct_mean:.1f} | {protocol:.1f} |")
    lines += ["", f"Measured by `/usr/bin/python3 bench/serve/run.py --seconds {args.seconds:g} "
              f"--threads {args.threads} --slow-clients {args.slow_clients}` on {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}; "
              "the clients and the server share the machine."]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0, help="measured seconds per run (3)")
    parser.add_argument("--clients", default="1,8,64", help="concurrent clients (1,8,64)")
    parser.add_argument("--threads", type=int, default=1,
                        help="kernel threads per worker and for the direct runs (RELAY_NUM_THREADS, 1)")
    parser.add_argument("--slow-clients", type=int, default=300,
                        help="slow connections held open in the extra row (300; 0: no such row)")
    parser.add_argument("--relay-vm", default=os.path.join(BUILD, "relay-vm"),
                        help="the relay-vm binary to measure (build/release/relay-vm)")
    parser.add_argument("--update-docs", action="store_true", help="write docs/serving.md's table")
    args = parser.parse_args()
    args.clients = [int(each) for each in args.clients.split(",")]
    torch.set_num_threads(1)
    rows, overheads = measure(args)
    text = table(rows, overheads, args)
    print(text)
    if args.update_docs:
        path = os.path.join(ROOT, "docs", "serving.md")
        with open(path) as file:
            doc = file.read()
        begin, end = "<!-- serve-bench:begin -->", "<!-- serve-bench:end -->"
        if begin not in doc or end not in doc:
            raise SystemExit(f"run.py: {path} has no {begin} ... {end} section")
        doc = doc[:doc.index(begin) + len(begin)] + "\n" + text + "\n" + doc[doc.index(end):]
        with open(path, "w") as file:
            file.write(doc)


if __name__ == "__main__":
    main()
