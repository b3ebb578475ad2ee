#!/bin/sh
# Post-training quantization (#12 items 1, 5, 7): the digits example quantized with 100
# calibration images from its training split (tests/quant/make_digits_ptq.py) keeps
# its top-1 accuracy on the 359 held-out images within 1 point of float; the int8
# model's output is the same bytes on the interpreter (integer operators after the qdq
# pass), C, LLVM and OpenCL; the report, --keep-float and the CLI's errors.
# usage: ptq.sh KILN SOURCE_DIR
KILN=$1
M=$2/examples/digits/digits.onnx
D=$2/tests/quant/digits
. "$2/tests/lib.sh"
right() { sed -n 's/^top-1: \([0-9]*\) of 359 = .*/\1/p' "$1"; }
RUN="run $M --input image=$D/heldout_images.npy --labels $D/heldout_labels.npy"
Q="--quantize int8 --calibrate $D/calib.npy"

"$KILN" $RUN >"$T/f.txt" 2>&1 || bad "float run: $(cat "$T/f.txt")"
f=$(right "$T/f.txt")
[ -n "$f" ] && ok || bad "float top-1: $(cat "$T/f.txt")"
for b in interp c llvm opencl; do
  "$KILN" $RUN $Q --backend $b --output-dir "$T/$b" >"$T/$b.txt" 2>&1 || {
    bad "int8 on $b: $(cat "$T/$b.txt")"
    continue
  }
  q=$(right "$T/$b.txt")
  # at most 1 point (3.59 images of 359) below float
  [ -n "$q" ] && [ $((100 * (f - q))) -le 359 ] && ok || bad "$b: int8 top-1 $q of 359, float $f"
  [ $b = interp ] || { cmp -s "$T/interp/logits.npy" "$T/$b/logits.npy" && ok || bad "$b output differs from the interpreter's"; }
done
# each layer integer: no float contraction left, four integer ones
"$KILN" inspect "$M" --dim batch=1 --passes shape >/dev/null 2>&1 || bad "inspect"
"$KILN" compile "$M" --dim batch=1 $Q -o "$T/k" --dump-after qdq >"$T/k.txt" 2>&1 || bad "compile: $(cat "$T/k.txt")"
[ "$(grep -c '= QLinearConv(' "$T/k.txt")" = 2 ] && [ "$(grep -c '= QLinearMatMul(' "$T/k.txt")" = 2 ] &&
  [ "$(grep -c '= \(Conv\|Gemm\|MatMul\)(' "$T/k.txt")" = 0 ] && ok || bad "integer layers: $(grep ' = ' "$T/k.txt")"
# the report: the table (4 layers and the output line) and DIR/NAME_quant.json
[ "$(grep -c '^/[0-9]/\(Conv\|Gemm\)' "$T/k.txt")" = 4 ] && grep -q '^output SQNR .* 0 of 4 layers in float$' "$T/k.txt" &&
  ok || bad "report table: $(cat "$T/k.txt" | head -8)"
grep -q "^wrote $T/k/model_quant.json$" "$T/k.txt" && [ "$(grep -c '"sqnr_db": [0-9]' "$T/k/model_quant.json")" = 4 ] && grep -q '"calibration": "minmax"' "$T/k/model_quant.json" &&
  ok || bad "JSON report: $(cat "$T/k/model_quant.json")"
# the other calibration methods and int8 activations run and report
for c in percentile percentile=99.9 entropy; do
  "$KILN" $RUN $Q --calibration $c --activations int8 --backend llvm >"$T/c.txt" 2>&1 &&
    grep -q "^output SQNR .*($(echo $c | cut -d= -f1))" "$T/c.txt" && [ "$(right "$T/c.txt")" -ge 330 ] && ok ||
    bad "--calibration $c: $(cat "$T/c.txt")"
done
# --keep-float: that layer stays a float Gemm, the rest integer
"$KILN" compile "$M" --dim batch=1 $Q --keep-float /9/Gemm -o "$T/kf" --dump-after qdq >"$T/kf.txt" 2>&1 || bad "keep-float"
[ "$(grep -c '= Gemm(' "$T/kf.txt")" = 1 ] && [ "$(grep -c '= QLinearMatMul(' "$T/kf.txt")" = 1 ] &&
  grep -q '^/9/Gemm .*(float)' "$T/kf.txt" && ok || bad "--keep-float /9/Gemm: $(grep ' = \|Gemm' "$T/kf.txt")"
# --quantize auto: a bound int8 already meets keeps nothing in float; 0 keeps all
"$KILN" $RUN --quantize auto --max-drop 0.05 --calibrate $D/calib.npy >"$T/a.txt" 2>&1 &&
  grep -q '^auto: 0 layers in float: .*(within --max-drop)$' "$T/a.txt" && ok || bad "auto 0.05: $(cat "$T/a.txt")"
