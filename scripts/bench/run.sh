#!/usr/bin/env bash
# Simulator speed benchmarks (docs/performance.md); not part of ctest.
#   scripts/bench/run.sh [--only CASE]... [--skip CASE]... [--json FILE]
# Cases: gpt3, llama405, scaling, flow (long: ~4-6 min), search, search-cli (~2 min), frontier (~20 s),
# frontier-flow (~40 s), deepseek (~9 min), cluster (~2.5 min), million. Builds hcsim and the
# benchmark programs (Release) in $HCSIM_BENCH_BUILD (default build-bench) first, unless
# HCSIM_BENCH_NO_BUILD=1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${HCSIM_BENCH_BUILD:-$root/build-bench}"
if [[ "${HCSIM_BENCH_NO_BUILD:-0}" != 1 ]]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release > /dev/null
  cmake --build "$build" -j "${HCSIM_BENCH_JOBS:-2}" --target hcsim hcsim_bench_search > /dev/null
fi
exec /usr/bin/python3 "$root/scripts/bench/bench.py" --build "$build" "$@"
