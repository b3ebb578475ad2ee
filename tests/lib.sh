# The preamble and summary that kiln's shell tests share. A test script takes the source
# folder as its second argument and starts with:   . "$2/tests/lib.sh"
# It then has a scratch folder $T (removed on exit), counts with `ok` and `bad MESSAGE`,
# and ends with `finish`, whose line is the summary CTest shows and whose status is the test's.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
  fail=$((fail + 1))
  echo "FAIL: $*"
}
# check_jit_c DIR WHAT [ARGS...]: kiln check-onnx DIR (a test folder with its reference
# outputs) with ARGS through the JIT and the generated C at 1 and 2 threads
# (KILN_TEST_THREADS); an ok or a bad (naming WHAT) each. The script sets KILN.
check_jit_c() {
  _d=$1 _what=$2
  shift 2
  for _b in llvm c; do
    for _n in 1 2; do
      KILN_TEST_THREADS=$_n "$KILN" check-onnx "$_d" --backend $_b "$@" >"$T/chk" 2>&1 && ok ||
        bad "$_what: $_b at $_n threads: $(cat "$T/chk")"
    done
  done
}
# same_bits_1_2 MODEL WHAT: kiln run MODEL (LLVM, --random 7) at 1 and 2 threads
# (KILN_TEST_THREADS); an ok where the outputs are bit for bit the same, a bad (naming
# WHAT) where not or where a run fails.
same_bits_1_2() {
  for _n in 1 2; do
    KILN_TEST_THREADS=$_n "$KILN" run "$1" --backend llvm --random 7 --output-dir "$T/same$_n" \
      >"$T/log" 2>&1 || bad "$2: run at $_n threads: $(cat "$T/log")"
  done
  diff -r "$T/same1" "$T/same2" >/dev/null 2>&1 && ok || bad "$2: outputs at 1 and 2 threads differ"
}
# same_bits_schedule MODEL SCHED WHAT: kiln run MODEL (LLVM, --random 7) with its own
# schedule and with the schedule file SCHED, at 1 and 2 threads (KILN_TEST_THREADS); an ok
# at each thread count where the outputs are bit for bit the same, a bad (naming WHAT)
# where not or where a run fails.
same_bits_schedule() {
  for _n in 1 2; do
    KILN_TEST_THREADS=$_n "$KILN" run "$1" --backend llvm --random 7 --output-dir "$T/own$_n" \
      >"$T/log" 2>&1 || bad "$3: run at $_n threads: $(cat "$T/log")"
    KILN_TEST_THREADS=$_n "$KILN" run "$1" --backend llvm --random 7 --schedule "$2" \
      --output-dir "$T/file$_n" >"$T/log" 2>&1 ||
      bad "$3: run with $2 at $_n threads: $(cat "$T/log")"
    diff -r "$T/own$_n" "$T/file$_n" >/dev/null 2>&1 && ok ||
      bad "$3: its schedule and $2 give different outputs at $_n threads"
  done
}
# schedule_of MODEL FILE [ARGS...]: kiln compile MODEL with ARGS (a target, a schedule
# file), its schedule (--dump-schedule) in FILE; a bad where the compile fails.
schedule_of() {
  _m=$1 _f=$2
  shift 2
  "$KILN" compile "$_m" -o "$T/sched_out" --dump-schedule "$_f" "$@" >"$T/log" 2>&1 ||
    bad "compile $*: $(cat "$T/log")"
}
# schedule_twice MODEL SCHED OUT [ARGS...]: kiln compile MODEL to C twice with the schedule
# file SCHED and ARGS (a target), into $T/OUT1 and $T/OUT2, their schedules (--dump-schedule)
# in $T/OUT1.sched and $T/OUT2.sched; an ok where the two C files are the same, a bad where
# not or where a compile fails.
schedule_twice() {
  _m=$1 _s=$2 _o=$3
  shift 3
  for _d in 1 2; do
    "$KILN" compile "$_m" --emit c -o "$T/$_o$_d" --schedule "$_s" --dump-schedule "$T/$_o$_d.sched" \
      "$@" >"$T/log" 2>&1 || bad "compile --schedule $_s: $(cat "$T/log")"
  done
  cmp -s "$T/${_o}1/model.c" "$T/${_o}2/model.c" && ok || bad "two compiles with $_s differ"
}
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
