#!/usr/bin/env python3
"""Convert the forward convolutions of a measured ResNet-50 training trace on an A100 to a placesim
kernel table, for checking the A100's kernel model on TF32 convolutions it was never fitted on
(`placesim calibrate --check-kernels`).

Input : a git mirror of github.com/facebookresearch/HolisticTraceAnalysis, read with `git show` at a
        commit: tests/data/nccl_parser_config/nccl_data.json.gz (added in 3cb077c8, "add nccl
        field parser config and test (#143)"): a PyTorch profiler (Kineto) trace of torchvision
        ResNet-50 training with DDP, 3 profiled steps, on an "NVIDIA A100-PG509-200" (108 SMs,
        40 GB: an A100 SXM4 40 GB variant), FP32 NCHW tensors with cuDNN's TF32 kernels
        (sm80_xmma_*_tf32f32, cutlass s1688 tensor-op kernels). Kernel durations by CUPTI.
Output: hardware_profiles/kernels/hta_a100-sxm4-40gb.csv (conv_fwd, tf32)

Usage: python3 scripts/kernel_tables/hta_to_csv.py --repo MIRROR --commit <40-hex> [-o OUT]

The trace was recorded without shapes. They are torchvision ResNet-50 v1.5's at 224 x 224 (the
trace's 53 aten::cudnn_convolution calls per step, in the order the model runs them) and batch
32: the first ReLU's kernel covers 50,176 blocks x 128 threads x 4 elements = 32 x 64 x 112 x 112
(checked below). A convolution call's time is the sum of its kernels' durations without cuDNN's
NCHW <-> NHWC transposes (placesim adds those from the scenario's memory_format); a shape's row is
the median of its calls (3 steps x the layers that share it). Backward convolutions are left out:
the trace does not say which of their kernels compute the data gradient and which the filter's.

Standard library only.
"""
import gzip
import json
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import mirror_arguments, write_kernel_table  # noqa: E402

TRACE = "tests/data/nccl_parser_config/nccl_data.json.gz"
DEVICE_ID = "a100-sxm4-40gb"
BATCH = 32


def resnet50_convolutions(n):
    """torchvision ResNet-50 v1.5's convolutions in forward order: (name, n, c, h, w, k, r, stride, pad)."""
    layers = [("conv1", n, 3, 224, 224, 64, 7, 2, 3)]
    size, channels = 56, 64
    for stage, (planes, blocks, stride) in enumerate([(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)], 1):
        for block in range(blocks):
            s = stride if block == 0 else 1
            out = size // s
            prefix = "layer%d.%d." % (stage, block)
            layers.append((prefix + "conv1", n, channels, size, size, planes, 1, 1, 0))
            layers.append((prefix + "conv2", n, planes, size, size, planes, 3, s, 1))  # v1.5: stride on the 3x3
            layers.append((prefix + "conv3", n, planes, out, out, planes * 4, 1, 1, 0))
            if block == 0:
                layers.append((prefix + "downsample", n, channels, size, size, planes * 4, 1, s, 0))
            channels, size = planes * 4, out
    return layers


def main():
    args = mirror_arguments("facebookresearch/HolisticTraceAnalysis",
                            "hardware_profiles/kernels/hta_a100-sxm4-40gb.csv").parse_args()
    raw = subprocess.check_output(["git", "--git-dir", args.repo, "show", "%s:%s" % (args.commit, TRACE)])
    trace = json.loads(gzip.decompress(raw))
    events = trace["traceEvents"]
    gpu = trace.get("deviceProperties", [{}])[0].get("name", "")
    if gpu != "NVIDIA A100-PG509-200":
        sys.exit("unexpected GPU %r" % gpu)
    operator_of = {e["args"].get("External id"): e for e in events if e.get("cat") == "cpu_op"}
    kernels_of = {}
    for e in events:
        if e.get("cat") == "kernel":
            kernels_of.setdefault(e["args"].get("External id"), []).append(e)

    # The batch: the first ReLU (after conv1) covers 64 x 112 x 112 elements per sample.
    relus = sorted((e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::clamp_min_"),
                   key=lambda e: e["ts"])
    first = kernels_of[relus[0]["args"]["External id"]][0]["args"]
    elements = first["grid"][0] * first["block"][0] * 4  # vectorized_elementwise_kernel<4>: 4 per thread
    if elements != BATCH * 64 * 112 * 112:
        sys.exit("the first ReLU covers %d elements, not batch %d's" % (elements, BATCH))

    layers = resnet50_convolutions(BATCH)
    calls = sorted((e for e in events if e.get("cat") == "cpu_op" and e["name"] == "aten::cudnn_convolution"),
                   key=lambda e: e["ts"])
    if len(calls) % len(layers):
        sys.exit("%d convolution calls are not whole steps of %d" % (len(calls), len(layers)))
    by_shape = {}  # shape -> (first layer name, [seconds])
    for i, call in enumerate(calls):
        name, n, c, h, w, k, r, stride, pad = layers[i % len(layers)]
        kernels = [e for e in kernels_of.get(call["args"]["External id"], [])
                   if "nchwToNhwc" not in e["name"] and "nhwcToNchw" not in e["name"]]
        shape = "n=%d;c=%d;h=%d;w=%d;k=%d;r=%d;s=%d;pad_h=%d;pad_w=%d;stride_h=%d;stride_w=%d" % (
            n, c, h, w, k, r, r, pad, pad, stride, stride)
        by_shape.setdefault(shape, (name, []))[1].append(sum(e["dur"] for e in kernels) * 1e-6)
    rows = []
    for shape, (name, seconds) in by_shape.items():
        source = "HolisticTraceAnalysis %s @%s, ResNet-50 %s forward (TF32 kernels, transposes left out), median of %d calls" % (
            TRACE, args.commit[:8], name, len(seconds))
        rows.append([DEVICE_ID, "conv_fwd", shape, "tf32", "", "%.6g" % statistics.median(seconds), source])
    rows.sort(key=lambda row: row[2])
    write_kernel_table(args.output, rows)


if __name__ == "__main__":
    main()
