#!/bin/sh
# Golden IR tests: `kiln inspect` output for each line of cases.txt, diffed against
# tests/golden/NAME.txt. With --update, rewrites the .txt files instead (review the
# diff before committing).
# usage: golden.sh KILN SOURCE_DIR [--update]
KILN=$1
SRC=$2
DIR=$SRC/tests/golden
. "$2/tests/lib.sh"
while IFS='|' read -r name cmd model opts; do
  name=$(echo "$name" | tr -d ' ')
  case "$name" in '' | \#*) continue ;; esac
  cmd=$(echo "$cmd" | tr -d ' ')
  model=$(echo "$model" | tr -d ' ')
  [ "$cmd" = compile ] && opts="$opts -o $T/out"
  # shellcheck disable=SC2086
  out=$(cd "$SRC" && "$KILN" $cmd "$model" $opts 2>&1 | sed "s|$T|TMP|g")
  if [ "$3" = "--update" ]; then
    printf '%s\n' "$out" >"$DIR/$name.txt"
    echo "updated $name.txt"
  elif printf '%s\n' "$out" | diff -u "$DIR/$name.txt" - >"$T/diff"; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $name:"
    cat "$T/diff"
  fi
done <"$DIR/cases.txt"
[ "$3" = "--update" ] && exit 0
finish