"$KILN" $RUN --quantize auto --max-drop 0 --calibrate $D/calib.npy >"$T/a.txt" 2>&1 &&
  grep -q '^auto: 4 layers in float: output relative error 0.0000 (within --max-drop)$' "$T/a.txt" &&
  [ "$(right "$T/a.txt")" = "$f" ] && ok || bad "auto 0: $(cat "$T/a.txt")"

# kiln quantize: a QDQ ONNX file (7 activations quantized, 4 weights and 4 biases
# dequantized) that kiln compiles to the same bytes as --quantize (and, where Debian's
# Python has onnx, that onnx.checker accepts and whose weights, biases and input
# parameters are numpy's from the rules of docs/quantization.md)
"$KILN" quantize "$M" --calibrate $D/calib.npy -o "$T/q.onnx" >"$T/q.txt" 2>&1 && grep -q "^wrote $T/q.onnx$" "$T/q.txt" &&
  ok || bad "kiln quantize: $(cat "$T/q.txt")"
"$KILN" run "$T/q.onnx" --input image=$D/heldout_images.npy --backend llvm --output-dir "$T/qf" -q &&
  cmp -s "$T/qf/logits.npy" "$T/interp/logits.npy" && ok || bad "the QDQ file's output differs from --quantize's"
"$KILN" inspect "$T/q.onnx" --passes shape >"$T/qi.txt" 2>&1
[ "$(grep -c '= QuantizeLinear(' "$T/qi.txt")" = 7 ] && [ "$(grep -c '= DequantizeLinear(' "$T/qi.txt")" = 15 ] &&
  grep -q 'f32\[batch,1,8,8\]' "$T/qi.txt" && ok || bad "QDQ file: $(cat "$T/qi.txt" | head -20)"
if /usr/bin/python3 -c 'import onnx' 2>/dev/null; then
  /usr/bin/python3 -c "import onnx, sys; onnx.checker.check_model(onnx.load(sys.argv[1]), full_check=True)" "$T/q.onnx" &&
    ok || bad "onnx.checker refuses the QDQ file"
  # the parameters against numpy's (tests/quant/check_ptq_params.py)
  /usr/bin/python3 "$2/tests/quant/check_ptq_params.py" "$M" "$T/q.onnx" $D/calib.npy image >"$T/p.txt" 2>&1 &&
    grep -q "^8 weight and bias tensors checked, 0 bad$" "$T/p.txt" && ok || bad "quantization parameters: $(cat "$T/p.txt")"
fi
err2() { "$KILN" "$@" >"$T/e.txt" 2>&1; }
err2 quantize "$M" --calibrate $D/calib.npy
[ $? = 2 ] && grep -q "no output file given (-o FILE.onnx)" "$T/e.txt" && ok || bad "quantize without -o: $(cat "$T/e.txt")"
err2 quantize "$2/tests/depthwise/model.onnx" --calibrate "$2/tests/depthwise" -o "$T/w.onnx"
[ $? = 1 ] && grep -q "node 'dw4' (Conv): has kiln's own attribute 'kn.epilogue', which ONNX does not know" "$T/e.txt" &&
  [ ! -e "$T/w.onnx" ] && ok || bad "quantize of a kiln-only attribute: $(cat "$T/e.txt")"

# calibration from a folder of .npy files, and from ONNX test_data_set_* folders
mkdir "$T/cal" && cp $D/calib.npy "$T/cal/a.npy" && cp $D/calib.npy "$T/cal/b.npy"
"$KILN" $RUN --quantize int8 --calibrate "$T/cal" >"$T/d.txt" 2>&1 && grep -q "on 200 calibration samples" "$T/d.txt" &&
  ok || bad "folder of .npy: $(cat "$T/d.txt")"
C=$2/tests/quant/ptq_clip
for b in interp llvm; do
  "$KILN" run $C/model.onnx --quantize int8 --calibrate $C --input x=$C/test_data_set_0/input_0.pb --backend $b \
    --output-dir "$T/s$b" >"$T/s.txt" 2>&1 && grep -q "on 2 calibration samples" "$T/s.txt" && ok ||
    bad "test_data_set calibration on $b: $(cat "$T/s.txt")"
done
cmp -s "$T/sinterp/y.npy" "$T/sllvm/y.npy" && ok || bad "test_data_set calibration: llvm differs from interp"

