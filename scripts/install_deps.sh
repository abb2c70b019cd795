#!/usr/bin/env bash
# Installs what placesim needs to build and test, from Debian packages only. Safe to rerun:
# packages already present are skipped. Uses sudo when not run as root.
set -euo pipefail

packages=(
  build-essential cmake pkg-config   # toolchain (CMake >= 3.25 as in Debian 12)
  libsimgrid-dev                     # discrete-event engine (SimGrid 3.32)
  libboost-graph-dev                 # model graphs
  nlohmann-json3-dev                 # JSON
  libcli11-dev                       # command line
  libgtest-dev                       # tests
  libonnx-dev libprotobuf-dev protobuf-compiler  # ONNX import/export (ONNX 1.12, protobuf 3.21; optional at build time)
  libonnx-testdata                   # real ONNX files the ONNX tests check (they skip without it)
  libmimalloc-dev                    # every program's malloc (mimalloc 2.0; optional at build time: docs/performance.md)
  libopenblas-dev                    # real backend: single-threaded sgemm for the CPU executor (OpenBLAS 0.3.21)
  libopenmpi-dev openmpi-bin         # multi-host execution and distributed sweeps (Open MPI 4.1; optional at build time)
  chromium                           # headless rendering checks of report.html and convergence.html (tests/browser/, tests/cli/sweep_cli_test.cpp; they skip without it)
)

missing=()
for package in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install_deps: all ${#packages[@]} packages present"
  exit 0
fi

as_root=()
[ "$(id -u)" -eq 0 ] || as_root=(sudo)
echo "install_deps: installing ${missing[*]}"
"${as_root[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
