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
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
