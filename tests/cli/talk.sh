#!/bin/sh
# A conversation with kiln as a new user has it (#14 item 5): the usual mistakes, each
# answered with exit 1 (bad model or input) or 2 (usage) and one message that names
# the file, the node and op where there is one, and what to do; then what -v and
# inspect tell about sizes and FLOPs, checked against the generated header and a hand
# count.
# usage: talk.sh KILN SOURCE_DIR
KILN=$1
SRC=$2
EX=$SRC/examples/digits
M=$EX/digits.onnx
. "$2/tests/lib.sh"

# say CODE PATTERN... -- command...: exit code CODE, every PATTERN in stderr+stdout
# (fixed strings), and on failure a message of one line starting with "kiln".
say() {
  code=$1
  shift
  pats=""
  while [ "$1" != "--" ]; do
    pats="$pats$1
"
    shift
  done
  shift
  "$@" >"$T/out" 2>"$T/err"
  rc=$?
  cat "$T/err" >>"$T/out"
  good=1
  [ "$rc" = "$code" ] || good=0
  printf '%s' "$pats" >"$T/pats"
  while IFS= read -r p; do grep -qF -- "$p" "$T/out" || good=0; done <"$T/pats"
  [ "$code" = 1 ] && { [ "$(wc -l <"$T/err")" = 1 ] && grep -q "^kiln" "$T/err" || good=0; }
  if [ "$good" = 1 ]; then pass=$((pass + 1)); else
    fail=$((fail + 1))
    echo "FAIL: $* -> exit $rc (wanted $code and: $(tr '\n' '|' <"$T/pats")):"
    sed 's/^/    /' "$T/out" | head -5
  fi
}

# "kiln run model.onnx --input img=..." with the wrong input name: the inputs it has
say 1 "digits.onnx: the model has no input 'img' (its inputs: image)" -- \
  "$KILN" run "$M" --input "img=$EX/test_images.npy"
# compiling a model with a batch dimension: how to fix it
say 1 "digits.onnx: input 'image' has symbolic dimension 'batch'" "pass --dim batch=N" -- \
  "$KILN" compile "$M" -o "$T/o1"
# a typo in the dimension's name: the names there are
say 1 "no input dimension is named 'bach' (the model's symbolic dimensions: batch)" -- \
  "$KILN" compile "$M" -o "$T/o1" --dim bach=1
# a model path that does not exist, and a file that is not a model
say 1 "$T/nope.onnx" "cannot open" -- "$KILN" compile "$T/nope.onnx" -o "$T/o1"
say 1 "test_labels.npy" "not an ONNX model" -- "$KILN" inspect "$EX/test_labels.npy"
# an input file that does not exist: named
say 1 "$T/missing.npy" -- "$KILN" run "$M" --input "image=$T/missing.npy"
# an input file of the wrong type: both files named
say 1 "input 'image' has type i64" "test_labels.npy" -- "$KILN" run "$M" --input "image=$EX/test_labels.npy"
# no -o: a usage error pointing at --help
say 2 "kiln compile" "--help" -- "$KILN" compile "$M" --dim batch=1
# an operator code generation cannot lower: node, op and the interpreter backend named
NL=$SRC/tests/cli/no_lowering.onnx
say 1 "no_lowering.onnx: node 'noise_1' (RandomUniformLike)" "cannot lower the RandomUniformLike operator" \
  "kiln run --backend interp" -- "$KILN" compile "$NL" -o "$T/o2"
