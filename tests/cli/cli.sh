#!/bin/sh
# Command-line tests: exit codes (0 ok, 1 bad model or input, 2 usage), one-line
# messages naming the file, and no output file left behind by a failed run.
# usage: cli.sh KILN SOURCE_DIR
KILN=$1
SRC=$2
EX=$SRC/examples/digits
. "$2/tests/lib.sh"

# expect CODE PATTERN -- command...: exit code CODE and PATTERN in stdout+stderr.
expect() {
  code=$1 pat=$2
  shift 3
  "$@" >"$T/out" 2>&1
  rc=$?
  if [ "$rc" = "$code" ] && grep -q -- "$pat" "$T/out"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL: $* -> exit $rc (wanted $code, '$pat'):"
    sed 's/^/    /' "$T/out" | head -5
  fi
}
# no_outputs DIR: a failed run wrote nothing.
no_outputs() {
  if [ -z "$(ls -A "$1" 2>/dev/null)" ]; then pass=$((pass + 1)); else
    fail=$((fail + 1)); echo "FAIL: files left in $1: $(ls "$1")"; fi
}

expect 2 "usage: kiln" -- "$KILN"
expect 0 "check-onnx" -- "$KILN" --help
expect 2 "unknown command" -- "$KILN" frobnicate
for c in run inspect check-onnx; do expect 0 "usage: kiln $c" -- "$KILN" $c --help; done
expect 2 "no model given" -- "$KILN" run
expect 2 "unknown option '--bogus'" -- "$KILN" run "$EX/digits.onnx" --bogus
expect 2 "unknown backend" -- "$KILN" run "$EX/digits.onnx" --backend nope

