#!/bin/sh
# Reduced-precision weights (#12 item 6, docs/quantization.md): --weights f16|bf16 on the
# CNN of tests/lowp/make_lowp_models.py through interp, C, LLVM and OpenCL gives the
# output computed (torch, float64) with the weights rounded so, to float32 accumulation
# order (1e-5 on outputs of magnitude up to 2); the float32 weights' output is further
# away than that (the rounding is there); it stays within the first-order bound derived
# from the rounding; the weights take half the bytes (C, LLVM, OpenCL); a model storing
# float16 weights Cast to float32 compiles with float16 storage and matches its reference.
# usage: lowp.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/lowp
M=$D/models/cnn/model.onnx
. "$2/tests/lib.sh"
# the float32 elements of an .npy file, one per line (header: 10 bytes + its length)
vals() {
  h=$(od -A n -t u2 -j 8 -N 2 "$1" | tr -d ' ')
  od -A n -v -t f4 -j $((10 + h)) "$1" | tr -s ' ' '\n' | sed '/^$/d'
}
# max |a - b| over the elements of two .npy files
maxdiff() {
  vals "$1" >"$T/a"
  vals "$2" >"$T/b"
  paste "$T/a" "$T/b" | awk 'BEGIN { m = 0 } { d = $1 - $2; if (d < 0) d = -d; if (d > m) m = d } END { printf "%.9g\n", m }'
}
# whether |a - b| <= bound element by element
within() {
  vals "$1" >"$T/a"
  vals "$2" >"$T/b"
  vals "$3" >"$T/c"
  paste "$T/a" "$T/b" "$T/c" | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > $3) bad = 1 } END { exit bad }'
}
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 <= b + 0) }'; }
wbytes() { sed -n 's/.*, weights \([0-9]*\) bytes.*/\1/p' "$1"; }

"$KILN" run "$M" --input x=$D/x.npy --output-dir "$T/f32" -q || bad "float32 run"
for w in f16 bf16; do
  for b in interp c llvm opencl; do
    mkdir -p "$T/$w"
    "$KILN" run "$M" --input x=$D/x.npy --weights $w --backend $b --output-dir "$T/$w/$b" >"$T/r.txt" 2>&1 || {
      grep -q "no OpenCL device\|without the OpenCL" "$T/r.txt" && [ $b = opencl ] && continue
      bad "--weights $w on $b: $(cat "$T/r.txt")"
      continue
    }
    d=$(maxdiff "$T/$w/$b/y.npy" $D/ref_$w.npy)
    le "$d" 1e-5 && ok || bad "--weights $w on $b: max |y - reference| $d > 1e-5"
    within "$T/$w/$b/y.npy" $D/f32_out.npy $D/bound_$w.npy && ok || bad "--weights $w on $b: beyond the rounding bound"
  done
  d=$(maxdiff "$T/f32/y.npy" $D/ref_$w.npy)
  le 1e-4 "$d" && ok || bad "float32 weights' output within $d of the $w reference: the test cannot tell"
  # the same through check-onnx (its --weights), every backend against the folder's output
  for b in interp llvm; do
    "$KILN" check-onnx $D/$w --backend $b --weights $w >"$T/k.txt" 2>&1 && ok || bad "check-onnx --weights $w --backend $b: $(cat "$T/k.txt")"
  done
  # half the bytes: C, LLVM object, OpenCL (biases under 16 elements stay float32)
  for e in c obj opencl; do
    "$KILN" compile "$M" -o "$T/c32$e" --emit $e -v >"$T/s32.txt" 2>&1 &&
      "$KILN" compile "$M" -o "$T/c$w$e" --emit $e --weights $w -v >"$T/s16.txt" 2>&1 || {
      bad "compile --emit $e --weights $w: $(cat "$T/s16.txt")"
      continue
    }
    a=$(wbytes "$T/s32.txt")
    h=$(wbytes "$T/s16.txt")
    [ -n "$a" ] && [ -n "$h" ] && [ $((2 * h)) -le $((a + 64)) ] && [ $((2 * h)) -ge $((a - 64)) ] && ok ||
      bad "--emit $e --weights $w: weights $h bytes, float32 $a"
  done
done
# float16 weights Cast to float32: stored float16 without --weights, results as the
# reference; the CNN computing in float16 (Cast at the edges): each node as ONNX defines
# it (rounded to float16 once), the compiled contractions accumulating in float32
for m in f16w_cast f16_compute; do
  for b in interp c llvm opencl; do
    "$KILN" check-onnx $D/$m --backend $b >"$T/k.txt" 2>&1 && ok || {
      grep -q "skipped\|no OpenCL" "$T/k.txt" && [ $b = opencl ] && continue
      bad "$m on $b: $(cat "$T/k.txt")"
    }
  done
done
# the float16 contractions run as float32 tiles (packed weights, stored float16)
"$KILN" compile $D/f16_compute/model.onnx -o "$T/fc" --dump-kir >"$T/fc.txt" 2>&1 || bad "compile f16_compute"
[ "$(grep -c '^  const   c[0-9]*: f16\[' "$T/fc.txt")" -ge 4 ] && [ "$(grep -c "= Conv\|(Conv)" "$T/fc.txt")" = 3 ] && ok ||
  bad "f16_compute: packed float16 weights: $(grep 'const\|^kernel' "$T/fc.txt")"
"$KILN" compile $D/f16w_cast/model.onnx -o "$T/h" -v >"$T/h.txt" 2>&1 || bad "compile f16w_cast"
"$KILN" compile "$M" -o "$T/h32" -v >"$T/h32.txt" 2>&1
a=$(wbytes "$T/h32.txt")
h=$(wbytes "$T/h.txt")
[ -n "$h" ] && [ $((2 * h)) -le $((a + 64)) ] && ok || bad "f16w_cast: weights $h bytes, the float32 model $a"
# the C helpers: _Float16 (where the compiler has it) and the portable C99 conversions
# (-DKN_NO_FLOAT16) give the same bytes, float16 loads (weights) and stores (activations)
for m in f16_compute f16; do
  o=
  [ $m = f16 ] && o="--weights f16"
  "$KILN" run $D/$m/model.onnx --input x=$D/x.npy --backend c $o --output-dir "$T/h$m" -q &&
    KILN_CFLAGS=-DKN_NO_FLOAT16 "$KILN" run $D/$m/model.onnx --input x=$D/x.npy --backend c $o --output-dir "$T/p$m" -q &&
    cmp -s "$T/h$m/y.npy" "$T/p$m/y.npy" && ok || bad "$m: _Float16 and portable C conversions differ"
done
# usage
"$KILN" run "$M" --weights f8 >"$T/u.txt" 2>&1
[ $? = 2 ] && grep -q -- "--weights takes f16 or bf16" "$T/u.txt" && ok || bad "--weights f8: $(cat "$T/u.txt")"
finish
