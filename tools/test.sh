#!/bin/sh
# The README's second command (and CI's): installs what is missing, builds kiln with
# warnings as errors, runs the whole CTest suite, then the unit and conformance tests
# again in a sanitizer build (-fsanitize=address,undefined).
# Set KILN_NO_SANITIZE=1 to skip the sanitizer pass.
set -e
cd "$(dirname "$0")/.."
tools/setup.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_WERROR=ON >/dev/null
cmake --build build -j"$jobs"
rc=0
if [ -z "$KILN_NO_SANITIZE" ]; then
  cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DKILN_WERROR=ON -DKILN_SANITIZE=ON >/dev/null
  cmake --build build-asan -j"$jobs"
  (cd build-asan && ctest -j"$jobs" --output-on-failure -L sanitize) || rc=1
fi
cd build
ctest -j"$jobs" --output-on-failure || rc=1
exit $rc
