#!/usr/bin/env bash
# Installs the peers of the model benchmark suite (bench/models/compare.py):
# PyTorch, torchvision and ONNX (Debian's python3-torch, python3-torchvision and
# python3-onnx, for /usr/bin/python3)
# and ONNX Runtime for Node.js (npm's onnxruntime-node, CPU only) in a scratch
# folder, build/bench-peers/, which git ignores. Idempotent and
# non-interactive; run as root on Debian 12 (bookworm) or newer, from anywhere.
#
#   bench/models/install-peers.sh
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PEERS="$ROOT/build/bench-peers"

# PyTorch, torchvision (tests/onnx/compare_ort.py exports its models) and
# ONNX on top of relay-vm's own packages (tools/install-deps.sh installs what
# is missing, as root). Node.js and npm run the ONNX Runtime
# peer; only ask Debian for them when the commands are missing: a Node.js
# from elsewhere (NodeSource's nodejs bundles npm) conflicts with Debian's
# npm package.
packages=(python3-torch python3-torchvision python3-onnx)
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
"$ROOT/tools/install-deps.sh" "${packages[@]}"

# ONNX Runtime for Node.js. ONNXRUNTIME_NODE_INSTALL=skip stops its install
# script from downloading the CUDA/TensorRT providers; the CPU binaries ship in
# the npm package itself.
if [ -f "$PEERS/node_modules/onnxruntime-node/package.json" ]; then
  echo "install-peers.sh: onnxruntime-node already installed in $PEERS"
else
  mkdir -p "$PEERS"
  cd "$PEERS"
  [ -f package.json ] || echo '{"name": "relay-vm-bench-peers", "private": true}' > package.json
  ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund onnxruntime-node
fi

version() { dpkg-query -W -f='${Version}' "$1" 2>/dev/null || echo "?"; }
echo "install-peers.sh: python3-torch $(version python3-torch)," \
     "python3-onnx $(version python3-onnx)," \
     "onnxruntime-node $(node -p "require('$PEERS/node_modules/onnxruntime-node/package.json').version")"
