#!/usr/bin/env bash
# Builds the release preset and runs every benchmark case; prints one table.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake --preset release > /dev/null
cmake --build --preset release --target placesim_bench > /dev/null
build-release/bench/placesim_bench "$@"
