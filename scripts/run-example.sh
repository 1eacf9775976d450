#!/usr/bin/env bash
# Sets up, builds and runs the example scenario.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" "$root/build" > "$root/build.setup.log" 2>&1 || { tail -n 60 "$root/build.setup.log"; exit 1; }
exec "$root/build/hcsim" run "$root/scenarios/quickstart.json" "$@"
