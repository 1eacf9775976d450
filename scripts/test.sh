#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite. With CI=true in the environment (CI runs
# `CI=true bash .ci/run`), compiler warnings are errors (-DHCSIM_WERROR=ON).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
options=()
if [[ ${CI:-} == true ]]; then options+=(-DHCSIM_WERROR=ON); fi
"$root/scripts/setup.sh" "$root/build" "${options[@]}"
cd "$root/build"
ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" "$@"