say 1 "node 'noise_1' (RandomUniformLike)" "--backend interp" -- "$KILN" run "$NL" --backend llvm --random 1
[ ! -e "$T/o2/model.c" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: a failed compile wrote model.c"; }
# ... which the interpreter runs
say 0 "y: f32[2,3]" -- "$KILN" run "$NL" --backend interp --random 1
# an output shape that depends on data: the interpreter named as well
NZ=/usr/share/libonnx-testdata/data/node/test_nonzero_example/model.onnx
[ -f "$NZ" ] && say 1 "(NonZero)" "depends on the data" "--backend interp" -- "$KILN" compile "$NZ" -o "$T/o3"

# -v: sizes of what was made, the same as the header and the file say
say 0 "kiln: sizes: arena" -- "$KILN" compile "$M" --dim batch=2 --target generic -o "$T/v" -v
arena=$(sed -n 's/^#define model_ARENA_SIZE \([0-9]*\).*/\1/p' "$T/v/model.h")
weights=$(sed -n 's/^#define model_WEIGHTS_SIZE \([0-9]*\).*/\1/p' "$T/v/model.h")
code=$(wc -c <"$T/v/model.c" | tr -d ' ')
grep -q "kiln: sizes: arena $arena bytes (lower bound [0-9]*), weights $weights bytes, code $code bytes ($T/v/model.c)" "$T/out" &&
  pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: -v sizes (arena $arena, weights $weights, code $code): $(grep sizes "$T/out")"; }
# the weights hold at least digits' 3658 parameters (packing may pad them)
[ -n "$weights" ] && [ "$weights" -ge $((3658 * 4)) ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: weights $weights"; }
# an object file: its size
say 0 "kiln: sizes: arena" -- "$KILN" compile "$M" --dim batch=2 --target generic --emit obj -o "$T/vo" -v
obj=$(wc -c <"$T/vo/model.o" | tr -d ' ')
grep -q "code $obj bytes ($T/vo/model.o)" "$T/out" && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: -v object size $obj: $(grep sizes "$T/out")"; }
# without -v: no sizes line on stderr
"$KILN" compile "$M" --dim batch=2 -o "$T/v" 2>"$T/err" >/dev/null
grep -q "sizes:" "$T/err" && { fail=$((fail + 1)); echo "FAIL: sizes without -v"; } || pass=$((pass + 1))

# progress: a line rewritten in place on a terminal (script(1) gives kiln one), nothing
# when stderr is a file
"$KILN" compile "$M" --dim batch=1 -o "$T/p" >/dev/null 2>"$T/err"
[ ! -s "$T/err" ] && pass=$((pass + 1)) || { fail=$((fail + 1)); echo "FAIL: output on a non-terminal stderr: $(cat "$T/err")"; }
if command -v script >/dev/null; then
  script -qc "'$KILN' compile '$M' --dim batch=1 -o '$T/p'" /dev/null >"$T/tty" 2>&1
  grep -q "$(printf '\r\033')\[Kkiln: passes, lowering, planning" "$T/tty" && pass=$((pass + 1)) ||
    { fail=$((fail + 1)); echo "FAIL: no progress line on a terminal: $(od -c "$T/tty" | head -3)"; }
fi

# inspect: FLOPs per node, counted by hand for batch 1: Conv 8x8x8 outputs x 9 MACs,
# Conv 16x4x4 x 72, Gemm 32 x 64, Gemm 10 x 32, a MAC being 2 FLOPs, plus one bias add
# per output (512, 256, 32, 10)
say 0 "; FLOPs per node (a multiply-add counts 2" "9,728   18.8%  /0/Conv (Conv)" "37,120   71.9%  /3/Conv (Conv)" \
  "4,128    8.0%  /7/Gemm (Gemm)" "650    1.3%  /9/Gemm (Gemm)" "51,626 FLOPs per run" -- \
  "$KILN" inspect "$M" --dim batch=1
[ $((2 * (512 * 9 + 256 * 72 + 32 * 64 + 10 * 32) + 512 + 256 + 32 + 10)) = 51626 ] || { fail=$((fail + 1)); echo "FAIL: FLOP arithmetic"; }
# with the batch left symbolic the counts are unknown, and it says how to fix that
say 0 "?          /0/Conv (Conv): output shape not static" "FLOPs per run unknown" "--dim" -- "$KILN" inspect "$M"
say 0 '"flops": null' -- "$KILN" inspect "$M" --json
say 0 '"flops": 51626' -- "$KILN" inspect "$M" --json --dim batch=1

finish
