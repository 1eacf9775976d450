#!/usr/bin/env bash
# Builds hcsim with AddressSanitizer and UndefinedBehaviorSanitizer (build-asan,
# -DHCSIM_SANITIZE=ON), runs the test suite under them (less the tests that compare whole
# runs' figures, named below), then -- when clang is installed -- the short fuzz run over
# scenario parsing (scripts/fuzz.sh, a clang build of the parsing libraries only, ctest test
# `fuzz_parse_scenario`).
#
# Usage: scripts/sanitize.sh [--build-dir DIR] [--fuzz-seconds N] [--no-fuzz] [ctest args...]
# Prints the time of each phase. Exit status: that of the first failing phase.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build-asan
fuzz_seconds=60
fuzz=1
ctest_args=()
while (($#)); do
  case $1 in
    --build-dir) build=$2; shift 2 ;;
    --fuzz-seconds) fuzz_seconds=$2; shift 2 ;;
    --no-fuzz) fuzz=0; shift ;;
    -h|--help) sed -n '2,9p' "$0"; exit 0 ;;
    *) ctest_args+=("$1"); shift ;;
  esac
done
jobs=$(nproc 2>/dev/null || echo 2)

# halt_on_error/abort_on_error: a report is a failure, never a line lost in a log.
# detect_leaks stays on: the engine's SimGrid child leaves through _exit(), which skips
# LeakSanitizer, so SimGrid's own process-lifetime allocations are not reported.
export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:halt_on_error=1:detect_leaks=1:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:abort_on_error=1:print_stacktrace=1}

phase() {  # phase NAME COMMAND...: runs and times one phase
  local name=$1 t0=$SECONDS
  shift
  echo "sanitize.sh: $name ..."
  if "$@"; then
    echo "sanitize.sh: $name done in $((SECONDS - t0)) s"
  else
    local rc=$?
    echo "sanitize.sh: $name FAILED (exit $rc) after $((SECONDS - t0)) s" >&2
    exit "$rc"
  fi
}

start=$SECONDS
# -O1 -g1: the optimisation level AddressSanitizer's documentation recommends, and line
# tables only (enough for symbolised stack traces); -O2 -g compiles a test file 2.3x slower.
phase "configure $build" cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" -DHCSIM_SANITIZE=ON
phase "build" cmake --build "$build" -j "$jobs"
# The Release suite (scripts/test.sh) runs every test. Here the tests that only compare the
# figures or bytes of many whole runs already exercised elsewhere under the sanitizers are left
# out: the validation cases' errors against published runs, the event/analytical agreement over
# layout grids, two runs' identical bytes (every shipped scenario still runs here, in
# Shipped/ResolvedRerun), each cluster-sweep point against its `hcsim cluster run`, and the
# screen against the full path over a whole search. They find numbers, not memory errors, and
# took a third of this phase's time.
skip='^(Cases/ValidationSuite\.|ModeProperty\.|Shipped/Determinism\.|ClusterSweep\.EachPointEqualsHcsimClusterRun|FastScreen\.MatchesTheFullPathWhereLayoutsAreRejected)'
phase "tests under ASan+UBSan" ctest --test-dir "$build" --output-on-failure -j "$jobs" -E "$skip" "${ctest_args[@]}"
if ((fuzz)); then
  if command -v clang++ >/dev/null; then
    phase "fuzz build (clang)" bash "$root/scripts/fuzz.sh" "$fuzz_seconds" --build-dir "$root/build-fuzz" \
      --jobs "$jobs" --build-only
    phase "fuzz run ($fuzz_seconds s)" ctest --test-dir "$root/build-fuzz" --output-on-failure -L fuzz
  else
    echo "sanitize.sh: clang++ not installed; fuzz run skipped"
  fi
fi
echo "sanitize.sh: all phases passed in $((SECONDS - start)) s"
