#!/usr/bin/env python3
"""Convert the per-layer PyTorch profiles that ship with msr-fiddle/pipedream (Narayanan et al.,
SOSP 2019) to a placesim kernel table: the forward convolutions and fully connected layers of
whole image-classification networks timed inside a training step, InceptionV3 among them (no other
shipped table has its 1x7 / 7x1 / 1x3 / 3x1 convolutions).

Input : a git mirror (or clone) of github.com/msr-fiddle/pipedream, read with `git show` at a commit:
          profiler/image_classification/profiles/<model>/graph.txt
            one line per layer, "nodeN -- <torch module repr> -- forward_compute_time=<ms>,
            backward_compute_time=<ms>, activation_size=<bytes of the output>, parameter_size=<bytes>",
            then the graph's edges ("\tnodeA -- nodeB"). Written by the repository's profiler
            (profiler/torchmodules/torchprofiler/profiling.py): each module's forward timed on the
            host between torch.cuda.synchronize() calls inside real training steps (main.py sets
            cudnn.benchmark = True, so cuDNN's fastest algorithm per shape), fp32, NCHW, PyTorch in
            the nvcr.io/nvidia/pytorch:19.05-py3 container the README names (cuDNN 7.5/7.6).
          The GPU is not named in the repository. Inferred: an NVIDIA V100 SXM2 (16 GB), the GPU of
          the paper's AWS p3.16xlarge cluster: InceptionV3's 1x7 convolution of 192 -> 192 channels
          on 17 x 17 images runs at 14.9 TFLOP/s of direct-convolution work, above the V100 PCIe
          card's fp32 peak (14.0) and below the SXM2 module's (15.7); the GEMM-class algorithms
          that are cuDNN's only choices for a 1x7 filter (no Winograd for it) cannot beat the peak.
Output: hardware_profiles/kernels/pipedream_v100-sxm2-16gb.csv

Rows kept (placesim op), precision fp32, algorithm empty (cudnn.benchmark chose it; not recorded):
  Conv2d (groups 1, dilation 1)  -> conv_fwd n;c;h;w;k;r;s;pad_h;pad_w;stride_h;stride_w with the
                                    input's h x w read from the layer feeding it (its activation
                                    size / (batch x 4 bytes x channels), square images);
                                    the time is the module's forward: the convolution, and with
                                    bias=True (AlexNet, VGG16) also the bias add kernel
  Linear                         -> linear m=batch;n=out;k=in;ta=0;tb=1;bias=1 (the whole module)
The batch of each profile is read from its Input node (3 x 224 x 224 or 3 x 299 x 299 fp32 images
per sample). A shape that occurs several times in one profile is one row: the median of its
forward times; its source names the file and the first node with it. Left out: backward times
(one number per module for its input and weight gradients together, no op of the table format),
batch norm, ReLU, pooling, concatenation and dropout (no op of the format for them). Each time
includes the module call's host overhead (tens of microseconds; every kept layer runs 0.1-16 ms).

Usage: python3 scripts/kernel_tables/pipedream_to_csv.py --repo MIRROR --commit <40-hex> [-o OUT]

Standard library only.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from kernel_table_io import git_show, mirror_arguments, write_kernel_table  # noqa: E402

DEVICE = "v100-sxm2-16gb"
MODELS = ["alexnet", "vgg16", "resnet18", "resnet50", "resnet101", "inception_v3"]
PROFILE = "profiler/image_classification/profiles/%s/graph.txt"
IMAGE_SIDES = [224, 299]
FLOAT_BYTES = 4

CONV = re.compile(r"Conv2d\((\d+), (\d+), kernel_size=\((\d+), (\d+)\), stride=\((\d+), (\d+)\)(.*)\)$")
LINEAR = re.compile(r"Linear\(in_features=(\d+), out_features=(\d+), bias=(True|False)\)$")


def parse_profile(text):
    """(nodes by name: (module text, forward ms, output bytes, line number), predecessors by name)."""
    nodes, predecessors = {}, {}
    for number, line in enumerate(text.splitlines(), start=1):
        if line.startswith("\t"):
            source, target = [part.strip() for part in line.split(" -- ")]
            predecessors.setdefault(target, []).append(source)
            continue
        parts = line.split(" -- ")
        if len(parts) != 3:
            continue
        stats = dict(item.split("=") for item in parts[2].split(", "))
        nodes[parts[0]] = (parts[1], float(stats["forward_compute_time"]), float(stats["activation_size"]), number)
    return nodes, predecessors


def batch_of(nodes):
    """The batch of the profile, from its Input node's bytes."""
    for module, _, output_bytes, _ in nodes.values():
        if module != "Input":
            continue
        for side in IMAGE_SIDES:
            batch = output_bytes / (3 * side * side * FLOAT_BYTES)
            if batch == int(batch):
                return int(batch)
    raise ValueError("no Input node of 3 x 224 x 224 or 3 x 299 x 299 images")


