#!/usr/bin/env bash
# Regenerates the screenshots in docs/images/ (report.png: the sweep's report.html of
# scenarios/sweep_resnet50_capacity.json; convergence.png: convergence.html of
# scenarios/converge_sync_vs_async.json) with headless Chromium, 1400 x 1800 px, as 256-colour
# PNGs (scripts/png_palette.py). Needs a built placesim (BUILD, default build/) and `chromium`.
set -euo pipefail
cd "$(dirname "$0")/.."
placesim=${BUILD:-build}/cli/placesim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$placesim" sweep scenarios/sweep_resnet50_capacity.json -o "$work/sweep" -j 2 -q
"$placesim" converge scenarios/converge_sync_vs_async.json --output-dir "$work/converge" >/dev/null 2>&1
mkdir -p docs/images
for page in sweep/report.html converge/convergence.html; do
  name=$(basename "$page" .html)
  chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --hide-scrollbars \
    --user-data-dir="$work/profile" --window-size=1400,1800 --screenshot="$work/$name.png" "file://$work/$page" 2>/dev/null
  python3 scripts/png_palette.py "$work/$name.png" "docs/images/$name.png"
  echo "docs/images/$name.png: $(stat -c %s "docs/images/$name.png") bytes"
done
