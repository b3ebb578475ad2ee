#!/bin/sh
# Dynamically quantized models (tests/quant/make_dynq_models.py: DynamicQuantizeLinear ->
# MatMulInteger / ConvInteger -> Cast -> Mul -> [Add] -> [Relu | Clip], as ONNX Runtime's
# quantize_dynamic writes them): the dynq pass (passes/dynq.c) folds each float tail into
# its integer contraction (no Cast, Add, Relu, Clip left, no kernel of them; only the
# scale products' small Mul), and not where the int32 result has another reader; the fused
# kernels give the bits of the ONNX reference (numpy, op by op in float32, ref_*.npy) on
# the interpreter (the unfused graph, and the fused nodes with --passes), C, LLVM,
# OpenCL, the plain loop nests (-O0) and the integer tiles of x86-64-avx2 and cortex-m4
# through LLVM (the M4's C and object on QEMU: quant_cortex_m4_qemu, _obj_qemu). dynq_attn's last output follows a float
# Softmax, whose bits differ between backends: there the fused run is compared with the
# same backend's unfused run (the pipeline without dynq).
# usage: dynq.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/quant/dynq
. "$2/tests/lib.sh"
FUSED=shape,qdq,fold,shape,deseq,shape,fold,shape,transpose,bnfold,weights,act,norm,dynq,fuse,chain
NODYNQ=shape,qdq,fold,shape,deseq,shape,fold,shape,transpose,bnfold,weights,act,norm,fuse,chain,patch,layout,lower,depthwise,pool,stem,winograd,tile,vmath,lowp,sescale,plan,parallel,index

# the graph after the default graph passes: what is left of each tail
n() { grep -c "= $1(" "$T/$2.txt"; }
for m in mlp attn cnn; do
  "$KILN" inspect "$D/dynq_$m/model.onnx" >"$T/$m.txt" 2>&1 || bad "inspect dynq_$m"
  for op in Cast Add Relu Clip; do
    [ "$(n $op $m)" = 0 ] && ok || bad "dynq_$m: $(n $op $m) $op left, want 0"
  done
done
# only the products of the scales stay Muls (mlp 2, attn 3: the output projection's
# two-Mul tail is fused whole, cnn 3)
for e in mlp:2 attn:3 cnn:3; do
  m=${e%:*}
  [ "$(n Mul $m)" = "${e#*:}" ] && ok || bad "dynq_$m: $(n Mul $m) Mul, want ${e#*:}"
done
ep() { grep -q "= $2(.*kn.epilogue=\[$3\]}  # $4" "$T/$1.txt" && ok || bad "$1 $4: want [$3]: $(grep "# $4" "$T/$1.txt")"; }
ep mlp MatMulInteger '"Mul @4","Add @5","Relu"' h1_acc_matmulinteger
ep mlp MatMulInteger '"Mul @4","Add @5"' y_acc_matmulinteger # Mul(scale, x), Add(b, x)
ep attn MatMulInteger '"Mul @4","Mul @5","Add @6"' out_acc_matmulinteger
ep cnn ConvInteger '"Mul @4","Add @5","Relu"' c1_acc_convinteger
ep cnn ConvInteger '"Mul @4","Clip 0 6"' c3_acc_convinteger
grep -q "f32\[1,8,32\] = MatMulInteger" "$T/attn.txt" && ok || bad "dynq_attn: q not written by its MatMulInteger"
# no kernel of a Cast, Add, Relu or Clip in the compiled program
"$KILN" compile "$D/dynq_cnn/model.onnx" -o "$T/cc" --emit h --dump-schedule "$T/cnn.sched" >/dev/null 2>&1 ||
  bad "compile dynq_cnn"
grep -q "' \(Cast\|Add\|Relu\|Clip\)" "$T/cnn.sched" && bad "dynq_cnn: a tail kernel: $(cat "$T/cnn.sched")" || ok
[ "$(grep -c "' ConvInteger tile_rows=" "$T/cnn.sched")" = 3 ] && ok || bad "dynq_cnn: not tiled: $(cat "$T/cnn.sched")"
# a depthwise ConvInteger keeps its tail (the depthwise tiles take no epilogue)
"$KILN" inspect "$D/dynq_dw/model.onnx" >"$T/dw.txt" 2>&1
[ "$(n Cast dw)" = 1 ] && ok || bad "dynq_dw: $(n Cast dw) Cast, want 1 (not fused)"
# an int32 result with another reader (a graph output) keeps its tail
"$KILN" inspect "$2/tests/quant/models/dynamic_quant/model.onnx" >"$T/dq.txt" 2>&1
[ "$(n Cast dq)" = 2 ] && ok || bad "dynamic_quant: $(n Cast dq) Cast, want 2 (its int32 results are outputs)"

# same() MODEL DIR OUTPUT: kiln's output equals the reference's bytes
same() {
  hl=$(od -An -tu2 -j8 -N2 "$D/$1/ref_$3.npy") # .npy 1.0: the header's length at byte 8
  sz=$(($(wc -c <"$D/$1/ref_$3.npy") - 10 - hl))
  tail -c $sz "$D/$1/ref_$3.npy" >"$T/want"
  tail -c $sz "$2/$3.npy" >"$T/got" 2>/dev/null
  cmp -s "$T/want" "$T/got"
}
run() { # name backend [options]: runs model $1 on $2 into $T/$1.$2$tag
  m=$1 b=$2
  shift 2
  "$KILN" run "$D/$m/model.onnx" --input "x=$D/$m/test_data_set_0/input_0.pb" --backend $b \
    --output-dir "$T/o" -q "$@" 2>"$T/err" || { bad "$m $b $*: $(cat "$T/err")"; return 1; }
}
for m in dynq_mlp dynq_attn dynq_cnn dynq_dw; do
  for cfg in interp "interp --passes $FUSED" c llvm opencl "llvm -O0" "llvm x86-64-avx2" "llvm cortex-m4"; do
    set -- $cfg
    b=$1
    shift
    tgt=
    case "$1" in x86-* | cortex-*) tgt=$1 && shift ;; esac
    [ $b = opencl ] && ! "$KILN" run "$D/$m/model.onnx" --random 1 --backend opencl -q 2>/dev/null && continue
    rm -rf "$T/o"
    KILN_TEST_TARGET=$tgt run $m $b "$@" || continue
    for r in "$D/$m"/ref_*.npy; do
      o=${r##*/ref_}
      o=${o%.npy}
      [ $o = out_add ] && continue
      same $m "$T/o" $o && ok || bad "$m on $cfg: $o differs from the reference"
    done
    [ $m = dynq_attn ] && [ "$b" != interp ] && {
      rm -rf "$T/fused" && mv "$T/o" "$T/fused"
      KILN_TEST_TARGET=$tgt run $m $b --passes $NODYNQ "$@" &&
        cmp -s "$T/o/out_add.npy" "$T/fused/out_add.npy" && ok ||
        bad "$m on $cfg: the fused output projection differs from the unfused one"
    }
  done
done
finish
