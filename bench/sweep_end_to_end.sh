#!/usr/bin/env bash
# Issue 21's million-candidate search end to end: `placesim sweep` of the 884,736-configuration
# Mixtral 8x7B layout search (bench/scenarios/sweep_mixtral_8x7b_884736_configs.json) on every
# core, from reading the scenario to writing results.jsonl, results.csv, summary.md and
# report.html (about 1 GB, in a temporary directory removed afterwards). Prints the wall time and
# configurations per second. Usage: bench/sweep_end_to_end.sh [PLACESIM_BINARY] (default: the
# release build, built first).
set -euo pipefail
cd "$(dirname "$0")/.."
placesim=${1:-}
if [[ -z "$placesim" ]]; then
  cmake --preset release > /dev/null
  cmake --build --preset release --target placesim > /dev/null
  placesim=build-release/cli/placesim
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
scenario=bench/scenarios/sweep_mixtral_8x7b_884736_configs.json
start=$(date +%s.%N)
"$placesim" sweep -q "$scenario" -o "$out"
end=$(date +%s.%N)
configurations=$(grep -o -m 1 '^[0-9]* configurations' "$out/summary.md" | cut -d ' ' -f 1)
built=$(grep -o -m 1 '[0-9]* cannot be built' "$out/summary.md" | cut -d ' ' -f 1)
awk -v s="$start" -v e="$end" -v n="$configurations" -v nb="$built" 'BEGIN {
  printf "sweep_mixtral_8x7b_884736_configs_end_to_end: %d configurations in %.2f s wall, %.0f/s (%d could be built: %.0f/s)\n",
         n, e - s, n / (e - s), n - nb, (n - nb) / (e - s) }'
