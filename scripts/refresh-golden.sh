#!/usr/bin/env bash
# Rewrites the golden reports (tests/golden/*.txt, *.json) from the current build's hcsim,
# deliberately: after a change that is meant to move a shipped scenario's report. Read the
# diff (git diff tests/golden) and commit it with the change. docs/testing.md says more.
# Usage: scripts/refresh-golden.sh [build-dir]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
if [[ ! -f $build/CMakeCache.txt ]]; then
  echo "refresh-golden: no build in $build (scripts/setup.sh $build)" >&2
  exit 1
fi
# Builds hcsim and re-reads the list of scenarios (tests/golden.cmake).
cmake --build "$build" --target hcsim -j "$(nproc 2>/dev/null || echo 2)"
rm -f "$root"/tests/golden/*.txt "$root"/tests/golden/*.json  # a removed scenario leaves none
cd "$build"
HCSIM_REFRESH_GOLDEN=1 ctest -R '^golden\.' -j "$(nproc 2>/dev/null || echo 2)" --output-on-failure
git -C "$root" status --short -- tests/golden
