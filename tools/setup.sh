#!/bin/sh
# Installs the Debian packages kiln needs to build and test (see DESIGN.md).
# As root it runs apt-get; otherwise it prints the exact command and stops.
# g++ builds only runtime/halide_runtime_gen.cpp, which writes the Halide runtime object
# for the OpenCL backend (with libhalide14-0-dev; see docs/opencl.md).
# usage: tools/setup.sh [--models]   (--models adds Debian's Python, torch and onnx,
#                                     needed only to regenerate the bundled models)
set -e
PKGS="build-essential g++ cmake clang clang-format libprotobuf-c-dev protobuf-c-compiler
libonnx-dev libonnx-testdata llvm-19-dev libhalide14-0-dev pocl-opencl-icd
ocl-icd-opencl-dev opencl-headers gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm
gcc-aarch64-linux-gnu qemu-user
graphviz libxml2-utils groff-base pkg-config"
if [ "$1" = "--models" ]; then
  PKGS="$PKGS python3-numpy python3-onnx python3-torch python3-torchvision python3-sklearn"
fi
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "kiln setup: missing packages. Run as root:" >&2
  echo "  apt-get update && apt-get install -y$missing" >&2
  exit 1
fi
echo "kiln setup: installing$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq $missing >/dev/null
