#!/usr/bin/env python3
"""Convert OpenXLA's measured matmul table for sm_90 (H100) to a placesim kernel table.

Input : xla/service/gpu/model/matmul_interpolator_data.h from github.com/openxla/xla (read from
        the ROCm/xla mirror; commit in hardware_profiles/kernels/README.md), e.g.
          git --git-dir=<mirror> show <commit>:xla/service/gpu/model/matmul_interpolator_data.h > FILE
Output: hardware_profiles/kernels/xla_h100-sxm5-80gb.csv

Usage: python3 scripts/kernel_tables/xla_to_csv.py --header FILE --commit <40-hex> [-o OUT]

The header embeds a text protobuf: per device key ("sm_90", ...) entries of a batched dot
lhs[b,m,k] x rhs[b,k,n] -> [b,m,n] (xla/tools/matmul_perf_table_gen.cc: contracting dims {2} and
{1}, no transposes) with the measured FLOP/s per data type, flops = 2 b m n k / (median kernel
time of the traced runs). seconds = 2 b m n k / flops.

Data types kept (placesim precision):
  bf16xbf16->bf16          -> bf16
  f32xf32->f32             -> tf32  (XLA's default precision lets cuBLAS use TF32 tensor cores on
                                     sm_80+; the table reaches 4.0e14 FLOP/s at 4096^3, six times
                                     the 6.7e13 fp32 CUDA-core peak, so these are TF32 GEMMs)
The FP8 data types (f8e4m3fn, f8e5m2) are left out: their sm_90 rows reach up to 2.62e15 FLOP/s,
1.32x the H100 SXM's dense FP8 peak of 1.979e15 (NVIDIA H100 datasheet), so they are not H100
FP8 GEMM times as the key labels them (counted or measured otherwise); bf16 peaks at 8.05e14
(81% of 9.894e14) and f32/TF32 at 4.03e14 (81% of 4.947e14), both below their peaks.

Standard library only.
"""
import argparse
import csv
import re
import sys

DTYPES = {
    "bf16xbf16->bf16": ("bf16", "bf16"),
    "f32xf32->f32": ("tf32", "f32 (TF32 tensor cores)"),
}
DEVICE_KEY = "sm_90"
DEVICE_ID = "h100-sxm5-80gb"
HEADER = ["device", "op", "shape", "precision", "algorithm", "seconds", "source"]


def device_block(text, key):
    start = text.find('key: "%s"' % key)
    if start < 0:
        sys.exit("no %s entry in the header" % key)
    rest = text[start + 1:]
    following = re.search(r'\n  entries \{\s*key: "', rest)
    return text[start:start + 1 + following.start()] if following else text[start:]


def entries(block):
    pattern = re.compile(r'entries \{\s*b: (\d+)\s*m: (\d+)\s*n: (\d+)\s*k: (\d+)((?:\s*flops \{ key: "[^"]+" value: \d+ \})+)')
    for match in pattern.finditer(block):
        b, m, n, k = (int(match.group(i)) for i in range(1, 5))
        flops = dict((key, int(value)) for key, value in re.findall(r'key: "([^"]+)" value: (\d+)', match.group(5)))
        yield b, m, n, k, flops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--header", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("-o", "--output", default="hardware_profiles/kernels/xla_h100-sxm5-80gb.csv")
    args = parser.parse_args()
    text = open(args.header).read()
    rows = []
    for index, (b, m, n, k, flops) in enumerate(entries(device_block(text, DEVICE_KEY)), start=1):
        op = "gemm" if b == 1 else "bmm"
        shape = ("m=%d;n=%d;k=%d;ta=0;tb=0" % (m, n, k)) if b == 1 else ("batch=%d;m=%d;n=%d;k=%d;ta=0;tb=0" % (b, m, n, k))
        for dtype, (precision, note) in DTYPES.items():
            if dtype not in flops:
                continue
            seconds = 2.0 * b * m * n * k / flops[dtype]
            source = "openxla/xla xla/service/gpu/model/matmul_interpolator_data.h %s entry %d %s @%s" % (
                DEVICE_KEY, index, note, args.commit[:8])
            rows.append([DEVICE_ID, op, shape, precision, "cublas", "%.6g" % seconds, source])
    if not rows:
        sys.exit("no rows converted")
    with open(args.output, "w", newline="") as out:
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(HEADER)
        writer.writerows(rows)
    print("%s: %d rows" % (args.output, len(rows)))


if __name__ == "__main__":
    main()