# Relu6 (Clip 0..6) after a convolution: the qdq pass folds it into the convolution's
# requantization as the clamp to the quantized bounds (kiln_clamp; tests/quant/make_ptq_clip.py);
# the backends agree
"$KILN" compile $C/model.onnx --quantize int8 --calibrate $C/calib.npy -o "$T/clip" --dump-after qdq >"$T/clip.txt" 2>&1 || bad "clip compile"
[ "$(grep -c '= QLinearConv(' "$T/clip.txt")" = 2 ] && [ "$(grep -c 'kiln_clamp=' "$T/clip.txt")" = 2 ] &&
  [ "$(grep -c '= \(Clip\|Conv\|Min\|Max\)(' "$T/clip.txt")" = 0 ] && ok || bad "clip: $(grep ' = ' "$T/clip.txt")"
for b in interp c llvm; do
  "$KILN" run $C/model.onnx --quantize int8 --calibrate $C/calib.npy --random 3 --backend $b --output-dir "$T/clip$b" -q ||
    bad "clip on $b"
  [ $b = interp ] || { cmp -s "$T/clipinterp/y.npy" "$T/clip$b/y.npy" && ok || bad "clip: $b differs from interp"; }
done

# residual adds (tests/quant/make_ptq_add.py): --quantize's own QLinearAdds, with and
# without a Relu, compute in fixed point (kiln_fixed_point; ir/requant.h kn_qadd) and
# every backend gives the interpreter's bytes; kiln quantize's file leaves out the mark
# on its QuantizeLinear nodes (kiln_ptq), which ONNX does not know
A=$2/tests/quant/ptq_add
"$KILN" compile $A/model.onnx --quantize int8 --calibrate $A/calib.npy -o "$T/add" --dump-after qdq >"$T/add.txt" 2>&1 || bad "add compile"
[ "$(grep -c '= QLinearAdd(.*kiln_fixed_point=1' "$T/add.txt")" = 2 ] &&
  [ "$(grep -c '= QLinearAdd(.*kiln_clamp=' "$T/add.txt")" = 1 ] && ok || bad "add: $(grep ' = ' "$T/add.txt")"
for b in interp c llvm opencl; do
  "$KILN" run $A/model.onnx --quantize int8 --calibrate $A/calib.npy --random 5 --backend $b --output-dir "$T/add$b" -q ||
    bad "add on $b"
  [ $b = interp ] || { cmp -s "$T/addinterp/y.npy" "$T/add$b/y.npy" && ok || bad "add: $b differs from interp"; }
done
"$KILN" quantize $A/model.onnx --calibrate $A/calib.npy -o "$T/qa.onnx" >/dev/null 2>&1 && ! grep -q kiln_ptq "$T/qa.onnx" &&
  "$KILN" compile "$T/qa.onnx" -o "$T/qa" --dump-after qdq >"$T/qa.txt" 2>&1 &&
  [ "$(grep -c '= QLinearAdd(' "$T/qa.txt")" = 2 ] &&
  [ "$(grep -c '= QLinearAdd(.*kiln_fixed_point' "$T/qa.txt")" = 0 ] && ok || bad "kiln quantize's adds: $(grep QLinearAdd "$T/qa.txt")"

# errors: exit 1 naming the file or node, exit 2 for usage
err() { # expected-code pattern args...
  code=$1 pat=$2
  shift 2
  "$KILN" "$@" >"$T/e.txt" 2>&1
  rc=$?
  [ $rc = "$code" ] && grep -q -- "$pat" "$T/e.txt" && ok || bad "$* -> $rc: $(cat "$T/e.txt")"
}
err 1 "--keep-float: no quantized layer is named 'nope' (the layers: /0/Conv, /3/Conv, /7/Gemm, /9/Gemm)" $RUN $Q --keep-float nope
err 1 "--calibrate: cannot read '$T/missing'" $RUN --quantize int8 --calibrate "$T/missing"
err 1 "$D/heldout_labels.npy: a calibration file must hold input 'image' (rank 4)" $RUN --quantize int8 --calibrate $D/heldout_labels.npy
mkdir "$T/empty"
err 1 "no .npy files and no test_data_set_\* folders" $RUN --quantize int8 --calibrate "$T/empty"
err 1 "--labels $D/calib.npy: holds f32\[100,1,8,8\]" $RUN --labels $D/calib.npy
err 2 "--quantize needs calibration inputs: --calibrate PATH" $RUN --quantize int8
err 2 "--quantize takes int8 or auto, got 'int4'" $RUN --quantize int4 --calibrate $D/calib.npy
err 2 "--quantize auto needs --max-drop X" $RUN --quantize auto --calibrate $D/calib.npy
err 2 "--calibration takes minmax, percentile\[=P\] or entropy, got 'kl'" $RUN $Q --calibration kl
err 2 "go with --quantize" $RUN --calibrate $D/calib.npy
finish
