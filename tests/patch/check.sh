#!/bin/sh
# Pass 'patch' (passes/patch.c): on a microcontroller target a CNN's first layers run in
# bands of rows when that lowers the peak of live activations. For tests/patch/stem and odd
# (make_patch.py; their outputs through every backend against torch's are the CTest cases
# patch_{b}_cortex-m4): the cortex-m4 graph holds the bands (Slice and one Concat), the
# generic one does not; the arena is smaller than the same pipeline's without 'patch'; and
# kiln's int8 build of each model gives the same output bytes in the C as in the
# interpreter (which runs the graph unbanded); the int8 stem is banded, after its input's
# QuantizeLinear (one, on the whole input: recomputing it on every band's halo rows cost
# MobileNetV1 int8 0.47 M instructions on the M4). The cortex-m4 plans make some bands
# views of their parents (passes/views.c), which the bytes compared above run through.
# usage: check.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
NOPATCH=shape,qdq,fold,shape,deseq,shape,fold,shape,transpose,bnfold,weights,act,norm,dynq,fuse,chain,layout,lower,depthwise,pool,stem,winograd,tile,vmath,lowp,sescale,plan,parallel,index
arena() { sed -n 's/.*"arena_bytes": \([0-9]*\).*/\1/p' "$1"; }
for m in stem odd deep; do
  d=$S/tests/patch/$m
  in=$d/test_data_set_0/input_0.pb
  for t in cortex-m4 generic; do
    "$KILN" compile "$d/model.onnx" -o "$T/$m-$t" --target $t --dump-after patch >"$T/$m-$t.g" 2>&1 ||
      { bad "$m $t: compile: $(tail -3 "$T/$m-$t.g")"; continue; }
    cat=$(grep -c ' = Concat(' "$T/$m-$t.g")
    sl=$(grep -c ' = Slice(' "$T/$m-$t.g")
    if [ $t = generic ]; then
      [ "$cat" = 0 ] && [ "$sl" = 0 ] && ok || bad "$m generic: $sl Slice, $cat Concat, expected none"
    else
      [ "$cat" -ge 1 ] && [ "$sl" -ge 2 ] && ok || bad "$m cortex-m4: $sl Slice, $cat Concat, expected >= 2 and >= 1"
      # deep: the bands carry their halo rows (a Concat of kept and new rows per link)
      [ $m != deep ] || [ "$cat" -gt 1 ] && ok || bad "$m cortex-m4: $cat Concat, expected the halo rows carried"
    fi
  done
  # the band views (passes/views.c): some band of each is read or written in place in its
  # parent, which the plan dump shows (no kernel touches the view's own buffer); none on
  # generic, where nothing is banded
  "$KILN" inspect "$d/model.onnx" --memory --target cortex-m4 >"$T/$m-mem.txt" 2>&1
  nv=$(grep -c ' view of ' "$T/$m-mem.txt")
  [ "$nv" -ge 2 ] && ok || bad "$m cortex-m4: $nv band views in the plan, expected >= 2"
  "$KILN" inspect "$d/model.onnx" --memory --target generic >"$T/$m-memg.txt" 2>&1
  grep -q ' view of ' "$T/$m-memg.txt" && bad "$m generic: a band view" || ok
  "$KILN" compile "$d/model.onnx" -o "$T/$m-a" --target cortex-m4 --json >"$T/$m-a.json" 2>&1 &&
    "$KILN" compile "$d/model.onnx" -o "$T/$m-b" --target cortex-m4 --json --passes $NOPATCH \
      >"$T/$m-b.json" 2>&1 || { bad "$m: compile --json"; continue; }
  a=$(arena "$T/$m-a.json") b=$(arena "$T/$m-b.json")
  [ -n "$a" ] && [ -n "$b" ] && [ "$a" -lt "$b" ] && ok || bad "$m: arena $a with patch, $b without"
  q="--quantize int8 --calibrate $in"
  "$KILN" run "$d/model.onnx" --input x="$in" $q --output-dir "$T/$m-qi" >"$T/$m-qi.log" 2>&1 &&
    KILN_TEST_TARGET=cortex-m4 "$KILN" run "$d/model.onnx" --backend c --input x="$in" $q \
      --output-dir "$T/$m-qc" >"$T/$m-qc.log" 2>&1 || { bad "$m int8: run: $(tail -3 "$T/$m-qc.log")"; continue; }
  cmp -s "$T/$m-qi/y1.npy" "$T/$m-qc/y1.npy" && ok || bad "$m int8: banded C differs from the interpreter"
  # int8 stem is banded; int8 odd is not (its peak is then in the float Add of its tail,
  # so no band count lowers it: the pass leaves it, and the bytes above are checked anyway)
  "$KILN" compile "$d/model.onnx" -o "$T/$m-q" --target cortex-m4 $q --dump-after patch >"$T/$m-q.g" 2>&1
  nc=$(grep -c ' = Concat(' "$T/$m-q.g")
  case $m in
  odd) [ "$nc" = 0 ] ;;
  stem) [ "$nc" = 1 ] ;;
  deep) [ "$nc" -gt 1 ] ;; # carried halo rows
  esac && ok || bad "$m int8: $nc Concat"
  # every row of the input quantized once: the QuantizeLinear outputs' rows add up to x's
  # (before, each band quantized its halo rows again)
  rows=$(sed -n 's/^ *%[^:]*: u8\[[0-9]*,[0-9]*,\([0-9]*\),[0-9]*\] = QuantizeLinear(.*/\1/p' "$T/$m-q.g" |
    awk '{ s += $1 } END { print s + 0 }')
  h=$(sed -n 's/^graph .*(%x: f32\[[0-9]*,[0-9]*,\([0-9]*\),.*/\1/p' "$T/$m-q.g")
  [ "$rows" = "$h" ] && ok || bad "$m int8: $rows rows quantized, x has $h"
done
finish
