#!/bin/sh
# The README's first command: installs what is missing, builds kiln, and runs the
# bundled digits model on 48 test images, printing predictions and accuracy.
set -e
cd "$(dirname "$0")/.."
tools/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)" >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "== kiln run examples/digits/digits.onnx (reference interpreter)"
build/kiln run examples/digits/digits.onnx --input image=examples/digits/test_images.npy \
  --output-dir "$out"
build/digits_score "$out/logits.npy" examples/digits/test_labels.npy
