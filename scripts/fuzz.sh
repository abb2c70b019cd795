#!/usr/bin/env bash
# Fuzzes every file format placesim reads (docs/reliability.md): builds the libFuzzer targets of
# tests/fuzz with clang, -fsanitize=fuzzer,address,undefined into build-fuzz/, then runs each target
# for SECONDS (default 600) on its seed corpus, JOBS targets at a time (default 2) under nice.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     TARGET: scenario model hardware cluster plan report onnx
#
# The seed corpus tests/fuzz/corpus/TARGET/ is only read; what the fuzzer adds goes to
# build-fuzz/corpus/TARGET/. A crash, sanitizer report, hang (-timeout, 10 s per input) or
# out-of-memory (-rss_limit_mb) stops that target and leaves the input in build-fuzz/findings/TARGET/;
# reproduce it with build-fuzz/tests/fuzz/TARGET_fuzzer FILE. Logs: build-fuzz/logs/TARGET.log.
# The onnx target also reads Debian's libonnx-testdata node models as seeds when they are installed.
# Needs clang and libFuzzer (Debian: apt-get install clang libclang-rt-14-dev); CI does not run this.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(scenario model hardware cluster plan report onnx)
jobs=${JOBS:-2}

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found; install it: apt-get install clang libclang-rt-14-dev" >&2
  exit 1
fi

# The tests stay out to keep the build small; ONNX is in for the onnx target (libonnx and protobuf
# themselves are Debian's, not instrumented: the fuzzer covers placesim's importer and what it
# feeds them).
nice -n 19 cmake -S . -B build-fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DPLACESIM_BUILD_FUZZERS=ON -DPLACESIM_BUILD_TESTS=OFF -DPLACESIM_WITH_ONNX=ON -DCMAKE_CUDA_COMPILER=
nice -n 19 cmake --build build-fuzz -j "$jobs" --target "${targets[@]/%/_fuzzer}"

mkdir -p build-fuzz/logs
run_target() {
  local target=$1 seconds=$2
  mkdir -p "build-fuzz/corpus/$target" "build-fuzz/findings/$target"
  local seeds=("tests/fuzz/corpus/$target")
  local testdata=/usr/share/libonnx-testdata/data/node
  if [ "$target" = onnx ] && [ -d "$testdata" ]; then seeds+=("$testdata"); fi
  # detect_leaks=0: the loaders' static caches (the hardware catalog) are not leaks worth a stop.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    nice -n 19 "build-fuzz/tests/fuzz/${target}_fuzzer" "build-fuzz/corpus/$target" "${seeds[@]}" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 \
    -artifact_prefix="build-fuzz/findings/$target/" >"build-fuzz/logs/$target.log" 2>&1
  local status=$?
  local executions
  executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "build-fuzz/logs/$target.log" | grep -o '[0-9]*$' || echo "?")
  echo "fuzz: $target: ${seconds}s, $executions executions, exit $status$([ "$status" -eq 0 ] || echo ' (FINDING, see build-fuzz/findings/'"$target"')')"
  return "$status"
}
export -f run_target

printf '%s\n' "${targets[@]}" | xargs -P "$jobs" -I{} bash -c 'run_target {} '"$seconds"
