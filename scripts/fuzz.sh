#!/usr/bin/env bash
# Fuzzes scenario reading and parsing (tests/fuzz/parse_scenario_fuzz.cpp) with libFuzzer
# under AddressSanitizer and UndefinedBehaviorSanitizer.
#
# Usage: scripts/fuzz.sh [SECONDS] [--build-dir DIR] [--run-only | --build-only] [--jobs N]
#   SECONDS      how long to fuzz (default 600)
#   --build-dir  clang build directory (default build-fuzz), configured with
#                -DHCSIM_FUZZ=ON -DHCSIM_SANITIZE=ON; only the fuzz target is built
#   --run-only   skip configure and build (the ctest test `fuzz_parse_scenario` uses this)
#   --build-only configure and build, do not fuzz (SECONDS becomes the ctest test's length)
#   --jobs N     build parallelism (default: nproc)
#
# The seed corpus is every scenario shipped in scenarios/ plus the bad-scenario catalogue
# and tests/scenarios/; inputs that reach new code are kept in DIR/fuzz-corpus and reused by
# the next run. Prints the execution count; exits 1 on a finding, whose reproducer is left
# in DIR/fuzz-artifacts/ (rerun it with: DIR/hcsim_fuzz_parse_scenario FILE).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=600
build=$root/build-fuzz
run_only=0
build_only=0
jobs=$(nproc 2>/dev/null || echo 2)
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --run-only) run_only=1; shift ;;
    --build-only) build_only=1; shift ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) [[ $1 =~ ^[0-9]+$ ]] || { echo "fuzz.sh: unknown argument $1" >&2; exit 2; }; seconds=$1; shift ;;
  esac
done

if ((!run_only)); then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang)" >&2; exit 2; }
  mkdir -p "$build"
  # -O1 -g1, as in scripts/sanitize.sh: the level the sanitizers' documentation recommends,
  # and line tables only (the clean build: 182 s against 210 s with -O2 -g on 2 cores).
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DHCSIM_FUZZ=ON -DHCSIM_SANITIZE=ON -DHCSIM_FUZZ_SECONDS="$seconds" > "$build/configure.log" 2>&1 \
    || { cat "$build/configure.log"; exit 1; }
  cmake --build "$build" -j "$jobs" --target hcsim_fuzz_parse_scenario
fi
((build_only)) && exit 0
fuzzer=$build/hcsim_fuzz_parse_scenario
[[ -x $fuzzer ]] || { echo "fuzz.sh: $fuzzer not built" >&2; exit 2; }

seeds=$build/fuzz-seeds
corpus=$build/fuzz-corpus
artifacts=$build/fuzz-artifacts
rm -rf "$seeds"
mkdir -p "$seeds" "$corpus" "$artifacts"
# Flattened copies: the file name keeps its directory so that names do not collide. Left
# out: the two valid 10^6-device scenarios, whose topology alone takes over 10 s to build under
# ASan (a slow input by design, not a hang).
slow_seeds=(tests/bad_scenarios/run_million_devices_task_bound.json tests/bad_scenarios/run_million_devices_analytical.json)
while IFS= read -r -d '' f; do
  rel=${f#"$root"/}
  [[ " ${slow_seeds[*]} " == *" $rel "* ]] && continue
  cp "$f" "$seeds/${rel//\//_}"
done < <(find "$root/scenarios" "$root/tests/bad_scenarios" "$root/tests/scenarios" -name '*.json' -print0)

log=$build/fuzz.log
echo "fuzz.sh: fuzzing for $seconds s from $(ls "$seeds" | wc -l) seeds (log: $log)"
set +e
t0=$SECONDS
# -timeout: one input taking over 10 s is a hang; -rss_limit_mb: over 2 GiB is a runaway;
# -max_len: scenario files are a few KiB, 64 KiB leaves room for large generated ones.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
  "$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
  -dict="$root/tests/fuzz/scenario.dict" -artifact_prefix="$artifacts/" "$corpus" "$seeds" > "$log" 2>&1
rc=$?
set -e
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
echo "fuzz.sh: ${execs:-?} executions in $((SECONDS - t0)) s, corpus $(ls "$corpus" | wc -l) inputs, exit $rc"
if ((rc != 0)); then
  grep -E 'ERROR|runtime error|SUMMARY|Test unit written|deadly signal|timeout|out-of-memory' "$log" | head -n 20 >&2
  echo "fuzz.sh: finding; reproducers in $artifacts (see $log)" >&2
  exit 1
fi
