#!/bin/sh
# tools/bundle-relay-vm.sh BUILD_DIR/relay-vm OUT_DIR
#
# Packs relay-vm with the shared libraries it loads into OUT_DIR, so that it
# runs on a machine where none of them is installed (a GPU machine lent for
# a run): OUT_DIR/relay-vm is a wrapper that puts OUT_DIR/lib first on the
# library path and runs the stripped binary. LLVM is linked statically; the
# rest (ONNX, protobuf, mimalloc, zstd, libedit, OpenSSL, ...) comes from
# Debian packages, which a bare machine lacks. glibc's own libraries stay the
# machine's: the target needs a glibc at least as new as this one.
#
# Device drivers are not packed: relay-vm opens them at run time where the
# machine has them (libcuda.so.1 and NVRTC for CUDA, an OpenCL ICD, XRT).
set -eu

if [ $# -ne 2 ]; then
  echo "usage: tools/bundle-relay-vm.sh BUILD_DIR/relay-vm OUT_DIR" >&2
  exit 2
fi
binary=$1
out=$2
if [ ! -x "$binary" ]; then
  echo "bundle-relay-vm: $binary is not an executable" >&2
  exit 1
fi

mkdir -p "$out/lib"
cp "$binary" "$out/lib/relay-vm.bin"
strip "$out/lib/relay-vm.bin"
# Every library ldd resolves, but glibc's (which must match the machine's
# kernel interface and dynamic loader).
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r library; do
  case $(basename "$library") in
    libc.so.* | libm.so.* | libdl.so.* | libpthread.so.* | librt.so.* | ld-linux*) ;;
    *) cp -L "$library" "$out/lib/" ;;
  esac
done
cat > "$out/relay-vm" <<'WRAPPER'
#!/bin/sh
# relay-vm with the libraries packed beside it (tools/bundle-relay-vm.sh).
here=$(dirname "$(readlink -f "$0")")
LD_LIBRARY_PATH="$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$here/lib/relay-vm.bin" "$@"
WRAPPER
chmod +x "$out/relay-vm"
echo "bundle-relay-vm: $out/relay-vm ($(du -sh "$out" | cut -f1))"
