#!/bin/sh
# What kiln says about the corpus models and the message models: warnings for what it
# tolerates (nodes out of order, an If branch that cannot run for the compiled shapes),
# the run-time status of that branch, and the node and chain named when a shape is not
# known at compile time.
# usage: messages.sh KILN SOURCE_DIR
KILN=$1
SRC=$2
M=$SRC/tests/models
E=$SRC/tests/onnx/messages
. "$2/tests/lib.sh"
expect() { # CODE PATTERN -- command...
  code=$1 pat=$2
  shift 3
  "$@" >"$T/out" 2>&1
  rc=$?
  if [ "$rc" = "$code" ] && grep -q -- "$pat" "$T/out"; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: $* -> exit $rc (wanted $code, '$pat'):"
    sed 's/^/    /' "$T/out" | head -5
  fi
}
expect 0 "warning: .*: the nodes are not in topological order (as ONNX requires); kiln sorted them" -- \
  "$KILN" compile "$M/fp16_edges/model.onnx" -o "$T/a"
expect 0 "warning: .*node 'If_25' (If): else_branch cannot run with these input shapes (node 'else/Squeeze' (Squeeze): cannot squeeze axis 1 of extent 2); compiled code returns status 4 if it is taken" -- \
  "$KILN" compile "$M/if_flag/model.onnx" --shape x=1,512 -o "$T/b"
# sr = 16000 takes the valid branch; 8000 the one that cannot run
printf '\223NUMPY\001\000v\000{'"'"'descr'"'"': '"'"'<i8'"'"', '"'"'fortran_order'"'"': False, '"'"'shape'"'"': (), }' >"$T/h"
pad() { n=$(wc -c <"$T/h"); while [ $(((n + 1) % 64)) != 0 ]; do printf ' ' >>"$T/h"; n=$((n + 1)); done; printf '\n' >>"$T/h"; }
pad
for b in c llvm; do
  cp "$T/h" "$T/sr16.npy" && printf '\200\076\000\000\000\000\000\000' >>"$T/sr16.npy"
  cp "$T/h" "$T/sr8.npy" && printf '\100\037\000\000\000\000\000\000' >>"$T/sr8.npy"
  expect 0 "prob: f32\[1,1,4\]" -- "$KILN" run "$M/if_flag/model.onnx" --shape x=1,512 --backend $b \
    --input "sr=$T/sr16.npy" --random 1
  expect 1 "the inputs make an If take a branch that cannot run with the compiled input shapes (status 4" -- \
    "$KILN" run "$M/if_flag/model.onnx" --shape x=1,512 --backend $b --input "sr=$T/sr8.npy" --random 1
done
expect 1 "node 'relu' (Relu): value 'y' has shape f32\[?,2\], not known at compile time: it first becomes unknown at node 'nz' (NonZero), whose output shape depends on the values of its inputs; then 'tr' (Transpose) -> 'cast' (Cast) -> 'relu' (Relu)" -- \
  "$KILN" compile "$E/nonzero_chain.onnx" -o "$T/c"
expect 1 "input 'x' has symbolic dimension 'N': pass --dim N=N (e.g. --dim N=1) or --shape x=1,4" -- \
  "$KILN" compile "$E/unfixed_dim.onnx" -o "$T/d"
# value_info that contradicts inference: a warning per value, the inferred types used
for cmd in "compile $E/bad_value_info.onnx -o $T/e" "inspect $E/bad_value_info.onnx"; do
  expect 0 "warning: .*bad_value_info.onnx: node 'r1' (Relu): the model declares 'a' as f32\[2,3\] (value_info or graph output), but shape inference gives f32\[2,4\]; kiln uses the inferred type" -- \
    "$KILN" $cmd
  expect 0 "node 'n1' (Neg): the model declares 'y' as i64\[2,4\] (value_info or graph output), but shape inference gives f32\[2,4\]" -- \
    "$KILN" $cmd
done
"$KILN" compile "$E/bad_value_info.onnx" -o "$T/f" >"$T/out" 2>&1
[ "$(grep -c warning "$T/out")" = 2 ] && pass=$((pass + 1)) ||
  { fail=$((fail + 1)); echo "FAIL: bad_value_info: wanted 2 warnings (not b's, not twice):"; cat "$T/out"; }
rm -rf "$T/e" "$T/f"
# float8 and int4: accepted by Cast, (De)QuantizeLinear, initializers, data movement, Pad and Where on
# every command; refused elsewhere, naming the node, the value and the type; float4 by name
NT="float8 and 4-bit tensors are supported in Cast, CastLike, QuantizeLinear, DequantizeLinear, constants, data movement, Pad and Where only"
for cmd in compile run inspect; do
  case $cmd in compile) extra="-o $T/n8" ;; run) extra="--random 1" ;; *) extra= ;; esac
  for m in float8_cast int4_zero_point float8_input float8_quantize uint4_initializer; do
    expect 0 "" -- "$KILN" $cmd "$E/$m.onnx" $extra
  done
  rm -rf "$T/n8"
  expect 1 "float8_add.onnx: node 'add8' (Add): input 0 ('x') has type f8e4m3fn; $NT" -- \
    "$KILN" $cmd "$E/float8_add.onnx" $extra
  expect 1 "float4_cast.onnx: graph output 'y' has element type float4e2m1 (23): kiln has no float4 or complex element types" -- \
    "$KILN" $cmd "$E/float4_cast.onnx" $extra
  expect 1 "blocked_scale.onnx: node 'dqb' (DequantizeLinear): blocked scale has 2 elements along axis 1, expected 3" -- \
    "$KILN" $cmd "$E/blocked_scale.onnx" $extra
done
[ -z "$(ls -A "$T/c" "$T/d" "$T/g" 2>/dev/null)" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: files left behind"; }
finish
