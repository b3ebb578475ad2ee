#!/bin/sh
# The malformed-model corpus: every case in DIR/cases.txt must make kiln exit with the
# code in NAME.expect, print exactly one line on stderr that contains the expected
# substring and names the case's file (NAME.onnx, or NAME.npy for run-time inputs),
# and leave its output folder empty. A case that takes longer than 20 s is a hang.
# usage: run.sh KILN DIR (DIR holds the cases: tests/malformed)
KILN=$1
DIR=$(cd "$2" && pwd)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

while read -r name; do
  [ -n "$name" ] || continue
  { read -r code want; read -r cmd; } <"$DIR/$name.expect"
  [ -n "$cmd" ] || cmd=compile
  out=$T/$name.out
  rm -rf "$out"
  mkdir "$out"
  verb=${cmd%% *}
  rest=$(echo "${cmd#"$verb"}" | sed "s|@|$DIR|g")
  if [ "$verb" = run ]; then where="--output-dir $out"; else where="-o $out"; fi
  # shellcheck disable=SC2086 # rest and where are lists of words
  timeout 20 "$KILN" $verb "$DIR/$name.onnx" $rest $where >"$T/stdout" 2>"$T/stderr"
  rc=$?
  msg=$(cat "$T/stderr")
  lines=$(wc -l <"$T/stderr")
  if [ "$rc" = 124 ]; then
    bad "$name: timed out (a hang)"
  elif [ "$rc" != "$code" ]; then
    bad "$name: exit code $rc, expected $code: $msg"
  elif [ "$lines" != 1 ]; then
    bad "$name: $lines lines on stderr, expected 1: $msg"
  elif ! grep -qF -- "$want" "$T/stderr"; then
    bad "$name: message lacks '$want': $msg"
  elif ! grep -qF -- "$name." "$T/stderr"; then
    bad "$name: message does not name the file: $msg"
  elif [ -n "$(ls -A "$out")" ]; then
    bad "$name: left files in the output folder: $(ls -A "$out" | tr '\n' ' ')"
  else
    pass=$((pass + 1))
  fi
done <"$DIR/cases.txt"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ] && [ "$pass" -gt 0 ]
