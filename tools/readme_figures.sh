#!/bin/sh
# Rewrites the figures of README.md's Status (between <!-- figures:begin --> and
# <!-- figures:end -->) from a run of the ONNX backend suite through the interpreter
# and the LLVM JIT (the C and OpenCL backends pass the same tests: CTest checks them
# against the same known-failures list) and from docs/operators.md. Takes a few
# minutes; review the diff before committing.
# usage: tools/readme_figures.sh BUILD_DIR
set -e
B=$1
S=$(cd "$(dirname "$0")/.." && pwd)
D=/usr/share/libonnx-testdata/data
[ -x "$B/kiln" ] || { echo "usage: tools/readme_figures.sh BUILD_DIR (with kiln built)" >&2; exit 2; }
run() { # BACKEND -> "passed failed"
  "$B/kiln" check-onnx "$D/node" "$D/pytorch-converted" "$D/pytorch-operator" "$D/simple" \
    --backend "$1" | tail -1 | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p'
}
set -- $(run interp)
ip=$1 ifail=$2
set -- $(run llvm)
cp=$1 cfail=$2
total=$((ip + ifail))
ops=$(tail -1 "$S/docs/operators.md")
fmt() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }
T=$(mktemp)
cat >"$T" <<EOT
- ONNX backend test suite (Debian \`libonnx-testdata\`, onnx 1.12: $(fmt $total) tests in
  \`node\`, \`pytorch-converted\`, \`pytorch-operator\`, \`simple\`): the reference
  interpreter passes $(fmt $ip); the C, LLVM and OpenCL backends (one kernel IR; OpenCL
  runs string kernels on the host) pass $(fmt $cp). The others are listed with their reasons
  in \`tests/onnx/known_failures*.txt\`. $ops
EOT
awk -v f="$T" '/<!-- figures:begin -->/ {print; while ((getline l < f) > 0) print l; skip = 1; next}
  /<!-- figures:end -->/ {skip = 0} !skip' "$S/README.md" >"$T.readme"
mv "$T.readme" "$S/README.md"
rm -f "$T"
echo "README.md: $total tests, interp $ip, compiled $cp"
