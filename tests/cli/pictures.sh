#!/bin/sh
# Pictures and profiles: kiln inspect --dot/--svg (graph through Graphviz), --memory
# --svg (the arena over time), kiln bench --profile/--profile-file and inspect
# --profile. The SVGs must be well-formed XML (xmllint) and hold what they draw.
# usage: pictures.sh KILN SOURCE_DIR
KILN=$1
M=$2/examples/digits/digits.onnx
. "$2/tests/lib.sh"
wellformed() { # FILE
  if command -v xmllint >/dev/null; then xmllint --noout "$1"; else tail -1 "$1" | grep -q "</svg>"; fi
}

# per-kernel profile: one line per kernel (which one ranks first depends on the
# machine's load: only that the convolutions are listed), shares summing to 1
"$KILN" bench "$M" --dim batch=4 --runs 3 --warmup 1 --profile-file "$T/p.json" >"$T/bench.txt" || bad "bench --profile-file"
grep -q "^  *[0-9][0-9]*  *[0-9][0-9]* .* Conv " "$T/bench.txt" && grep -q "^kernels .* mean run" "$T/bench.txt" && ok ||
  bad "bench --profile table: $(cat "$T/bench.txt")"
# as many kernels as kiln compile reports for the same model and shapes
nk=$("$KILN" compile "$M" --dim batch=4 --target native -o "$T/k" | sed -n 's/^\([0-9]*\) kernels.*/\1/p')
[ -n "$nk" ] && [ "$(grep -c '"kernel": ' "$T/p.json")" = "$nk" ] && ok || bad "profile file: not $nk kernels"
sum=$(sed -n 's/.*"share": \([0-9.]*\).*/\1/p' "$T/p.json" | awk '{s += $1} END {printf "%.3f", s}')
[ "$sum" = 1.000 ] && ok || bad "profile shares sum to $sum"
"$KILN" bench "$M" --dim batch=4 --runs 2 --backend c --profile >"$T/c.txt" && grep -q "^kernels" "$T/c.txt" && ok ||
  bad "bench --profile --backend c"
"$KILN" bench "$M" --dim batch=4 --backend interp --profile >/dev/null 2>&1
[ $? = 2 ] && ok || bad "bench --profile --backend interp is not a usage error"
# --profile-clock cpu: the calling thread's CPU time per kernel; only with one thread
"$KILN" bench "$M" --dim batch=4 --runs 2 --profile-clock cpu >"$T/cpu.txt" &&
  grep -q "^per kernel, thread CPU time" "$T/cpu.txt" && grep -q "^kernels .* mean run in CPU time" "$T/cpu.txt" &&
  ok || bad "bench --profile-clock cpu: $(cat "$T/cpu.txt")"
"$KILN" bench "$M" --dim batch=4 --threads 2 --profile-clock cpu >/dev/null 2>&1
[ $? = 2 ] && ok || bad "bench --profile-clock cpu --threads 2 is not a usage error"
"$KILN" bench "$M" --dim batch=4 --profile-clock tsc >/dev/null 2>&1
[ $? = 2 ] && ok || bad "bench --profile-clock tsc is not a usage error"
# --json stays one line with --profile-file
[ "$("$KILN" bench "$M" --dim batch=4 --runs 2 --json --profile-file "$T/p2.json" | wc -l)" = 1 ] && [ -s "$T/p2.json" ] && ok ||
  bad "bench --json --profile-file"

# the graph: dot text, and SVG through Graphviz
"$KILN" inspect "$M" --dim batch=4 --dot "$T/g.dot" --profile "$T/p.json" >/dev/null || bad "inspect --dot"
grep -q "subgraph cluster_n" "$T/g.dot" && grep -q "Relu (fused)" "$T/g.dot" && grep -q "f32\[4,8,8,8\]" "$T/g.dot" &&
  grep -q "% of time" "$T/g.dot" && ok || bad "dot: fused cluster, shapes or profile missing"
if command -v dot >/dev/null; then
  "$KILN" inspect "$M" --dim batch=4 --svg "$T/g.svg" --profile "$T/p.json" >/dev/null && wellformed "$T/g.svg" &&
    grep -q "/3/Conv" "$T/g.svg" && ok || bad "inspect --svg"
