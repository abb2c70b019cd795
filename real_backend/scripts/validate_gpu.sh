#!/usr/bin/env bash
# Validates placesim's CUDA backend on a machine with an NVIDIA GPU (docs/real-backend.md):
# builds placesim, calibrates GPU 0 (`placesim calibrate --backend cuda`), then predicts, executes
# and compares the seed scenario (variables on the CPU, add on the GPU), an MLP, a ResNet-50
# training step on one GPU and a 2-stream model-parallel split on one GPU, and prints one table
# ending with the MAPE line. Budget: under 8 minutes (each stage has a timeout).
#
# Usage: real_backend/scripts/validate_gpu.sh [OUTPUT_DIR]   (BUILD_DIR overrides build-gpu/;
#        PLACESIM=/path/to/placesim skips the build and uses that binary, e.g. one built elsewhere)
# Paste the table into docs/validation.md with the date and the GPU it names.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-gpu}
out=${1:-$(mktemp -d /tmp/placesim-gpu-XXXXXX)}
mkdir -p "$out"
scenarios=$root/real_backend/scenarios

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
if [[ -n "${PLACESIM:-}" ]]; then
  placesim=$PLACESIM
  echo "== using $placesim (no build)"
else
  echo "== build ($build)"
  timeout 240 cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPLACESIM_BUILD_TESTS=OFF >/dev/null
  timeout 240 cmake --build "$build" -j"$(nproc)" --target placesim >/dev/null
  placesim=$build/cli/placesim
fi

echo "== calibrate (profiles in $out)"
timeout 90 "$placesim" calibrate --backend cuda -o "$out/measured-gpu.json"

echo "== validate"
timeout 150 "$placesim" --profiles "$out" validate --backend cuda --share-gpus --runs 11 --details --output-dir "$out" \
  "$scenarios/gpu_seed.json" "$scenarios/gpu_mlp.json" "$scenarios/gpu_resnet50.json" \
  "$scenarios/gpu_two_stream_split.json" | tee "$out/validation.txt"
echo "== $(date +%F), results and per-task comparisons in $out"
