#!/usr/bin/env python3
"""Convert one GPU's layer benchmarks of rai-project/dlperf (Benanza, Li et al., IPDPS 2020) to a
placesim kernel table (shipped: the Tesla K80 and the Tesla V100-SXM2-16GB, both AWS hosts).

Input : a git mirror (or clone) of github.com/rai-project/dlperf, read with `git show` at a commit:
          assets/benchinfo/batchsize_{1,2,4,8,16,32}/<GPU>/<model>.json
            google-benchmark records of every layer of 30 ONNX models run alone through cuDNN 7.6.3 /
            cuBLAS 10.1 (CUDA 10.2) on an AWS host's GPU (Tesla_K80: compute capability 3.7, one GK210
            die; Tesla_V100-SXM2-16GB: 7.0, fp32 records with cuDNN's default math, no tensor cores),
            forward (inference) only; RealTime = ns per call (TimeUnit "ns", manual timing with CUDA
            events); convolutions with the fastest cuDNN forward algorithm ("benchinfo"; the
            cuDNN-advised one is in cudnn_advised_benchinfo/, not used).
          assets/latency/batchsize_{32,64,...,1024}/<GPU>/<model>.csv
            the same runs per layer (ms), without shapes; used only for the fully connected layers
            (cuBLAS SGEMM) at batch >= 64, whose shape is the batch-32 layer's with m = batch
            (kept only when the file's "Theoretical Flops" equals 2 m n k, or 2 m n k + m n with the bias).
Output: hardware_profiles/kernels/dlperf_<device>.csv

Usage: python3 scripts/kernel_tables/dlperf_to_csv.py --repo MIRROR --commit <40-hex> \
           [--gpu Tesla_K80 --device k80 | --gpu Tesla_V100-SXM2-16GB --device v100-sxm2-16gb] [-o OUT]

Rows kept (placesim op):
  CUDNN_CONV_FWD, groups 1, dilation 1          -> conv_fwd, algorithm = the cuDNN enum without its prefix
                                                   (grouped and dilated convolutions are left out: none of
                                                   the models placesim validates on these GPUs has them)
  CUBLAS_GEMM_FWD (C[M,N] = A[M,K] B[N,K]^T)    -> gemm m;n;k;ta;tb as recorded
  CUDNN_ACTIVATION_FWD (ReLU)                   -> elementwise fn=relu, tensor_inputs=1
  CUDNN_OP_TENSOR_ADD_FWD / _MUL_FWD            -> elementwise fn=add / mul, tensor_inputs=2
  CUDNN_POOLING_FWD (MAX, MAX_DETERMINISTIC,    -> pooling n;c;h;w;r;s;pad_h;pad_w;stride_h;stride_w;mode=max|avg
    AVERAGE_COUNT_*_PADDING)                       (r x s the window)
Elementwise and pooling rows come from batches 8, 16 and 32 only (the smaller batches add ~1,000 rows of the
same launch floor). Left out: batch-norm inference, bias adds, dropout and GEMV (no op of the table format, or a
batch-1 inference kernel), and softmax (its records give a [1, 1000] input at every batch size). A benchmark that occurs in several models (same name: same shape and
algorithm) is one row: the median of its times; its source names the first file it occurs in and the
benchmark as KIND#hash (the hash in dlperf's benchmark name).

Standard library only.
"""
import csv
import json
import os
import re
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import git_files, git_show, mirror_arguments, write_kernel_table  # noqa: E402

BENCH_BATCHES = [1, 2, 4, 8, 16, 32]
LATENCY_BATCHES = [64, 128, 256, 512, 1024]
ELEMENTWISE_MIN_BATCH = 8  # smaller batches repeat the same sizes' launch floor; keeps the table small


def fmt_s(seconds):
    return "%.6g" % seconds


def layer_kind(name):
    match = re.match(r"LAYER_(CUDNN|CUBLAS)_([A-Z_]+?)(?:_\d+)?_FLOAT32", name)
    return match.group(2) if match else None


def algorithm_of(name):
    match = re.search(r"<CUDNN_CONVOLUTION_FWD_ALGO_([A-Z_]+)>", name)
    return match.group(1) if match else ""


def row_of(b, kind, name):
    """(op, shape, algorithm) of a benchmark record, or None when the table has no op for it."""
    if kind == "CONV_FWD":
        if b.get("group", 1) != 1 or b.get("dilation_height", 1) != 1 or b.get("dilation_width", 1) != 1:
            return None
        shape = "n=%d;c=%d;h=%d;w=%d;k=%d;r=%d;s=%d;pad_h=%d;pad_w=%d;stride_h=%d;stride_w=%d" % (
            b["input[0]"], b["input[1]"], b["input[2]"], b["input[3]"], b["filter_count"], b["filter_height"],
            b["filter_width"], b["pad_height"], b["pad_width"], b["stride_height"], b["stride_width"])
        return "conv_fwd", shape, algorithm_of(name)
    if kind == "GEMM_FWD":
        shape = "m=%d;n=%d;k=%d;ta=%d;tb=%d" % (b["M"], b["N"], b["K"], b["transA"], b["transB"])
        return "gemm", shape, "cublas"
    if kind == "ACTIVATION_FWD":
        if "<CUDNN_ACTIVATION_RELU>" not in name:
            return None
        return "elementwise", "elements=%d;fn=relu;tensor_inputs=1" % b["input_size"], ""
    if kind in ("OP_TENSOR_ADD_FWD", "OP_TENSOR_MUL_FWD"):
        fn = "add" if kind == "OP_TENSOR_ADD_FWD" else "mul"
        return "elementwise", "elements=%d;fn=%s;tensor_inputs=2" % (b["input_size"], fn), ""
    if kind == "POOLING_FWD":
        mode = re.search(r"<CUDNN_POOLING_([A-Z_]+)>", name).group(1)
        mode = "max" if mode.startswith("MAX") else "avg" if mode.startswith("AVERAGE") else None
        if mode is None:
            return None
        shape = "n=%d;c=%d;h=%d;w=%d;r=%d;s=%d;pad_h=%d;pad_w=%d;stride_h=%d;stride_w=%d;mode=%s" % (
            b["input[0]"], b["input[1]"], b["input[2]"], b["input[3]"], b["filter_height"], b["filter_width"],
            b["pad_height"], b["pad_width"], b["stride_height"], b["stride_width"], mode)
        return "pooling", shape, ""
    return None


