#!/bin/sh
# Interleaved A/B of two kiln binaries on dynamically quantized models (bench/make_dynq.py
# applied to bench/make_models.py's MLP and bench/make_bert.py's encoder): kiln bench's CPU
# time per run (cpu_ms: every thread of the process), LLVM JIT, 1 thread, A and B
# alternated ROUNDS times; prints each round's pair and the medians. Also the float
# encoder itself (bert_f32), whose Slices after the in-projection the parallel pass's
# band rule changed. Not a test.
# usage: bench/dynq_ab.sh A_KILN B_KILN [MODELS_DIR]     (ROUNDS=6 RUNS=40 by default)
A=$1 B=$2 M=${3:-build/bench-models}
ROUNDS=${ROUNDS:-6} RUNS=${RUNS:-40}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp "$M/bert.onnx" "$T/bert_f32.onnx"
for m in mlp bert bert_f32; do
  [ $m = bert_f32 ] || /usr/bin/python3 "$(dirname "$0")/make_dynq.py" "$M/$m.onnx" "$T/$m.onnx" >/dev/null || exit 1
  for r in $(seq "$ROUNDS"); do
    for k in A B; do
      eval bin=\$$k
      "$bin" bench "$T/$m.onnx" --backend llvm --threads 1 --runs "$RUNS" --json 2>/dev/null |
        sed -n 's/.*"median_ms": \([0-9.]*\), "min_ms": \([0-9.]*\), "cpu_ms": \([0-9.]*\).*/\1 \2 \3/p' |
        { read -r med min cpu; echo "$m $k $r median $med min $min cpu $cpu"; }
    done
  done
done | tee "$T/all"
med() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for m in mlp bert bert_f32; do
  for k in A B; do
    printf '%s %s: cpu ms median %s, min ms median %s\n' $m $k \
      "$(awk -v m=$m -v k=$k '$1 == m && $2 == k {print $9}' "$T/all" | med)" \
      "$(awk -v m=$m -v k=$k '$1 == m && $2 == k {print $7}' "$T/all" | med)"
  done
done
