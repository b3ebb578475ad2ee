#!/bin/sh
# The qdq pass (passes/qdq.c, #12): the QDQ model of tests/quant/models/qdq_cnn becomes
# two QLinearConv and two QLinearMatMul (each Relu their output clamp from the zero point,
# kiln_clamp: no Max node), no float
# Conv, MatMul or Gemm and no DequantizeLinear of weights left; the rewritten graph run
# by the interpreter gives the reference (the compiled backends run it in
# quant_models_*); the residual adds of tests/quant/models/qdq_add become QLinearAdd; the
# tiles chosen for inverted residual blocks and stem convolutions.
# usage: qdq.sh KILN SOURCE_DIR
KILN=$1
M=$2/tests/quant/models/qdq_cnn
. "$2/tests/lib.sh"
"$KILN" inspect "$M/model.onnx" --passes shape,qdq,fold,shape >"$T/g.txt" 2>&1 || bad "inspect"
n() { grep -c "= $1(" "$T/g.txt"; }
[ "$(n QLinearConv)" = 2 ] && ok || bad "QLinearConv: $(n QLinearConv), want 2"
[ "$(n QLinearMatMul)" = 2 ] && ok || bad "QLinearMatMul: $(n QLinearMatMul), want 2"
[ "$(n Max)" = 0 ] && ok || bad "Max: $(n Max), want 0"
[ "$(grep -c 'kiln_clamp=' "$T/g.txt")" = 2 ] && grep -q 'kiln_clamp=\[10,255\]}  # conv1' "$T/g.txt" && ok ||
  bad "kiln_clamp: $(grep -c 'kiln_clamp=' "$T/g.txt"), want 2, conv1's [10,255] (its zero point)"
for op in Conv MatMul Gemm Relu QuantizeLinear; do
  c=$(n $op)
  if [ $op = QuantizeLinear ]; then w=1; else w=0; fi # the input's
  [ "$c" = $w ] && ok || bad "$op: $c left, want $w"
