#!/bin/sh
# Float MaxPools on OpenCL devices (passes/pool.c: vector work-items along the row,
# pool_items_vec, or one output a work-item, pool_items): each case of tests/models/ocl_pools
# (tests/models/make_ocl_pools.py) run on the device has the bits of its want.npy (the max
# in the window's row-major order, NaNs and signed zeros in x), and so have the JIT and the
# interpreter;
# the cases whose rows split in tiles of several outputs get the vector work-items (the
# schedule's lanes) and the one with 13 columns does not.
# usage: gpu_pools.sh KILN SOURCE_DIR        (exit 77: no OpenCL device)
KILN=$1
S=$2
. "$2/tests/lib.sh"
M=$S/tests/models/ocl_pools

"$KILN" run "$M/resnet/model.onnx" --backend opencl --input "x=$M/resnet/x.npy" \
  --output-dir "$T/probe" >"$T/probe.log" 2>&1
grep -q "no OpenCL" "$T/probe.log" && { echo "no OpenCL device"; exit 77; }

# same_data A B: the data of two float32 .npy files of one shape (their last bytes)
same_data() {
  _len=$(($(wc -c <"$2") - 128))
  tail -c "$_len" "$1" >"$T/a" && tail -c "$_len" "$2" >"$T/b" && cmp -s "$T/a" "$T/b"
}

for c in resnet:16 odd13:- k2s2:8 s1:16 k23:4 s4:16; do
  n=${c%%:*} lanes=${c#*:}
  for b in opencl llvm interp; do
    rm -rf "$T/$n.$b"
    "$KILN" run "$M/$n/model.onnx" --backend $b --input "x=$M/$n/x.npy" --output-dir "$T/$n.$b" \
      >"$T/log" 2>&1 || bad "$n: $b run: $(cat "$T/log")"
    same_data "$T/$n.$b/y.npy" "$M/$n/want.npy" && ok || bad "$n: $b output differs from want.npy"
  done
  "$KILN" compile "$M/$n/model.onnx" --emit opencl -o "$T/$n.cl" --dump-schedule "$T/$n.txt" \
    >/dev/null 2>&1 || bad "$n: compile --emit opencl"
  if [ "$lanes" = - ]; then
    grep -q "MaxPool.*lanes=" "$T/$n.txt" && bad "$n: vector work-items: $(cat "$T/$n.txt")" || ok
  else
    grep -q "MaxPool.*lanes=$lanes" "$T/$n.txt" && ok || bad "$n: not lanes=$lanes: $(cat "$T/$n.txt")"
  fi
done
finish
