#!/usr/bin/env node
// Times one ONNX model on ONNX Runtime's CPU execution provider, the ONNX
// Runtime peer of bench/models/compare.py:
//
//   node bench/models/ort_runner.js MODEL.onnx --input NAME=FILE.npy... \
//       [--output OUT.npy] [--runs N] [--warmup W] [--warmup-seconds WS]
//       [--max-seconds S] [--threads T]
//
// It loads the model with T intra-op threads (2 by default, as the other
// systems), one inter-op thread, sequential execution and every graph
// optimisation, feeds the .npy inputs by name, runs at least W untimed warm-up
// runs, and more until WS seconds have passed (caches, allocators and clock
// speeds settle over the first runs), then N timed ones (fewer, but at least
// 3, once they pass S seconds), writes the first output to
// OUT.npy and prints {"median_ms", "min_ms", "runs", "version"} as JSON on
// stdout. onnxruntime-node is found in build/bench-peers/ (where
// install-peers.sh puts it) or on Node's usual module path.
'use strict';

const fs = require('fs');
const path = require('path');

function loadOnnxRuntime() {
  const peers = path.join(__dirname, '..', '..', 'build', 'bench-peers', 'node_modules');
  try {
    return require(path.join(peers, 'onnxruntime-node'));
  } catch (error) {
    if (error.code !== 'MODULE_NOT_FOUND') throw error;
    return require('onnxruntime-node');
  }
}

// .npy files: the header is a Python dict literal after a magic string, a
// version and the header's length; the data follows in C order. Only what the
// suite uses: little-endian float32, int64 and int32, C order.
const DTYPES = {
  '<f4': {type: 'float32', array: Float32Array},
  '<i8': {type: 'int64', array: BigInt64Array},
  '<i4': {type: 'int32', array: Int32Array},
};

function readNpy(file) {
  const bytes = fs.readFileSync(file);
  if (bytes.toString('latin1', 0, 6) !== '\x93NUMPY') throw new Error(`${file}: not a .npy file`);
  const major = bytes[6];
  const headerLength = major === 1 ? bytes.readUInt16LE(8) : bytes.readUInt32LE(8);
  const headerStart = major === 1 ? 10 : 12;
  const header = bytes.toString('latin1', headerStart, headerStart + headerLength);
  const descr = /'descr':\s*'([^']+)'/.exec(header);
  const fortran = /'fortran_order':\s*(True|False)/.exec(header);
  const shape = /'shape':\s*\(([^)]*)\)/.exec(header);
  if (!descr || !fortran || !shape) throw new Error(`${file}: unreadable header ${header}`);
  const dtype = DTYPES[descr[1]];
  if (!dtype) throw new Error(`${file}: dtype ${descr[1]} not supported (float32, int64, int32)`);
  if (fortran[1] === 'True') throw new Error(`${file}: Fortran order not supported`);
  const dims = shape[1].split(',').map((s) => s.trim()).filter((s) => s !== '').map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  const start = headerStart + headerLength;
  // Copy into an aligned buffer: typed arrays need their element alignment.
  const data = new dtype.array(count);
  const size = count * dtype.array.BYTES_PER_ELEMENT;
  Buffer.from(data.buffer).set(bytes.subarray(start, start + size));
  return {type: dtype.type, data, dims};
}

function writeNpy(file, tensor) {
  const descr = Object.keys(DTYPES).find((key) => DTYPES[key].type === tensor.type);
  if (!descr) throw new Error(`output dtype ${tensor.type} not supported`);
  const shape = tensor.dims.length === 1 ? `(${tensor.dims[0]},)` : `(${tensor.dims.join(', ')})`;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shape}, }`;
  // Version 1.0: magic (6) + version (2) + length (2) + header, padded with
  // spaces and ended by a newline to a multiple of 64 bytes.
  const total = Math.ceil((10 + header.length + 1) / 64) * 64;
  header = header.padEnd(total - 10 - 1, ' ') + '\n';
  const prefix = Buffer.alloc(10);
  prefix.write('\x93NUMPY', 0, 'latin1');
  prefix[6] = 1;
  prefix[7] = 0;
  prefix.writeUInt16LE(header.length, 8);
  const data = tensor.data;
  const body = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  fs.writeFileSync(file, Buffer.concat([prefix, Buffer.from(header, 'latin1'), body]));
}

function parseArguments(argv) {
  const options = {inputs: [], runs: 20, warmup: 3, warmupSeconds: 0, maxSeconds: Infinity,
                   threads: 2};
  for (let i = 0; i < argv.length; i++) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    switch (argv[i]) {
      case '--input': {
        const [name, file] = value().split(/=(.*)/s);
        options.inputs.push({name, file});
        break;
      }
      case '--output': options.output = value(); break;
      case '--runs': options.runs = Number(value()); break;
      case '--warmup': options.warmup = Number(value()); break;
      case '--warmup-seconds': options.warmupSeconds = Number(value()); break;
      case '--max-seconds': options.maxSeconds = Number(value()); break;
      case '--threads': options.threads = Number(value()); break;
      default:
        if (argv[i].startsWith('--') || options.model) {
          throw new Error(`unknown argument ${argv[i]}`);
        }
        options.model = argv[i];
    }
  }
  if (!options.model) throw new Error('usage: ort_runner.js MODEL.onnx --input NAME=FILE.npy...');
  return options;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const ort = loadOnnxRuntime();
  const session = await ort.InferenceSession.create(options.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const feeds = {};
  for (const {name, file} of options.inputs) {
    const array = readNpy(file);
    feeds[name] = new ort.Tensor(array.type, array.data, array.dims);
  }
  let outputs;
  const warmupStart = process.hrtime.bigint();
  for (let i = 0; i < options.warmup ||
       Number(process.hrtime.bigint() - warmupStart) / 1e9 < options.warmupSeconds; i++) {
    outputs = await session.run(feeds);
  }
  const times = [];
  const started = process.hrtime.bigint();
  for (let i = 0; i < options.runs; i++) {
    const start = process.hrtime.bigint();
    outputs = await session.run(feeds);
    const end = process.hrtime.bigint();
    times.push(Number(end - start) / 1e6);
    if (times.length >= 3 && Number(end - started) / 1e9 > options.maxSeconds) break;
  }
  if (options.output) {
    if (!outputs) outputs = await session.run(feeds);
    writeNpy(options.output, outputs[session.outputNames[0]]);
  }
  console.log(JSON.stringify({
    median_ms: times.length ? median(times) : null,
    min_ms: times.length ? Math.min(...times) : null,
    runs: times.length,
    version: ort.env.versions ? ort.env.versions.node : null,
  }));
}

main().catch((error) => {
  console.error(`ort_runner.js: ${error.message}`);
  process.exit(1);
});
