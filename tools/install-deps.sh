#!/usr/bin/env bash
# Installs every Debian package that relay-vm's build, tests and benchmarks need,
# and any further packages named as arguments (bench/models/install-peers.sh
# adds the benchmark peers' packages this way).
# Idempotent and non-interactive; run as root on Debian 12 (bookworm) or newer.
set -euo pipefail

packages=(
  # toolchain and build
  build-essential cmake ninja-build ccache git pkg-config clang-format
  # LLVM for the CPU JIT (ORC); clang + compiler-rt for libFuzzer targets
  llvm-19-dev clang-19 libclang-rt-19-dev
  # LLVM's static libraries need zstd's (relay-vm links them: tools/CMakeLists.txt)
  libzstd-dev
  # runtime core
  libmimalloc-dev libboost-context-dev libdlpack-dev zlib1g-dev libedit-dev
  # relay-vm serve: HTTP, JSON requests read by simdjson and answers
  # written by nlohmann-json (which the tests use too, e.g. on Chrome traces)
  libcpp-httplib-dev libsimdjson-dev nlohmann-json3-dev
  # optional device backends (headers only: drivers are loaded at run time)
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd libxrt-dev
  # tests and benchmarks (tmux drives the REPL's terminal test)
  googletest libgtest-dev libgmock-dev libbenchmark-dev tmux
  # ONNX's node test cases, a second oracle for the CPU kernels
  # (tests/kernels/onnx_node_test.cc) and the importer's tests
  libonnx-testdata
  # the ONNX importer: onnx.proto's classes, the checker, shape inference
  libonnx-dev libprotobuf-dev
  # external codegens (--byoc, docs/byoc.md): oneDNN; OpenBLAS is below
  libdnnl-dev
  # fixture generation and peer benchmarks (NumPy's matmul runs on OpenBLAS
  # once libopenblas-dev is installed; without it Debian's NumPy uses the slow
  # reference BLAS); OpenBLAS is also the cblas codegen's library
  python3 python3-numpy libopenblas-dev
  "$@"
)

if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    exec sudo -E "$0" "$@"
  fi
  echo "install-deps.sh: must run as root (apt-get install)" >&2
  exit 1
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install-deps.sh: all ${#packages[@]} packages already installed"
  exit 0
fi

echo "install-deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
