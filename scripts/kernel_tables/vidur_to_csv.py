#!/usr/bin/env python3
"""Convert Vidur's measured A100 FP16 linear-layer times to a placesim kernel table.

Input : a git mirror (or clone) of github.com/microsoft/vidur, read with `git show` at a commit:
          data/profiling/compute/a100/<org>/<model>/mlp.csv
        Vidur's profiler (vidur/profiling/mlp/, docs/profiling.md) runs one transformer block of each
        model, built from sarathi-serve's ColumnParallelLinear / RowParallelLinear in torch.float16, with
        the weights sharded for tensor parallelism 1, 2, 4 and 8 on one GPU, for num_tokens 1, 2, 4,
        8, 16, 24, ..., 4096, and records each region's CUDA time with torch.profiler
        (time_stats.<op>.median, ms). docs/profiling.md names one "a100" compute profile for its
        a100_pair_nvlink (Azure NC96ads A100 v4: A100 80GB PCIe) and a100_dgx (SXM) devices; which
        board measured it is not stated.
Output: hardware_profiles/kernels/vidur_a100-pcie-80gb.csv

Usage: python3 scripts/kernel_tables/vidur_to_csv.py --repo MIRROR --commit <40-hex> [-o OUT]

Each row of mlp.csv gives four GEMMs (vidur/profiling/mlp/mlp_impl.py; T = num_tokens, h = n_embd,
d = h / n_head, F = n_expanded_embd, t = tensor-parallel workers), each F.linear(X[T, k], W[n, k]),
i.e. m = T, ta = 0, tb = 1:
  attn_pre_proj   n = (n_head + 2 n_kv_head) d / t, k = h
  attn_post_proj  n = h, k = n_head d / t
  mlp_up_proj     n = (2 if use_gated_mlp else 1) F / t, k = h
  mlp_down_proj   n = h, k = F / t
Kept: num_tokens in TOKENS (every power of two from 16 and three between; smaller ones repeat the
same weight-read-bound time), models without bias (phi-2's linears and Qwen's QKV carry a bias
epilogue: left out). A shape measured several times (models sharing widths, repeated passes) is one
row: the median of the medians; its source names the first file and line.

Standard library only.
"""
import csv
import io
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import git_files, git_show, mirror_arguments, write_kernel_table  # noqa: E402

DEVICE_ID = "a100-pcie-80gb"
TOKENS = {16, 32, 64, 128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096}
WITH_BIAS = {"microsoft/phi-2": "all", "Qwen/Qwen-72B": "attn_pre_proj"}


def gemms(row):
    tokens = int(row["num_tokens"])
    t = int(row["num_tensor_parallel_workers"])
    h, heads, kv_heads = int(row["n_embd"]), int(row["n_head"]), int(row["n_kv_head"])
    expanded = int(row["n_expanded_embd"])
    d = h // heads
    gated = row["use_gated_mlp"] == "True"
    return {
        "attn_pre_proj": (tokens, (heads + 2 * kv_heads) * d // t, h),
        "attn_post_proj": (tokens, h, heads * d // t),
        "mlp_up_proj": (tokens, (2 if gated else 1) * expanded // t, h),
        "mlp_down_proj": (tokens, h, expanded // t),
    }


def main():
    args = mirror_arguments("microsoft/vidur", "hardware_profiles/kernels/vidur_a100-pcie-80gb.csv").parse_args()
    short = args.commit[:8]
    files = [f for f in git_files(args.repo, args.commit, "data/profiling/compute/a100") if f.endswith("/mlp.csv")]
    shapes = {}  # (m, n, k) -> [[seconds], source]
    for path in sorted(files):
        model = path.split("compute/a100/")[1].rsplit("/mlp.csv", 1)[0]
        text = git_show(args.repo, args.commit, path)
        for line, row in enumerate(csv.DictReader(io.StringIO(text)), start=2):
            if int(row["num_tokens"]) not in TOKENS:
                continue
            for op, (m, n, k) in gemms(row).items():
                if WITH_BIAS.get(model) in ("all", op):
                    continue
                seconds = float(row["time_stats.%s.median" % op]) * 1e-3
                source = "vidur %s line %d %s @%s" % (path, line, op, short)
                shapes.setdefault((m, n, k), [[], source])[0].append(seconds)
    out = []
    for (m, n, k), (seconds, source) in sorted(shapes.items()):
        out.append([DEVICE_ID, "gemm", "m=%d;n=%d;k=%d;ta=0;tb=1" % (m, n, k), "fp16", "cublas",
                    "%.6g" % statistics.median(seconds), source])
    write_kernel_table(args.output, out)

if __name__ == "__main__":
    main()
