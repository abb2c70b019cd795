#!/usr/bin/env python3
"""Convert LLMCompass's measured A100 kernels (its artifact's "real hardware" runs) to a placesim
kernel table, for checking the A100 SXM4 model on a board it was not fitted on.

Input : a git mirror of github.com/PrincetonUniversity/LLMCompass, read with `git show` at a commit:
        ae/figure5/ab/real_hardware/matmul_A100.csv   (M, N, K, latency ms, TFLOP/s): torch.matmul
            of [M, K] x [K, N] bfloat16 tensors (software_model/matmul.py, Matmul.run_on_gpu)
        ae/figure5/cf/real_hardware/softmax_A100.csv  (M, N, M*N / latency / 1e9): torch.softmax
            over the last dimension of a [M, N] float16 tensor
        ae/figure5/de/real_hardware/layernorm_A100.csv (M, N, M*N / latency / 1e9): LayerNorm(N)
            of a [M, N] float16 tensor
        ae/figure5/g/real_hardware/gelu_A100.csv      (M, M / latency / 1e9): GELU of M float16
            elements
        Each latency is the median of host wall-clock times (time.time() around one call and
        torch.cuda.synchronize(), after 3 warm-up calls), so it includes the launch: small kernels
        read about 20-30 us whatever their size.
        The board: configs/GA100.json describes the machine as "NVIDIA A100(80GB)x4" with 12
        NVLink3 links per device, i.e. A100 80 GB SXM4 modules (a PCIe card has 3 links); the CSVs
        do not name it further.
Output: hardware_profiles/kernels/llmcompass_a100-sxm4-80gb.csv

Usage: python3 scripts/kernel_tables/llmcompass_to_csv.py --repo MIRROR --commit <40-hex> [-o OUT]

Standard library only.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import git_show, mirror_arguments, write_kernel_table  # noqa: E402

DEVICE_ID = "a100-sxm4-80gb"


def rows_of(text):
    """The CSV's rows as lists of stripped fields (the files have no header)."""
    return [[field.strip() for field in line.split(",")] for line in text.splitlines() if line.strip()]


def main():
    args = mirror_arguments("PrincetonUniversity/LLMCompass",
                            "hardware_profiles/kernels/llmcompass_a100-sxm4-80gb.csv").parse_args()
    commit = args.commit[:8]
    rows = []

    path = "ae/figure5/ab/real_hardware/matmul_A100.csv"
    for line, (m, n, k, latency, _) in enumerate(rows_of(git_show(args.repo, args.commit, path)), 1):
        seconds = float(latency.replace("ms", "")) * 1e-3
        rows.append([DEVICE_ID, "gemm", "m=%s;n=%s;k=%s;ta=0;tb=0" % (m, n, k), "bf16", "cublas", "%.6g" % seconds,
                     "LLMCompass %s line %d @%s (torch.matmul, host wall-clock median)" % (path, line, commit)])

    for op, path in (("softmax", "ae/figure5/cf/real_hardware/softmax_A100.csv"),
                     ("layernorm", "ae/figure5/de/real_hardware/layernorm_A100.csv")):
        for line, (m, n, rate) in enumerate(rows_of(git_show(args.repo, args.commit, path)), 1):
            elements = int(m) * int(n)
            seconds = elements / (float(rate) * 1e9)
            rows.append([DEVICE_ID, op, "elements=%d;rows=%s;cols=%s" % (elements, m, n), "fp16", "",
                         "%.6g" % seconds, "LLMCompass %s line %d @%s (host wall-clock median)" % (path, line, commit)])

    path = "ae/figure5/g/real_hardware/gelu_A100.csv"
    for line, (m, rate) in enumerate(rows_of(git_show(args.repo, args.commit, path)), 1):
        seconds = int(m) / (float(rate) * 1e9)
        rows.append([DEVICE_ID, "elementwise", "elements=%s;fn=gelu;tensor_inputs=1" % m, "fp16", "",
                     "%.6g" % seconds, "LLMCompass %s line %d @%s (host wall-clock median)" % (path, line, commit)])

    write_kernel_table(args.output, rows)


if __name__ == "__main__":
    main()
