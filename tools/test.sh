#!/bin/sh
# The README's second command (and CI's): installs what is missing, builds kiln with
# warnings as errors, runs the whole CTest suite, then the unit and conformance tests
# again in a sanitizer build (-fsanitize=address,undefined), then (when clang is
# installed) runs the libFuzzer targets of tests/fuzz briefly.
# Set KILN_NO_SANITIZE=1 / KILN_NO_FUZZ=1 to skip the sanitizer / fuzzing pass.
#
# The run sees what a new machine sees: PoCL's kernel cache, every XDG cache and HOME
# point into a fresh, empty folder (removed at the end), and ccache is off, so no
# state left by an earlier run (a warm OpenCL kernel cache hid a failure once) can
# make the suite pass here and fail elsewhere.
set -e
cd "$(dirname "$0")/.."
tools/setup.sh
fresh=$(mktemp -d "${TMPDIR:-/tmp}/kiln-test.XXXXXX")
trap 'rm -rf "$fresh"' EXIT
export HOME="$fresh/home" XDG_CACHE_HOME="$fresh/cache" POCL_CACHE_DIR="$fresh/pocl"
export CCACHE_DISABLE=1
mkdir -p "$HOME" "$XDG_CACHE_HOME" "$POCL_CACHE_DIR"
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
rc=0
if [ -z "$KILN_NO_SANITIZE" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKILN_WERROR=ON -DKILN_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs" --target kiln_sanitize_tests # only what -L sanitize runs
  (cd build-asan && ctest -j"$jobs" --output-on-failure -L sanitize) || rc=1
fi
# libFuzzer: each target fuzzes its seed corpus and the checked-in regressions for a fixed
# number of inputs from a fixed seed (about 10 s each; deterministic).
if [ -z "$KILN_NO_FUZZ" ] && command -v clang >/dev/null 2>&1; then
  cmake -S . -B build-fuzz -DCMAKE_C_COMPILER=clang -DKILN_FUZZ=ON >/dev/null
  cmake --build build-fuzz -j"$jobs" --target kiln_fuzz_tests # only the libFuzzer targets
  (cd build-fuzz && ctest -j"$jobs" -L fuzz --output-on-failure) || rc=1
fi
cd build
ctest -j"$jobs" --output-on-failure || rc=1
exit $rc
