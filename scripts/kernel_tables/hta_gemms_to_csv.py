#!/usr/bin/env python3
"""Convert the TF32 tensor-core GEMMs of a measured training trace on an A100 to a placesim kernel
table, the measurements the A100 kernel model's TF32 efficiency is fitted on.

Input : a git mirror of github.com/facebookresearch/HolisticTraceAnalysis, read with `git show` at a
        commit: tests/data/trace_diff/control/control.json.gz, a PyTorch profiler (Kineto) trace
        recorded with record_shapes of a recommendation model's training (rank 3 of 8, NCCL) on an
        "NVIDIA A100-PG509-200" (108 SMs, 40 GB: an A100 SXM4 40 GB variant): FP32 tensors whose
        aten::mm / aten::addmm run cutlass_80_tensorop_s1688gemm_* kernels, i.e. TF32 tensor cores.
        Kernel durations by CUPTI.
Output: hardware_profiles/kernels/hta_a100-sxm4-40gb_gemm.csv (gemm, tf32)

Usage: python3 scripts/kernel_tables/hta_gemms_to_csv.py --repo MIRROR --commit <40-hex>
           --placesim build/cli/placesim [-o OUT]

The GEMMs are read by placesim's own trace reader (`placesim calibrate --from-trace`: each
operator's kernels summed, one row per distinct shape, the median of its calls); this script
keeps its TF32 GEMM rows whose m, n and k are all multiples of 4 (16 bytes of TF32), and names the
source. Left out: the FP32 SIMT kernels (gemv, k = 1) and the 28 TF32 GEMMs with a dimension that
is not a multiple of 4: cuBLAS runs those with narrower loads (align1/align2 kernels), up to 2.5x
slower in this trace (k = 1705: 27 TFLOP/s, k = 1300: 63), an effect the model does not
represent (docs/cost-model.md, "Known gaps"), so fitting on them would pull every TF32 GEMM down.

Standard library only.
"""
import csv
import gzip
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import mirror_arguments, write_kernel_table  # noqa: E402

TRACE = "tests/data/trace_diff/control/control.json.gz"
DEVICE_ID = "a100-sxm4-40gb"
ALIGNMENT_ELEMENTS = 4  # 16 bytes of 4-byte TF32 operands


def aligned(shape):
    dims = dict(item.split("=") for item in shape.split(";"))
    return all(int(dims[key]) % ALIGNMENT_ELEMENTS == 0 for key in ("m", "n", "k"))


def main():
    parser = mirror_arguments("facebookresearch/HolisticTraceAnalysis",
                              "hardware_profiles/kernels/hta_a100-sxm4-40gb_gemm.csv")
    parser.add_argument("--placesim", required=True, help="the placesim binary (its trace reader)")
    args = parser.parse_args()
    raw = subprocess.check_output(["git", "--git-dir", args.repo, "show", "%s:%s" % (args.commit, TRACE)])
    with tempfile.TemporaryDirectory() as work:
        trace = os.path.join(work, "control.json")
        with open(trace, "wb") as f:
            f.write(gzip.decompress(raw))
        table = os.path.join(work, "control.csv")
        subprocess.check_call([args.placesim, "calibrate", "--from-trace", trace, "--device", DEVICE_ID, "-o", table],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(table, newline="") as f:
            measured = list(csv.DictReader(f))
    rows = []
    for row in measured:
        if row["op"] != "gemm" or row["precision"] != "tf32" or not aligned(row["shape"]):
            continue
        # placesim's source reads "control.json: median of N call(s) of aten::mm (cutlass::Kernel)".
        calls = row["source"].split(": ", 1)[1]
        source = "HolisticTraceAnalysis %s @%s (A100-PG509-200, TF32 cutlass s1688 kernels): %s" % (
            TRACE, args.commit[:8], calls)
        rows.append([row["device"], row["op"], row["shape"], row["precision"], row["algorithm"], row["seconds"], source])
    rows.sort(key=lambda r: r[2])
    write_kernel_table(args.output, rows)


if __name__ == "__main__":
    main()
