#!/bin/sh
# What the loader makes of ONNX Runtime's contrib operators (frontend/onnx_contrib.c),
# on tests/quant/contrib's models (their values are checked by quant_contrib_*): no
# com.microsoft node is left, QLinearAdd computes in double, a QLinearConcat whose inputs
# share the output's scale and zero point is an 8-bit Concat, and the contrib Q/DQ of a
# QDQ convolution let the qdq pass make a fixed-point QLinearConv.
# usage: contrib.sh KILN SOURCE_DIR
KILN=$1
D=$2/tests/quant/contrib
fail=0
check() { # MODEL PATTERN WHAT
  if ! "$KILN" inspect "$D/$1/model.onnx" 2>&1 | grep -qE -- "$2"; then
    echo "FAIL $1: $3"
    fail=1
  fi
}
for m in "$D"/*/; do
  m=$(basename "$m")
  if "$KILN" inspect "$D/$m/model.onnx" 2>&1 | grep -q "com.microsoft"; then
    echo "FAIL $m: a com.microsoft node is left"
    fail=1
  fi
done
check ms_add 'QLinearAdd\(.*\{kiln_f64=1\}  # add_u8' "QLinearAdd without kiln_f64"
check ms_concat '%y2: u8\[1,3,4,8\] = Concat\(%a, %e\)' "the same-scale QLinearConcat is not an 8-bit Concat"
check ms_qdq 'QLinearConv\(%xq, .*kiln_fixed_point=1' "the com.microsoft QDQ convolution is not a QLinearConv"
check ms_gemm '%y1: u8\[5,13\] = QLinearMatMul\(' "QGemm (alpha 1, per-column bias) is not a QLinearMatMul"
[ $fail = 0 ] && echo "contrib rewrites: ok"
exit $fail
