#!/bin/sh
# Longer libFuzzer runs than CTest's: tools/fuzz.sh TARGET SECONDS [libFuzzer options...]
# TARGET is fuzz_loader, fuzz_passes, fuzz_codegen, fuzz_tensorfile or fuzz_schedule.
# Configures and builds build-fuzz (clang, KILN_FUZZ=ON) if needed, then fuzzes the corpus kept in
# build-fuzz/corpus-run/TARGET (seeded from build-fuzz/corpus/TARGET and the checked-in
# tests/fuzz/regressions/TARGET). Crashes land in build-fuzz/artifacts/TARGET/; once
# fixed, add the minimized input (-minimize_crash=1) to tests/fuzz/regressions/TARGET/.
# fuzz_codegen picks the target it compiles for among eleven by the input's size;
# KILN_FUZZ_TARGETS=cortex-m0plus,cortex-m4,cortex-m7,cortex-m55 (a comma-separated subset
# of its list, tests/fuzz/fuzz_codegen.c) restricts a campaign to those.
set -e
if [ $# -lt 2 ]; then
  echo "usage: tools/fuzz.sh TARGET SECONDS [libFuzzer options...]" >&2
  exit 2
fi
target=$1
secs=$2
shift 2
cd "$(dirname "$0")/.."
if [ ! -f build-fuzz/CMakeCache.txt ]; then
  cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DKILN_FUZZ=ON >/dev/null
fi
cmake --build build-fuzz -j"$(nproc)" --target "$target"
bin=build-fuzz/tests/fuzz/$target
run=build-fuzz/corpus-run/$target
art=build-fuzz/artifacts/$target
mkdir -p "$run" "$art"
cp -n build-fuzz/corpus/"$target"/* "$run"/ 2>/dev/null || true
exec "$bin" -max_total_time="$secs" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
  -artifact_prefix="$art/" "$@" "$run" tests/fuzz/regressions/"$target"
