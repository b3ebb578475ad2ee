#!/bin/sh
# The tile pass's work-item schedule for OpenCL devices (passes/tile_gpu.c): the
# convolutions and matrix products with constant weights get work-item tiles, and with
# tiles that leave partial blocks of channels, columns and rows (set through a schedule
# file) the outputs still match the references computed by torch.
# usage: gpu_tiles.sh KILN SOURCE_DIR        (exit 77: no OpenCL device)
KILN=$1
S=$2
. "$2/tests/lib.sh"

# check MODEL_DIR NAME ROWS VECS: default tiles, then ROWS x VECS tiles
check() {
  d=$1 n=$2
  "$KILN" compile "$d/model.onnx" --emit opencl -o "$T/$n" --dump-schedule "$T/$n.txt" >/dev/null ||
    bad "$n: compile --emit opencl"
  grep -Eq "^kernel [0-9]+ '[^']*' (Conv|Gemm|MatMul) tile_rows=[0-9]+ tile_vecs=[0-9]+ lanes=(1|16)" \
    "$T/$n.txt" && ok || bad "$n: no work-item tile: $(cat "$T/$n.txt")"
  "$KILN" check-onnx "$d" --backend opencl >"$T/$n.log" 2>&1 && ok ||
    bad "$n: default tiles: $(cat "$T/$n.log")"
  sed "s/tile_rows=[0-9]*/tile_rows=$3/; s/tile_vecs=[0-9]*/tile_vecs=$4/" "$T/$n.txt" >"$T/$n.odd.txt"
  "$KILN" compile "$d/model.onnx" --emit opencl -o "$T/$n.odd" --schedule "$T/$n.odd.txt" \
    --dump-schedule "$T/$n.again.txt" >/dev/null || bad "$n: compile --schedule"
  grep -q "tile_vecs=$4 " "$T/$n.again.txt" && ok || bad "$n: schedule not applied: $(cat "$T/$n.again.txt")"
  "$KILN" check-onnx "$d" --backend opencl --schedule "$T/$n.odd.txt" >"$T/$n.odd.log" 2>&1 && ok ||
    bad "$n: tiles $3x$4: $(cat "$T/$n.odd.log")"
}

"$KILN" check-onnx "$S/tests/fuse" --backend opencl >"$T/probe.log" 2>&1
grep -q "no OpenCL" "$T/probe.log" && { echo "no OpenCL device"; exit 77; }
check "$S/tests/fuse" fuse 3 3
check "$S/examples/transformer" transformer 3 5
# the opencl target has vectors (vector_bits 512): constant-weight products get vector
# work-items of 16 lanes
grep -Eq "^kernel [0-9]+ '[^']*' (Gemm|MatMul) tile_rows=[0-9]+ tile_vecs=[0-9]+ lanes=16" \
  "$T/transformer.txt" && ok || bad "transformer: no vector work-item tile: $(cat "$T/transformer.txt")"
# the memory plan aliases 10 of the transformer's 46 kernels (Reshapes over their input):
# their bodies are empty, and they are neither emitted nor launched (kn_opencl_empty)
n=$(grep -c "^kernel " "$T/transformer.txt")
[ "$n" = 46 ] && ok || bad "transformer: $n kernels, expected 46"
n=$(grep -c "__kernel void" "$T/transformer/model.cl")
[ "$n" = 36 ] && ok || bad "transformer: $n kernels emitted, expected 36"
n=$(grep -c "kn_opencl_launch(uc" "$T/transformer/model.c")
[ "$n" = 36 ] && ok || bad "transformer: $n launches, expected 36"
finish