# a good run, with inputs from a file and from a seed
mkdir "$T/ok"
expect 0 "logits: f32\[48,10\]" -- "$KILN" run "$EX/digits.onnx" --input "image=$EX/test_images.npy" --output-dir "$T/ok"
[ -f "$T/ok/logits.npy" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: no logits.npy"; }
expect 0 "logits: f32\[3,10\]" -- "$KILN" run "$EX/digits.onnx" --random 7 --dim batch=3
expect 0 "logits: f32\[2,10\]" -- "$KILN" run "$EX/digits.onnx" --random 7 --shape image=2,1,8,8
expect 1 "input 'image' has symbolic dimension 'batch': pass --dim batch=N (e.g. --dim batch=1) or --shape image=1,1,8,8 (needed for --random)" -- "$KILN" run "$EX/digits.onnx" --random 7
expect 0 "parameters" -- "$KILN" inspect "$EX/digits.onnx" --dim batch=1
expect 0 '"flops": ' -- "$KILN" inspect "$EX/digits.onnx" --json
expect 1 "unknown pass 'nope'" -- "$KILN" inspect "$EX/digits.onnx" --passes shape,nope

# bad models: exit 1, the file named, nothing written
head -c 700 "$EX/digits.onnx" >"$T/truncated.onnx"
printf 'this is not a model' >"$T/text.onnx"
: >"$T/empty.onnx"
for m in truncated text; do
  mkdir "$T/out_$m"
  expect 1 "$T/$m.onnx: not an ONNX model" -- "$KILN" run "$T/$m.onnx" --random 1 --output-dir "$T/out_$m"
  no_outputs "$T/out_$m"
done
expect 1 "cannot open" -- "$KILN" run "$T/missing.onnx" --random 1
expect 1 "the file is empty" -- "$KILN" run "$T/empty.onnx" --random 1

# bad inputs: wrong dtype, wrong shape, wrong name, Fortran order
mkdir "$T/out_in"
expect 1 "input 'image' has type i64" -- "$KILN" run "$EX/digits.onnx" --input "image=$EX/test_labels.npy" --output-dir "$T/out_in"
no_outputs "$T/out_in"
expect 1 "input 'image' has shape f32\[48,1,8,8\], the model expects f32\[40,1,8,8\]" -- \
  "$KILN" run "$EX/digits.onnx" --shape image=40,1,8,8 --input "image=$EX/test_images.npy"
# mistakes in --shape/--dim/--passes/--target are answered with what the model or kiln has
expect 1 "no input dimension is named 'batchx' (the model's symbolic dimensions: batch)" -- "$KILN" inspect "$EX/digits.onnx" --dim batchx=1
expect 1 "--shape image=1,8,8 gives 3 sizes; input 'image' is f32\[batch,1,8,8\]: give 4" -- "$KILN" inspect "$EX/digits.onnx" --shape image=1,8,8
expect 1 "the model has no input 'nope' (its inputs: image)" -- "$KILN" inspect "$EX/digits.onnx" --shape nope=1
expect 1 "unknown pass 'foo' in --passes (passes: " -- "$KILN" inspect "$EX/digits.onnx" --passes shape,foo
expect 2 "unknown target 'm9' (targets: native, generic," -- "$KILN" compile "$EX/digits.onnx" -o "$T/x" --target m9
expect 1 "digits.onnx: the model has no input 'img' (its inputs: image)" -- "$KILN" run "$EX/digits.onnx" --input "img=$EX/test_images.npy"
printf "\223NUMPY\001\000F\000{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }            \n" >"$T/f.npy"
printf '\000\000\000\000\000\000\000\000' >>"$T/f.npy"
expect 1 "Fortran order" -- "$KILN" run "$EX/digits.onnx" --input "image=$T/f.npy"
expect 1 "no value for input 'image'" -- "$KILN" run "$EX/digits.onnx"

# check-onnx over one ONNX test folder
D=/usr/share/libonnx-testdata/data/node/test_relu
if [ -d "$D" ]; then
  "$KILN" check-onnx "$D" >"$T/out" 2>&1
  [ "$(tail -n 1 "$T/out")" = "1 passed, 0 failed" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: check-onnx test_relu:"; cat "$T/out"; }
fi
# check-onnx's worker processes: a test that crashes or hangs fails with its cause, the
# same worker's earlier results stand and a new worker runs the tests after it, whatever
# the batch size (KILN_TEST_CRASH/HANG name the test folder that does so).
N=/usr/share/libonnx-testdata/data/node
if [ -d "$N" ]; then
  mkdir "$T/batch"
  for t in test_relu test_abs test_neg test_exp test_sqrt; do ln -s "$N/$t" "$T/batch/$t"; done
  for b in 1 2 64; do
    # (under a sanitizer the crash is left to the kernel, handle_segv=0: ASan's own report
    # of it can take longer than the timeout on a loaded machine)
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" KILN_TEST_CRASH=test_exp \
      KILN_TEST_HANG=test_neg "$KILN" check-onnx "$T/batch" --batch $b --timeout 3 >"$T/out" 2>&1
    r=$?
    # (a sanitizer build's SEGV handler reports the crash and exits with status 1)
    grep -qE "^FAIL test_exp: (crashed with signal 11|test process exited with status 1)" "$T/out" &&
      grep -q "^FAIL test_neg: timed out after 3 s" "$T/out" &&
      [ "$(tail -n 1 "$T/out")" = "3 passed, 2 failed" ] && [ $r = 1 ] && pass=$((pass + 1)) ||
      { fail=$((fail + 1)); echo "FAIL: check-onnx --batch $b with a crash and a hang:"; cat "$T/out"; }
  done
  expect 2 "bad --batch '0'" -- "$KILN" check-onnx "$T/batch" --batch 0
fi
# --max-memory: sizes known only at run time (ConstantOfShape of an input shape); 3.6 GB
# is refused by name, within the limit it runs, a malformed size is a usage error.
RS=$SRC/tests/cli/runtime_size
expect 1 "memory limit of 67108864 bytes would be exceeded" -- \
  "$KILN" run "$RS.onnx" --input shape="${RS}_big.npy" --max-memory 64M
expect 1 "ConstantOfShape" -- "$KILN" run "$RS.onnx" --input shape="${RS}_big.npy" --max-memory 1000000
expect 0 "y: f32\[3,4\]" -- "$KILN" run "$RS.onnx" --input shape="${RS}_small.npy" --max-memory 64M
expect 2 "takes a size in bytes" -- "$KILN" run "$RS.onnx" --input shape="${RS}_small.npy" --max-memory 6x

finish