def main():
    parser = mirror_arguments("rai-project/dlperf", None)
    parser.add_argument("--gpu", default="Tesla_K80", help="dlperf's folder of the GPU (Tesla_K80, Tesla_V100-SXM2-16GB, ...)")
    parser.add_argument("--device", default="k80", help="placesim profile id of that GPU")
    args = parser.parse_args()
    gpu_dir, device_id = args.gpu, args.device
    output = args.output or "hardware_profiles/kernels/dlperf_%s.csv" % device_id
    short = args.commit[:8]

    rows = {}  # benchmark name -> [op, shape, algorithm, [seconds], source]
    gemm_by_hash = {}  # the batch-32 GEMM benchmarks' hash -> record (shapes for the latency files)
    for batch in BENCH_BATCHES:
        folder = "assets/benchinfo/batchsize_%d/%s" % (batch, gpu_dir)
        for path in sorted(git_files(args.repo, args.commit, folder)):
            for entry in json.loads(git_show(args.repo, args.commit, path)):
                b = entry["benchmark"]
                name = b["Name"]
                if entry.get("type") != "forward" or b.get("TimeUnit") != "ns":
                    continue
                kind = layer_kind(name)
                if kind == "GEMM_FWD" and batch == 32:
                    gemm_by_hash[re.search(r"__BatchSize_32__(\d+)", name).group(1)] = b
                kept = row_of(b, kind, name)
                if not kept or (kept[0] in ("elementwise", "pooling") and batch < ELEMENTWISE_MIN_BATCH):
                    continue
                if name not in rows:
                    benchmark = "%s#%s" % (kind, re.search(r"__BatchSize_\d+__(\d+)", name).group(1))
                    rows[name] = list(kept) + [[], "dlperf %s %s @%s" % (path[len("assets/"):], benchmark, short)]
                rows[name][3].append(b["RealTime"] * 1e-9)

    # Fully connected layers at batch >= 64, from the per-layer latency files.
    latency_rows = {}
    for batch in LATENCY_BATCHES:
        folder = "assets/latency/batchsize_%d/%s" % (batch, gpu_dir)
        for path in sorted(git_files(args.repo, args.commit, folder)):
            model = path.rsplit("/", 1)[1]
            try:
                batch32 = git_show(args.repo, args.commit, "assets/latency/batchsize_32/%s/%s" % (gpu_dir, model))
            except subprocess.CalledProcessError:
                continue
            shape_of_layer = {}
            for r in csv.DictReader(batch32.splitlines()):
                match = re.match(r"GEMM_FWD(\d+)$", r["BenchmarkName"])
                if match and match.group(1) in gemm_by_hash:
                    shape_of_layer[r["LayerName"]] = gemm_by_hash[match.group(1)]
            text = git_show(args.repo, args.commit, path)
            for number, r in enumerate(csv.DictReader(text.splitlines()), start=2):
                b = shape_of_layer.get(r["LayerName"])
                if r["LayerType"] != "Gemm" or b is None:
                    continue
                n, k = b["N"], b["K"]
                flops = float(r["Theoretical Flops"])  # 2 m n k, plus m n where it counts the bias add
                if min(abs(flops - 2.0 * batch * n * k), abs(flops - (2.0 * k + 1) * batch * n)) > 0.5:
                    continue
                shape = "m=%d;n=%d;k=%d;ta=%d;tb=%d" % (batch, n, k, b["transA"], b["transB"])
                source = "dlperf %s line %d (shape of the batch-32 layer with m = %d) @%s" % (path[len("assets/"):], number, batch, short)
                latency_rows.setdefault(shape, ["gemm", shape, "cublas", [], source])[3].append(float(r["RealTime(ms)"]) * 1e-3)

    out = []
    for op, shape, algorithm, seconds, source in list(rows.values()) + list(latency_rows.values()):
        out.append([device_id, op, shape, "fp32", algorithm, fmt_s(statistics.median(seconds)), source])
    order = {"gemm": 0, "conv_fwd": 1, "elementwise": 2, "pooling": 3}
    out.sort(key=lambda row: (order[row[1]], row[2], row[4]))
    write_kernel_table(output, out)

if __name__ == "__main__":
    main()