done
[ "$(n DequantizeLinear)" = 3 ] && ok || bad "DequantizeLinear: $(n DequantizeLinear), want 3 (the outputs')"
r=$("$KILN" check-onnx "$M" --backend interp --passes shape,qdq,fold,shape 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "interp after qdq: $r"
# Residual adds (tests/quant/make_qdq_add.py): DequantizeLinear x2, Add, [Relu | Clip],
# QuantizeLinear become kiln's QLinearAdd, the Relu and Clip its clamp; the interpreter
# after qdq gives the float32 reference bit for bit (the backends in quant_models_*).
A=$2/tests/quant/models/qdq_add
"$KILN" inspect "$A/model.onnx" --passes shape,qdq,fold,shape >"$T/a.txt" 2>&1 || bad "inspect qdq_add"
na() { grep -c "= $1(" "$T/a.txt"; }
[ "$(na QLinearAdd)" = 6 ] && ok || bad "QLinearAdd: $(na QLinearAdd), want 6"
for op in Add Relu Clip QuantizeLinear DequantizeLinear; do
  [ "$(na $op)" = 0 ] && ok || bad "qdq_add: $op: $(na $op) left, want 0"
done
grep -q 'QLinearAdd(%s2, .*kiln_clamp=\[-128,113\]}  # add3' "$T/a.txt" && ok ||
  bad "add3's Clip(0, 6) as kiln_clamp=[-128,113]: $(grep add3 "$T/a.txt")"
r=$("$KILN" check-onnx "$A" --backend interp --passes shape,qdq,fold,shape 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_add, interp after qdq: $r"
# Every 8-bit input pair (tests/quant/make_qdq_add_all.py). On a CPU of 4 i32 lanes
# (aarch64) the adds keep the float32 steps: those whose division by y_scale a
# multiplication reproduces for all 65,536 pairs multiply (add_m, add_mi), the others keep
# the division (add_t: exact ties; add_r: 1 to 4 pairs differ); all convert to 8 bits
# unsaturated (`u8!`, kx_cast_inrange). On x86 (8 or more lanes) the adds whose float32
# steps an integer form reproduces for all pairs take it (qadd_int_form: add_m, add_mi,
# add_mz and ResNet-18's add_l1 and add_l2, l1 with its rounding constant moved), the
# others (add_t, add_r) the float32 steps. The backends check the bytes (quant_models_*).
AA=$2/tests/quant/models/qdq_add_all
"$KILN" compile "$AA/model.onnx" -o "$T/aa" --emit h --target aarch64 --dump-kir >"$T/aa.txt" 2>&1 ||
  bad "compile qdq_add_all"
kq() { awk -v k="'add_$1'" '$1 == "kernel" { on = ($4 == k) } on && /round\(/' "$T/aa.txt"; }
for k in m:'\* v[0-9]*))' t:'/ v[0-9]*))' r:'/ v[0-9]*))' mi:'\* v[0-9]*))' mz:'\* v[0-9]*))'; do
  kq "${k%%:*}" | grep -q "${k#*:}" && ok || bad "qdq_add_all add_${k%%:*}: want ${k#*:}: $(kq "${k%%:*}")"
done
[ "$(grep -c '[ui]8!(select' "$T/aa.txt")" = 7 ] && ok || bad "qdq_add_all: in-range conversions: $(grep -c '[ui]8!(' "$T/aa.txt"), want 7"
# the output zero point is added after the rounding where it is not the constant 0 (add_mi),
# and not where it is (add_mz: the same bytes, -0.0 and 0.0 convert alike)
kq mi | grep -q 'round(.*)) + f32(v[0-9]*))' && ok || bad "qdq_add_all add_mi: zero point not added: $(kq mi)"
kq mz | grep -q ' + f32(' && bad "qdq_add_all add_mz: zero point 0 added: $(kq mz)" || ok
"$KILN" compile "$AA/model.onnx" -o "$T/aa" --emit h --target x86-64-vnni --dump-kir >"$T/ax.txt" 2>&1 ||
  bad "compile qdq_add_all for x86-64-vnni"
kx() { awk -v k="'add_$1'" '$1 == "kernel" { on = ($4 == k) } on && /(out[0-9]*\[|i32x16 )/' "$T/ax.txt"; }
for k in m mi mz l1 l2; do
  kx $k | grep -q '(i32(in0\[[^]]*\]) \* [0-9]*) + (i32(in[12]\[[^]]*\]) \* [0-9]*)) + -*[0-9]*) >> 2[0-9])' &&
    ok || bad "qdq_add_all add_$k on x86: want the integer form: $(kx $k)"
  # in vectors of 16, four declared, then four clamped 8-bit stores (qadd_int_vec)
  [ "$(kx $k | grep -c '^ *i32x16 v[0-9]* = ')" = 4 ] &&
    [ "$(kx $k | grep -c '^ *out[0-9]*\[.*x16\] = [ui]8(min(max(v[0-9]*, -*[0-9]*), [0-9]*))$')" = 4 ] && ok ||
    bad "qdq_add_all add_$k on x86: want 4 vectors, then 4 stores: $(kx $k)"
done
# l1's rounding constant: 2^20 - 128 * ma moved by -16 units of 2^(21 - 20)
kx l1 | grep -q '\* 3212354) + (i32(in1\[[^]]*\]) \* 1071963)) + -410132768) >> 21)' && ok ||
  bad "qdq_add_all add_l1: want the moved rounding constant: $(kx l1)"
for k in t r; do
  kx $k | grep -q ' >> ' && bad "qdq_add_all add_$k on x86: want the float32 steps: $(kx $k)" || ok
done
# A QDQ Gemm with a float bias has no integer form here: it stays in float, and kiln
# says so once, naming the node (tests/quant/make_qdq_kept.py); the model still runs.
K=$2/tests/quant/models/qdq_gemm_bias
"$KILN" compile "$K/model.onnx" -o "$T/k" >"$T/k.txt" 2>"$T/k.err" || bad "compile qdq_gemm_bias"
[ "$(grep -c 'kept in float' "$T/k.err")" = 1 ] &&
  grep -q "node 'fc' (Gemm): kept in float between its DequantizeLinear and QuantizeLinear: its bias is not int32 at scale x_scale \* w_scale" "$T/k.err" &&
  ok || bad "kept-in-float warning: $(cat "$T/k.err")"
"$KILN" compile "$K/model.onnx" -o "$T/k" -q >/dev/null 2>"$T/q.err"
[ ! -s "$T/q.err" ] && ok || bad "-q leaves: $(cat "$T/q.err")"
r=$("$KILN" check-onnx "$K" --backend llvm 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_gemm_bias through LLVM: $r"
# MaxPool between DequantizeLinear and QuantizeLinear of the same scale and zero point
# (tests/quant/make_qdq_pool.py) becomes a MaxPool of the 8-bit values, one with another
# scale stays float; the pool pass builds row walks for the 8-bit ones (lanes in the
# schedule) and the interpreter after qdq gives the reference (backends: quant_models_*).
P=$2/tests/quant/models/qdq_pool
"$KILN" inspect "$P/model.onnx" --passes shape,qdq,fold,shape >"$T/p.txt" 2>&1 || bad "inspect qdq_pool"
grep -q '%p1: u8\[2,5,9,21\] = MaxPool(%a)' "$T/p.txt" && grep -q '%p2: i8\[2,5,16,40\] = MaxPool(%c)' "$T/p.txt" &&
  ok || bad "qdq_pool: 8-bit MaxPool: $(grep 'MaxPool(' "$T/p.txt")"
grep -q '%m3: f32.* = MaxPool(%a_f)' "$T/p.txt" && ok || bad "qdq_pool: p3 (another scale) not left in float"
"$KILN" compile "$P/model.onnx" -o "$T/pool" --target x86-64-avx512 --dump-schedule "$T/pool.sched" >/dev/null 2>&1 ||
  bad "compile qdq_pool"
[ "$(grep -c "MaxPool lanes=" "$T/pool.sched")" = 3 ] && grep -q "'pool_m2' MaxPool lanes=16" "$T/pool.sched" && ok ||
  bad "qdq_pool: pool pass schedules: $(grep MaxPool "$T/pool.sched")"
r=$("$KILN" check-onnx "$P" --backend interp --passes shape,qdq,fold,shape 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_pool, interp after qdq: $r"
# Stride 2 and 3 (tests/quant/make_qdq_pool_strided.py): on x86-64 the pool pass builds
# their interiors from strided loads of 64 (32) byte lanes (the backends: quant_models_*).
P=$2/tests/quant/models/qdq_pool_strided
"$KILN" compile "$P/model.onnx" -o "$T/pools" --target x86-64-avx512 --dump-kir \
  --dump-schedule "$T/pools.sched" >"$T/pools.kir" 2>&1 || bad "compile qdq_pool_strided"
grep -q 'x64 step 2\]' "$T/pools.kir" && grep -q 'x32 step 3\]' "$T/pools.kir" &&
  grep -q "'pool_p4' MaxPool lanes=64" "$T/pools.sched" && ok ||
  bad "qdq_pool_strided: no strided loads: $(grep MaxPool "$T/pools.sched")"
# p1 (3x3, stride 2): each interior vector column keeps the row max of an output's last
# kernel row for the next output row (a vector local assigned another, once a column:
# two columns, 64 + a remainder); p3 (stride 3) shares no row and keeps none.
kept() { awk -v k="'pool_$1'" '$0 ~ /^kernel / { on = index($0, k) > 0 } on' "$T/pools.kir" |
  grep -cE '^ +v[0-9]+ = v[0-9]+$'; }
[ "$(kept p1)" = 2 ] && [ "$(kept p3)" = 0 ] && ok ||
  bad "qdq_pool_strided: kept row max: p1 $(kept p1), p3 $(kept p3) (expected 2, 0)"
# Strided depthwise (tests/quant/make_dw_strided.py): on x86-64 with VNNI the staged
# words of strides 2, 3 and 4 are built from strided loads of 16 byte lanes (the
# backends: quant_models_*).
for m in dw_strided_s2:2 dw_strided_u8:3 dw_strided_s4:4; do
  P=$2/tests/quant/models/${m%:*}
  "$KILN" compile "$P/model.onnx" -o "$T/dws" --target x86-64-vnni --dump-kir >"$T/dws.kir" 2>&1 ||
    bad "compile ${m%:*}"
  grep -q "x16 step ${m#*:}\]" "$T/dws.kir" && ok || bad "${m%:*}: no strided loads of step ${m#*:}"
done
# Inverted residual blocks (tests/quant/make_qdq_block.py): the layout pass keeps the
# expanded 8-bit tensors channels-last (kn.layout [0,1], [1,1], [1,0] on expansion,
# depthwise, projection); the interpreter runs that graph to the reference; on x86-64 with
# VNNI the depthwise runs in the channels-last tiles (16 lanes, no staged copy, pad=1)
# and the 1x1s in the dot tiles (the backends: quant_fixed_*).
Q=$2/tests/quant/fixed/qdq_block
"$KILN" inspect "$Q/model.onnx" --passes shape,qdq,fold,shape,layout >"$T/q.txt" 2>&1 || bad "inspect qdq_block"
for l in "b1e_conv:0,1" "b1d_conv:1,1" "b1p_conv:1,0" "b2e_conv:0,1" "b2d_conv:1,1" "b2p_conv:1,0"; do
  grep -q "kn.layout=\[${l#*:}\]}  # ${l%%:*}\$" "$T/q.txt" && ok || bad "qdq_block: ${l%%:*} not kn.layout=[${l#*:}]"
done
# not on microcontrollers, whose integer tiles read NCHW words (passes/layout.c)
for t in cortex-m4 cortex-m55; do
  "$KILN" inspect "$Q/model.onnx" --passes shape,qdq,fold,shape,layout --target $t >"$T/q_$t.txt" 2>&1 ||
    bad "inspect qdq_block --target $t"
  ! grep -q "kn.layout" "$T/q_$t.txt" && grep -q "b1d_conv" "$T/q_$t.txt" && ok ||
    bad "qdq_block: a channels-last layout on $t"
done
r=$("$KILN" check-onnx "$Q" --backend interp --passes shape,qdq,fold,shape,layout 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_block, interp after layout: $r"
# Blocks in a row with residual adds (tests/quant/make_qdq_chain.py): the projections' and
# the adds' results stay channels-last into the next expansions (block_outputs_channels_last),
# up to the last projection, whose result is the graph's output; not on microcontrollers.
C=$2/tests/quant/fixed/qdq_chain
"$KILN" inspect "$C/model.onnx" --passes shape,qdq,fold,shape,layout >"$T/c.txt" 2>&1 || bad "inspect qdq_chain"
for l in "bae_conv:0,1" "bap_conv:1,1" "bbe_conv:1,1" "bbp_conv:1,1" "bce_conv:1,1" "bcp_conv:1,1" \
  "bde_conv:1,1" "bdd_conv:1,1" "bdp_conv:1,0"; do
  grep -q "kn.layout=\[${l#*:}\]}  # ${l%%:*}\$" "$T/c.txt" && ok || bad "qdq_chain: ${l%%:*} not kn.layout=[${l#*:}]"
done
for v in r1_y r2_y; do
  grep -q "%$v: u8\[1,9,11,22\] = QLinearAdd" "$T/c.txt" && ok || bad "qdq_chain: $v not NHWC"
done
"$KILN" inspect "$C/model.onnx" --passes shape,qdq,fold,shape,layout --target cortex-m4 >"$T/c_m4.txt" 2>&1 ||
  bad "inspect qdq_chain --target cortex-m4"
! grep -q "kn.layout" "$T/c_m4.txt" && grep -q "r1_add" "$T/c_m4.txt" && ok ||
  bad "qdq_chain: a channels-last layout on cortex-m4"
r=$("$KILN" check-onnx "$C" --backend interp --passes shape,qdq,fold,shape,layout 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_chain, interp after layout: $r"
"$KILN" compile "$Q/model.onnx" -o "$T/blk" --target x86-64-vnni --dump-schedule "$T/blk.sched" >/dev/null 2>&1 ||
  bad "compile qdq_block"
[ "$(grep -c "d_conv' QLinearConv tile_rows=[0-9]* tile_vecs=1 lanes=16 tasks=[0-9]* pad=1$" "$T/blk.sched")" = 2 ] &&
  [ "$(grep -c "[ep]_conv' QLinearConv .* dot=2$" "$T/blk.sched")" = 4 ] && ok ||
  bad "qdq_block: schedules: $(cat "$T/blk.sched")"
# A small ResNet (tests/quant/make_qdq_res.py): on x86-64 with VNNI the layout pass keeps
# the residual blocks channels-last from the stem's output (res_channels_last) up to the
# last block's input: its add is the graph's output, so that block's second convolution
# and the add before it (read by that add) stay NCHW; not without VNNI, not on
# microcontrollers. The interpreter runs the laid-out graph to the reference; the 3x3
# layers take the dot tiles over the padded copy, the pool vectors of 16 channels
# (passes/pool.c, pool_cl_rows; the bytes: quant_fixed_*).
R=$2/tests/quant/fixed/qdq_res
"$KILN" inspect "$R/model.onnx" --target x86-64-vnni --passes shape,qdq,fold,shape,layout >"$T/r.txt" 2>&1 ||
  bad "inspect qdq_res"
for l in "st_conv:0,1" "mp_pool:1,1" "a1_conv:1,1" "a2_conv:1,1" "b1_conv:1,1" "b2_conv:1,0" \
  "bd_conv:1,0" "c1_conv:0,1" "c2_conv:1,0"; do
  grep -q "kn.layout=\[${l#*:}\]}  # ${l%%:*}\$" "$T/r.txt" && ok || bad "qdq_res: ${l%%:*} not kn.layout=[${l#*:}]"
done
grep -q "%r1_y: u8\[1,7,8,16\] = QLinearAdd" "$T/r.txt" && grep -q "%r2_y: u8\[1,32,4,4\] = QLinearAdd" "$T/r.txt" &&
  ok || bad "qdq_res: r1_y not NHWC or r2_y not NCHW"
for t in x86-64-avx2 cortex-m4; do
  "$KILN" inspect "$R/model.onnx" --passes shape,qdq,fold,shape,layout --target $t >"$T/r_$t.txt" 2>&1 ||
    bad "inspect qdq_res --target $t"
  ! grep -q "kn.layout" "$T/r_$t.txt" && grep -q "r1_add" "$T/r_$t.txt" && ok ||
    bad "qdq_res: a channels-last layout on $t"
done
r=$(KILN_TEST_TARGET=x86-64-vnni "$KILN" check-onnx "$R" --backend interp --passes shape,qdq,fold,shape,layout 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_res, interp after layout: $r"
# (KILN_TEST_TARGET gives the interpreter's graph passes the target: the laid-out graph)
KILN_TEST_TARGET=x86-64-vnni "$KILN" run "$R/model.onnx" --random 1 --backend interp \
  --passes shape,qdq,fold,shape,layout --dump-after layout --output-dir "$T/ri" 2>&1 |
  grep -q "kn.layout" && ok || bad "qdq_res: the interpreter's layout pass without the target"
"$KILN" compile "$R/model.onnx" -o "$T/res" --target x86-64-vnni --dump-schedule "$T/res.sched" >/dev/null 2>&1 ||
  bad "compile qdq_res"
[ "$(grep -c "[abc][12]_conv' QLinearConv tile_rows=[0-9]* tile_vecs=[0-9]* lanes=16 .*pad=2 dot=2$" "$T/res.sched")" = 6 ] &&
  grep -q "bd_conv' QLinearConv .* dot=2$" "$T/res.sched" &&
  grep -q "mp_pool' MaxPool lanes=16 " "$T/res.sched" && ok ||
  bad "qdq_res: schedules: $(cat "$T/res.sched")"
# The stem writes channels-last: the channel tiles over its input's kernel rows as bytes
# (tile_stem_cl: 3 x 7 values in 6 words a row, split=5), and the dumped schedule read
# back builds the same C; a schedule's split=1 gives the words of 3 channels a tap back.
grep -q "st_conv' QLinearConv tile_rows=[0-9]* tile_vecs=[0-9]* lanes=16 .*pad=2 dot=2 split=5$" "$T/res.sched" &&
  "$KILN" compile "$R/model.onnx" -o "$T/res2" --target x86-64-vnni --schedule "$T/res.sched" >/dev/null 2>&1 &&
  cmp -s "$T/res/model.c" "$T/res2/model.c" && ok || bad "qdq_res: the stem's schedule: $(grep st_conv "$T/res.sched")"
sed "/st_conv'/s/ split=5\$/ split=1/" "$T/res.sched" >"$T/res1.sched"
"$KILN" compile "$R/model.onnx" -o "$T/res3" --target x86-64-vnni --schedule "$T/res1.sched" \
  --dump-schedule "$T/res3.sched" >/dev/null 2>&1 && ! cmp -s "$T/res/model.c" "$T/res3/model.c" &&
  grep -q "st_conv' QLinearConv .* dot=2$" "$T/res3.sched" && ok ||
  bad "qdq_res: the stem's split=1: $(grep st_conv "$T/res3.sched")"
# A block whose add feeds the float head (tests/quant/make_qdq_head.py): on x86-64-vnni the
# add goes NHWC too, its DequantizeLinear writes NHWC and the GlobalAveragePool reads it so
# (res_channels_last, dq_gap_reader); not on x86-64-avx2. The bytes on every backend:
# quant_fixed_* (the LLVM and C tiles of x86-64-vnni run the laid-out graph), and the
# interpreter on the laid-out graph below.
H=$2/tests/quant/fixed/qdq_head
"$KILN" inspect "$H/model.onnx" --target x86-64-vnni --passes shape,qdq,fold,shape,layout >"$T/h.txt" 2>&1 ||
  bad "inspect qdq_head"
grep -q "%r_y: u8\[1,5,6,40\] = QLinearAdd" "$T/h.txt" && grep -q "%h_f: f32\[1,5,6,40\] = DequantizeLinear" "$T/h.txt" &&
  grep -q "kn.layout=\[1,0\]}  # head_pool\$" "$T/h.txt" && ok || bad "qdq_head: the head not channels-last: $(cat "$T/h.txt")"
"$KILN" inspect "$H/model.onnx" --target x86-64-avx2 --passes shape,qdq,fold,shape,layout >"$T/h2.txt" 2>&1 ||
  bad "inspect qdq_head avx2"
! grep -q "kn.layout" "$T/h2.txt" && ok || bad "qdq_head: a channels-last layout on x86-64-avx2"
r=$(KILN_TEST_TARGET=x86-64-vnni "$KILN" check-onnx "$H" --backend interp --passes shape,qdq,fold,shape,layout 2>&1 | tail -1)
[ "$r" = "1 passed, 0 failed" ] && ok || bad "qdq_head, interp after layout: $r"
# The model-input QuantizeLinear of a channels-last stem (tests/quant/make_qdq_qin.py): on
# x86-64-vnni the stem's transposing copy quantizes the float input (tile_stem_cl,
# stem_cl_qin) and the QuantizeLinear's kernel is empty; with the schedule's split=1 (the
# words of 3 channels a tap) and on x86-64-avx2 it stays a kernel of its own. The bytes:
# quant_fixed_*.
Q=$2/tests/quant/fixed/qdq_qin
"$KILN" compile "$Q/model.onnx" -o "$T/qin" --target x86-64-vnni --dump-schedule "$T/qin.sched" >/dev/null 2>&1 ||
  bad "compile qdq_qin"
grep -q "st_conv' QLinearConv .* split=5$" "$T/qin.sched" &&
  grep -A1 "(QuantizeLinear) \*/" "$T/qin/model.c" | grep -q "^static void model_k0(void) {$" &&
  grep -A2 "'st_conv' (QLinearConv) \*/" "$T/qin/model.c" | grep -q "const float \*restrict in0" &&
  grep -q "kn_rintf(" "$T/qin/model.c" && ok || bad "qdq_qin: the stem does not quantize its input"
sed "/st_conv'/s/ split=5\$/ split=1/" "$T/qin.sched" >"$T/qin1.sched"
"$KILN" compile "$Q/model.onnx" -o "$T/qin1" --target x86-64-vnni --schedule "$T/qin1.sched" >/dev/null 2>&1 &&
  "$KILN" compile "$Q/model.onnx" -o "$T/qin2" --target x86-64-avx2 >/dev/null 2>&1 || bad "compile qdq_qin (split=1, avx2)"
for d in qin1 qin2; do
  grep -A1 "(QuantizeLinear) \*/" "$T/$d/model.c" | grep -q "model_k0(const float \*restrict in0" && ok ||
    bad "qdq_qin ($d): the QuantizeLinear is not a kernel of its own"
done
# Stem convolutions (tests/quant/make_qdq_stem.py): on x86-64-vnni the pixel tiles of
# tile_stem_int (channels x vectors of 16 output pixels: 10 x 2 and 9 x 3), not the
# channel tiles; the 13-wide rows of s3 (less than a vector) keep the plain nest; the
# strided 1x1 s4 the pointwise pixel tiles (8 channels x 2 vectors of pixels; the channel
# tiles had tile_rows=6 tile_vecs=1 here).
S=$2/tests/quant/fixed/qdq_stem
"$KILN" compile "$S/model.onnx" -o "$T/stem" --target x86-64-vnni --dump-schedule "$T/stem.sched" >/dev/null 2>&1 ||
  bad "compile qdq_stem"
grep -q "s1_conv' QLinearConv tile_rows=10 tile_vecs=2 lanes=16 .*pad=2 dot=2 split=5$" "$T/stem.sched" &&
  grep -q "s2_conv' QLinearConv tile_rows=9 tile_vecs=3 lanes=16 .*pad=2 dot=2 split=5$" "$T/stem.sched" &&
  grep -q "s3_conv' QLinearConv tasks=1$" "$T/stem.sched" &&
  grep -q "s4_conv' QLinearConv tile_rows=8 tile_vecs=2 lanes=16 tasks=1 dot=2$" "$T/stem.sched" && ok ||
  bad "qdq_stem: schedules: $(cat "$T/stem.sched")"
# The merged pairs of an RGB stem on the M4 (tile_stem_pairs, tests/quant/make_stem_words.py):
# split=5, and the dumped schedule read back builds the same C.
W=$2/tests/quant/models/stem_words_c3/model.onnx
"$KILN" compile "$W" -o "$T/sw1" --target cortex-m4 --dump-schedule "$T/sw.sched" >/dev/null 2>&1 &&
  "$KILN" compile "$W" -o "$T/sw2" --target cortex-m4 --schedule "$T/sw.sched" >/dev/null 2>&1 ||
  bad "compile stem_words_c3"
grep -q "'stem' QLinearConv tile_rows=2 tile_vecs=2 lanes=1 pad=1 dot=1 split=5$" "$T/sw.sched" &&
  cmp -s "$T/sw1/model.c" "$T/sw2/model.c" && ok ||
  bad "stem_words_c3 on cortex-m4: $(cat "$T/sw.sched")"
# s4's input words gathered at stride 2 in vectors (rows of 11 outputs: one vector of 8
# words and the overlapping one ending the row, each channel's bytes a strided load) on
# x86-64-vnni; one byte load a channel and word on generic (no vectors). The bytes:
# quant_fixed_*.
"$KILN" compile "$S/model.onnx" -o "$T/stem" --emit h --target x86-64-vnni --dump-kir >"$T/stem.kir" 2>&1 ||
  bad "compile qdq_stem --dump-kir"
w4() { awk '$1 == "kernel" { on = ($4 == "'"'s4_conv'"'") } on && / = i32\(/' "$1"; }
[ "$(w4 "$T/stem.kir" | grep -o 'x8 step 2' | wc -l)" = 8 ] && ok ||
  bad "qdq_stem s4: word gather not in strided vectors: $(w4 "$T/stem.kir")"
"$KILN" compile "$S/model.onnx" -o "$T/stem" --emit h --target generic --dump-kir >"$T/stem_g.kir" 2>&1 ||
  bad "compile qdq_stem --target generic --dump-kir"
w4 "$T/stem_g.kir" | grep -q 'step' && bad "qdq_stem s4: strided loads on generic" || ok
# The padded word copies of qdq_prefetch's two 3x3 convolutions (tests/quant/
# make_qdq_prefetch.py: 11 x 13 planes each) store their zero-point words in the pads only
# (conv_words_border), not in the whole copy (a store indexed by one loop variable) that
# the words then overwrite: y1 (9 x 11, pads 1) the rows above with the first left pad,
# each right pad with the next left pad, the last right pad with the rows below; y2 (10 x
# 13 at stride 2, of whose pads only the top row is read) the top row. Bytes: quant_fixed_*.
"$KILN" compile "$2/tests/quant/fixed/qdq_prefetch/model.onnx" -o "$T/pf" --emit h \
  --target x86-64-vnni --dump-kir >"$T/pf.kir" 2>&1 || bad "compile qdq_prefetch --dump-kir"
grep -qE '^ +s[0-9]+\[v[0-9]+\] = ' "$T/pf.kir" && bad "qdq_prefetch: the whole word copy filled" || ok
[ "$(grep -cE '^ +s[0-9]+\[\(\(v[0-9]+ \* 143\) \+ .*\] = -?[0-9]+$' "$T/pf.kir")" = 4 ] && ok ||
  bad "qdq_prefetch: pad stores: $(grep -E '^ +s[0-9]+\[.*\] = -?[0-9]+$' "$T/pf.kir")"
# The stems' phase-split words (tile_stem_int) likewise (stem_words_border): s1 (7x7
# stride 2, pads 3, two phases) the rows above, the runs from phase 0's columns to phase
# 1's and from phase 1's to the next row's phase 0, the last row's two, the rows below
# with them (5 runs of the zero-point word 0x77777777); s2 (3x3 stride 1, pads 1 0 2 1)
# the rows above, each right pad, the last one with the rows below (3 of 0x7d7d7d7d).
[ "$(grep -cE '^ +s[0-9]+\[.*\] = 2004318071$' "$T/stem.kir")" = 5 ] &&
  [ "$(grep -cE '^ +s[0-9]+\[.*\] = 2105376125$' "$T/stem.kir")" = 3 ] && ok ||
  bad "qdq_stem: pad stores: $(grep -E '^ +s[0-9]+\[.*\] = -?[0-9]+$' "$T/stem.kir")"
# The channels-last channel tiles' 8-bit stores in groups of four as one saturating pack
# chain on x86 with AVX-512 (codegen/llvm/emit_llvm.c, store_packs_x86): qdq_packs's int8
# values (signed packs, the clamp [-37, 125] as byte maxima and minima), qdq_res's u8 ones
# (unsigned packs; Relu6 over zero point 3: umax/umin), qdq_add_all's integer adds (add_mi
# and add_mz into int8, the whole range); none for x86-64-avx2 (8 lanes). Their bytes: the quant_fixed_* and
# quant_models_* tests.
for m in fixed/qdq_packs:packsswb:smax fixed/qdq_res:packuswb:umin models/qdq_add_all:packsswb:-; do
  d=${m%%:*} r=${m#*:}
  "$KILN" compile "$2/tests/quant/$d/model.onnx" -o "$T/pk" --emit llvm --target x86-64-vnni \
    --name pk >/dev/null 2>&1 || bad "compile $d for x86-64-vnni"
  grep -q "call <64 x i8> @llvm.x86.avx512.${r%%:*}.512(" "$T/pk/pk.ll" &&
    { [ "${r#*:}" = - ] || grep -q "@llvm.${r#*:}.v64i8(" "$T/pk/pk.ll"; } && ok ||
    bad "$d: no ${r%%:*} chain with ${r#*:}"
  "$KILN" compile "$2/tests/quant/$d/model.onnx" -o "$T/pk" --emit llvm --target x86-64-avx2 \
    --name pk >/dev/null 2>&1 || bad "compile $d for x86-64-avx2"
  grep -q "llvm.x86.avx512.pack" "$T/pk/pk.ll" && bad "$d: packs for x86-64-avx2" || ok
done
finish
