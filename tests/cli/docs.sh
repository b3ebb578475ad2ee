#!/bin/sh
# --help, kiln(1) and docs/cli.md say the same: docs/cli.md is the current output of
# `kiln help --markdown` (regenerate: kiln help --markdown > docs/cli.md), every
# command's parser accepts exactly the options of its table in tools/help.c
# (KILN_CHECK_OPTIONS), and the man page renders without warnings.
# usage: docs.sh KILN SOURCE_DIR
KILN=$1
S=$2
. "$2/tests/lib.sh"
"$KILN" help --markdown >"$T/cli.md" && diff -u "$S/docs/cli.md" "$T/cli.md" && ok ||
  bad "docs/cli.md is stale: kiln help --markdown > docs/cli.md"
for c in $("$KILN" --help | sed -n 's/^  \([a-z-]*\)  .*/\1/p'); do
  KILN_CHECK_OPTIONS=1 "$KILN" "$c" --no-such-option >/dev/null 2>"$T/err"
  [ $? = 2 ] && ok || bad "kiln $c: $(cat "$T/err")"
  # --help prints the same usage line as the man page's synopsis
  u=$("$KILN" "$c" --help | sed -n 's/^usage: //p')
  "$KILN" help --man | grep -q "^\.B $(echo "$u" | sed 's/-/\\\\-/g; s/\[/\\[/g; s/\]/\\]/g; s/\./\\./g')\$" && ok ||
    bad "kiln $c: usage '$u' not in the man page"
done
# docs/targets.md's table is the target table, and --target's help names every target
"$KILN" help --targets >"$T/targets.md"
sed -n '/<!-- targets:begin -->/,/<!-- targets:end -->/p' "$S/docs/targets.md" | sed '1d;$d' |
  diff -u - "$T/targets.md" && ok || bad "docs/targets.md's table is stale: kiln help --targets"
for t in $(sed -n 's/^| `\([a-z0-9-]*\)` .*/\1/p' "$T/targets.md"); do
  "$KILN" compile --help | tr '\n' ' ' | grep -qw -- "$t" && ok || bad "compile --help does not name target $t"
done
# every relative link of README.md and docs/*.md points at a file inside the repository
for md in "$S/README.md" "$S"/docs/*.md; do
  d=$(dirname "$md")
  for l in $(grep -o '](\([^)#]*\)' "$md" | sed 's/^](//' | grep -v '^[a-z]*:'); do
    f=$(cd "$d" && realpath -m "$l")
    case "$f" in "$(realpath "$S")"/*) [ -e "$f" ] && ok || bad "$md links to missing $l" ;;
    *) bad "$md links outside the repository: $l" ;; esac
  done
done
# CTest's Testing/ folder (made by ctest run in the source tree) is ignored, never tracked
if command -v git >/dev/null && git -C "$S" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$S" check-ignore -q Testing/Temporary/LastTest.log && ok || bad ".gitignore does not ignore Testing/"
  [ -z "$(git -C "$S" ls-files Testing)" ] && ok || bad "Testing/ is tracked: git rm -r --cached Testing"
fi
if command -v groff >/dev/null; then
  "$KILN" help --man >"$T/kiln.1"
  w=$(groff -man -Tutf8 -ww -z "$T/kiln.1" 2>&1)
  [ -z "$w" ] && ok || bad "man page: $w"
fi
finish
