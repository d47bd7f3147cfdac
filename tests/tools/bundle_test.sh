#!/bin/sh
# tools/bundle-relay-vm.sh packs relay-vm so that it runs where its
# libraries are not installed: every library the packed binary loads comes
# from the bundle or is glibc's, and the README's example runs through the
# wrapper and prints what the unpacked binary prints.
# Usage: bundle_test.sh RELAY_VM REPOSITORY_ROOT
set -eu
relay_vm=$1
root=$2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

"$root/tools/bundle-relay-vm.sh" "$relay_vm" "$out/bundle" >/dev/null
outside=$(LD_LIBRARY_PATH="$out/bundle/lib" ldd "$out/bundle/lib/relay-vm.bin" |
  awk '$2 == "=>" && $3 !~ "^'"$out"'/bundle/lib/" { print $1 }' |
  grep -v -E '^(libc|libm|libdl|libpthread|librt)\.so' || true)
if [ -n "$outside" ]; then
  echo "bundle_test: loaded from outside the bundle: $outside" >&2
  exit 1
fi
run="run $root/examples/mlp.relay --params $root/examples/mlp_params.npz --input input=$root/examples/mlp_input.npy"
# shellcheck disable=SC2086
expected=$("$relay_vm" $run)
# shellcheck disable=SC2086
actual=$(env -u LD_LIBRARY_PATH "$out/bundle/relay-vm" $run)
if [ "$actual" != "$expected" ]; then
  echo "bundle_test: the bundled relay-vm printed something else:" >&2
  echo "$actual" >&2
  exit 1
fi
echo "bundle_test: ok"