def padding_of(rest):
    match = re.search(r"padding=\((\d+), (\d+)\)", rest)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def convert(mirror, commit):
    shapes = {}  # (op, shape) -> [forward seconds], source of the first
    for model in MODELS:
        path = PROFILE % model
        nodes, predecessors = parse_profile(git_show(mirror, commit, path))
        batch = batch_of(nodes)
        for name, (module, forward_ms, output_bytes, number) in sorted(nodes.items(), key=lambda kv: kv[1][3]):
            source = "pipedream %s line %d (%s) @%s" % (path, number, name, commit[:8])
            conv = CONV.match(module)
            linear = LINEAR.match(module)
            if conv:
                c, k, r, s, stride_h, stride_w = (int(v) for v in conv.groups()[:6])
                rest = conv.group(7)
                if "groups=" in rest or "dilation=" in rest:
                    continue
                pad_h, pad_w = padding_of(rest)
                inputs = predecessors.get(name, [])
                if len(inputs) != 1:
                    raise ValueError("%s: %s has %d inputs" % (path, name, len(inputs)))
                area = nodes[inputs[0]][2] / (batch * FLOAT_BYTES * c)
                side = int(round(area ** 0.5))
                if side * side != area:
                    raise ValueError("%s: %s's input is not a square image of %d channels" % (path, name, c))
                shape = "n=%d;c=%d;h=%d;w=%d;k=%d;r=%d;s=%d;pad_h=%d;pad_w=%d;stride_h=%d;stride_w=%d" % (
                    batch, c, side, side, k, r, s, pad_h, pad_w, stride_h, stride_w)
                p = (side + 2 * pad_h - r) // stride_h + 1
                q = (side + 2 * pad_w - s) // stride_w + 1
                if abs(batch * k * p * q * FLOAT_BYTES - output_bytes) > 0.5:
                    raise ValueError("%s: %s's output is not n x k x p x q" % (path, name))
                key = ("conv_fwd", shape)
            elif linear:
                in_features, out_features = int(linear.group(1)), int(linear.group(2))
                if linear.group(3) != "True":
                    continue
                key = ("linear", "m=%d;n=%d;k=%d;ta=0;tb=1;bias=1" % (batch, out_features, in_features))
            else:
                continue
            entry = shapes.setdefault(key, ([], source))
            entry[0].append(forward_ms / 1000.0)
    rows = []
    for (op, shape), (times, source) in sorted(shapes.items()):
        count = "" if len(times) == 1 else " (median of %d layers)" % len(times)
        rows.append([DEVICE, op, shape, "fp32", "", "%.6g" % statistics.median(times), source + count])
    return rows


def main():
    parser = mirror_arguments("msr-fiddle/pipedream", "hardware_profiles/kernels/pipedream_%s.csv" % DEVICE)
    args = parser.parse_args()
    write_kernel_table(args.output, convert(args.repo, args.commit))


if __name__ == "__main__":
    main()
