#!/usr/bin/env bash
# Installs hcsim's Debian packages (only those missing) and builds it in Release.
# Usage: scripts/setup.sh [build-dir [cmake-option...]]   (default: build; the options,
# e.g. -DHCSIM_WERROR=ON, are passed to the configure step)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift $(($# > 0 ? 1 : 0))

packages=(build-essential cmake pkg-config libsimgrid-dev libboost-graph-dev nlohmann-json3-dev
          libeigen3-dev libfmt-dev libgtest-dev libgmock-dev libcli11-dev libbenchmark-dev libyaml-cpp-dev
          python3-matplotlib python3-dev python3-pybind11 libopenmpi-dev openmpi-bin clang
          libclang-rt-14-dev chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

jobs=$(nproc 2>/dev/null || echo 2)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$jobs"