fi
# no dot on PATH: a message saying what to install, and no file
mkdir "$T/bin"
ln -s "$(command -v sh)" "$T/bin/sh"
PATH=$T/bin "$KILN" inspect "$M" --svg "$T/none.svg" >/dev/null 2>"$T/err"
[ $? = 1 ] && grep -q "apt-get install graphviz" "$T/err" && [ -z "$(ls "$T" | grep none)" ] && ok ||
  bad "svg without dot: $(cat "$T/err")"
# not a profile
"$KILN" inspect "$M" --profile "$M" >/dev/null 2>"$T/err"
[ $? = 1 ] && grep -q "is not a kiln profile" "$T/err" && ok || bad "bad profile: $(cat "$T/err")"

# quantized models: every quantized value with its scale and zero point (constants
# printed, run-time ones by name), the weights of integer contractions with theirs,
# and their FLOPs (QLinearConv conv1: 2 x 2*8*9*9 outputs x 3*3*3 = 69,984, plus one bias add per output, 1,296: 71,280)
Q=$2/tests/quant/models/qlinear_cnn/model.onnx
"$KILN" inspect "$Q" --dot "$T/q.dot" >/dev/null || bad "inspect --dot quantized"
grep -q 'label="x\\nu8\[2,3,9,9\]\\nscale 0.02, zero 128"' "$T/q.dot" &&
  grep -q 'n0 -> n1 \[label="u8\[2,8,9,9\]\\nscale 0.05, zero 100"' "$T/q.dot" &&
  grep -q 'n2 -> n3 \[label="u8\[2,320\]\\nscale 0.1, zero 90"' "$T/q.dot" &&
  grep -q 'weights i8\[8,3,3,3\]\\nscale per-channel\[8\], zero per-channel\[8\]\\n71.3 kFLOP' "$T/q.dot" && ok ||
  bad "quantized dot: $(grep -e scale -e zero "$T/q.dot")"
"$KILN" inspect "$2/tests/models/dynamic_quant/model.onnx" --dot "$T/dq.dot" >/dev/null &&
  grep -q "u8\[1,2,4,4\]\\\\nscale 'x_scale', zero 'x_zp'" "$T/dq.dot" &&
  grep -q 'ConvInteger\\nconv_quant\\nweights u8\[4,2,3,3\], zero 133' "$T/dq.dot" && ok ||
  bad "dynamic quantization dot: $(grep -e scale -e zero "$T/dq.dot")"
if command -v dot >/dev/null; then
  "$KILN" inspect "$Q" --svg "$T/q.svg" >/dev/null && wellformed "$T/q.svg" && grep -q "scale 0.05, zero 100" "$T/q.svg" &&
    ok || bad "quantized svg"
fi

# a residual block (tests/fuse: Add of the input fused into conv1's epilogue): the
# residual edge goes into the fused steps, drawn bold, named
F=$2/tests/fuse/model.onnx
"$KILN" inspect "$F" --dot "$T/f.dot" >/dev/null || bad "inspect --dot fuse"
c1=$(sed -n 's/^ *\(n[0-9]*\) \[label="Conv\\nconv1\\.*/\1/p' "$T/f.dot")
grep -q "Add (residual), Relu (fused)" "$T/f.dot" &&
  grep -q "^  v[0-9]* -> ${c1}_act \[label=\"residual\", style=bold" "$T/f.dot" && ok ||
  bad "residual edge into ${c1}_act: $(grep -e residual -e '_act \[' "$T/f.dot")"

# the memory plan: one rectangle per temporary of the --memory table
"$KILN" inspect "$M" --dim batch=4 --memory --svg "$T/m.svg" >"$T/m.txt" && wellformed "$T/m.svg" && ok || bad "--memory --svg"
n=$(($(wc -l <"$T/m.txt") - 2))
[ "$(grep -c '): .* at offset' "$T/m.svg")" = "$n" ] && ok || bad "memory svg: not $n buffers"
grep -q "lower bound" "$T/m.svg" && grep -q "region-arena" "$T/m.svg" && ok || bad "memory svg: no lower bound"
finish
