#!/bin/sh
# kiln bench smoke test: one backend on the digits model; checks the JSON keys and
# values' kinds, never the timings; and the FLOPs of two small models.
# usage: bench.sh KILN SOURCE_DIR BACKEND
KILN=$1
SRC=$2
B=$3
out=$("$KILN" bench "$SRC/examples/digits/digits.onnx" --backend "$B" --dim batch=1 --runs 3 \
      --threads 2 --json) || { echo "FAIL: kiln bench --backend $B exited $?"; exit 1; }
echo "$out"
fail=0
for key in median_ms min_ms cpu_ms compile_ms gflops first_ms load_ms; do
  echo "$out" | grep -Eq "\"$key\": [0-9]+(\.[0-9]+)?[,}]" || { echo "FAIL: no number $key"; fail=1; }
done
for kv in '"runs": 3,' '"threads": 2,' "\"backend\": \"$B\"," '"flops": [1-9]'; do
  echo "$out" | grep -Eq "$kv" || { echo "FAIL: no $kv"; fail=1; }
done
[ "$(echo "$out" | wc -l)" = 1 ] || { echo "FAIL: not one line"; fail=1; }

# --paced: `ready`, then one line of N latencies per line N read, then the summary of all
# of them (2 + 3 runs); an empty stdin asks for no run and fails
out=$(printf '2\n3\n' | "$KILN" bench "$SRC/examples/digits/digits.onnx" --backend "$B" \
      --dim batch=1 --threads 2 --paced --json) || { echo "FAIL: --paced exited $?"; fail=1; }
echo "$out"
num='[0-9]+\.[0-9]+'
echo "$out" | sed -n 1p | grep -qx ready || { echo "FAIL: --paced: no ready line"; fail=1; }
echo "$out" | sed -n 2p | grep -Eqx "$num $num" || { echo "FAIL: --paced: line 2 not 2 times"; fail=1; }
echo "$out" | sed -n 3p | grep -Eqx "$num $num $num" || { echo "FAIL: --paced: line 3 not 3 times"; fail=1; }
echo "$out" | sed -n 4p | grep -q '"runs": 5,' || { echo "FAIL: --paced: summary not of 5 runs"; fail=1; }
[ "$(echo "$out" | wc -l)" = 4 ] || { echo "FAIL: --paced: not 4 lines"; fail=1; }
if "$KILN" bench "$SRC/examples/digits/digits.onnx" --backend "$B" --dim batch=1 --paced \
  </dev/null >/dev/null 2>&1; then
  echo "FAIL: --paced with no run asked for succeeded"
  fail=1
fi

# the warm-up: at least --warmup runs and at least --warmup-ms ms of them; "warmup" counts
# the runs made, "warmup_ms" their time
out=$("$KILN" bench "$SRC/examples/digits/digits.onnx" --backend "$B" --dim batch=1 --runs 1 \
      --warmup 0 --warmup-ms 150 --json) || { echo "FAIL: --warmup-ms exited $?"; fail=1; }
echo "$out"
wms=$(echo "$out" | sed -n 's/.*"warmup_ms": \([0-9]*\)\..*/\1/p')
wn=$(echo "$out" | sed -n 's/.*"warmup": \([0-9]*\),.*/\1/p')
[ -n "$wms" ] && [ "$wms" -ge 150 ] || { echo "FAIL: --warmup-ms 150: warmup_ms '$wms'"; fail=1; }
[ -n "$wn" ] && [ "$wn" -ge 1 ] || { echo "FAIL: --warmup-ms 150: warmup '$wn' runs"; fail=1; }
out=$("$KILN" bench "$SRC/examples/digits/digits.onnx" --backend "$B" --dim batch=1 --runs 1 \
      --warmup 3 --warmup-ms 0 --json) || { echo "FAIL: --warmup-ms 0 exited $?"; fail=1; }
echo "$out" | grep -q '"warmup": 3,' || { echo "FAIL: --warmup 3 --warmup-ms 0: $out"; fail=1; }

# FLOPs derived by hand (tests/cli/make_flops_models.py): a Gemm 784x512 with a bias
# computed from constants (folded, so not counted), a padded Conv with bias and a Relu
for case in "gemm 803328" "conv 14336"; do
  set -- $case
  out=$("$KILN" bench "$SRC/tests/cli/flops_$1.onnx" --backend "$B" --runs 1 --json) ||
    { echo "FAIL: kiln bench flops_$1.onnx exited $?"; fail=1; continue; }
  echo "$out" | grep -q "\"flops\": $2," || { echo "FAIL: flops_$1: want $2 FLOPs: $out"; fail=1; }
  txt=$("$KILN" bench "$SRC/tests/cli/flops_$1.onnx" --backend "$B" --runs 1)
  echo "$txt" | grep -Eq "^flops +$2 per run" || { echo "FAIL: flops_$1 text: $txt"; fail=1; }
done
exit $fail
