#!/bin/sh
# Regenerates docs/operators.md from the op table and a conformance run.
# usage: tools/gen_operators_md.sh [BUILD_DIR]
set -e
cd "$(dirname "$0")/.."
B=${1:-build}
D=/usr/share/libonnx-testdata/data
"$B/kiln" check-onnx "$D/node" "$D/pytorch-converted" "$D/pytorch-operator" "$D/simple" \
  tests/onnx/opset18 --known-failures tests/onnx/known_failures.txt --operators-md docs/operators.md | tail -n 1
