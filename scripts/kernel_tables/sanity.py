#!/usr/bin/env python3
"""Sanity report for the kernel tables: per device/op/precision median achieved
TFLOP/s (GEMM/BMM 2mnk/s; conv direct FLOPs 2*n*k*p*q*c*r*s/s) and the cuDNN
forward-algorithm split.  Usage: python3 scripts/kernel_tables/sanity.py [csv...]"""
import csv
import glob
import os
import statistics
import sys
from collections import Counter, defaultdict


def shape_dict(s):
    return {k: int(v) if v.lstrip("-").isdigit() else v for k, v in (kv.split("=") for kv in s.split(";") if kv)}


def flops(op, d):
    if op in ("gemm", "bmm", "linear"):
        return 2.0 * d["m"] * d["n"] * d["k"] * d.get("batch", 1)
    if op.startswith("conv_"):
        p = (d["h"] + 2 * d["pad_h"] - d.get("dil_h", 1) * (d["r"] - 1) - 1) // d["stride_h"] + 1
        q = (d["w"] + 2 * d["pad_w"] - d.get("dil_w", 1) * (d["s"] - 1) - 1) // d["stride_w"] + 1
        return 2.0 * d["n"] * d["k"] * p * q * d["c"] * d["r"] * d["s"] / d.get("groups", 1)
    return None


def bytes_moved(op, d):
    """fp32 bytes read+written by memory-bound ops (lower bound: each tensor once)."""
    if op == "elementwise":
        return 4.0 * d["elements"] * (d.get("tensor_inputs", 1) + 1)
    if op in ("softmax", "layernorm"):
        return 4.0 * d["elements"] * 2
    return None


def family(algo):
    if algo.startswith("WINOGRAD"):
        return "winograd"
    if "GEMM" in algo:
        return "implicit_gemm"
    if algo.startswith("FFT"):
        return "fft"
    return algo or "unknown"


def main(paths):
    if not paths:
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "hardware_profiles", "kernels")
        paths = sorted(glob.glob(os.path.join(root, "*.csv")))
    for p in paths:
        tf = defaultdict(list)
        gbs = defaultdict(list)
        fam = defaultdict(list)
        n = Counter()
        algo = defaultdict(Counter)
        with open(p) as f:
            for row in csv.DictReader(f):
                key = (row["device"], row["op"], row["precision"])
                n[key] += 1
                d = shape_dict(row["shape"])
                fl = flops(row["op"], d)
                if fl:
                    tf[key].append(fl / float(row["seconds"]) / 1e12)
                by = bytes_moved(row["op"], d)
                if by and d["elements"] >= (1 << 20):
                    gbs[key].append(by / float(row["seconds"]) / 1e9)
                if row["op"] == "conv_fwd" and row["algorithm"]:
                    fam[(row["device"], row["precision"], family(row["algorithm"]), d["r"], d["s"], d["stride_h"])].append(
                        fl / float(row["seconds"]) / 1e12)
                if row["op"] == "conv_fwd" and row["algorithm"]:
                    algo[(row["device"], row["precision"])][row["algorithm"]] += 1
        print("== %s" % os.path.basename(p))
        for key in sorted(n):
            if tf[key]:
                print("  %-16s %-16s %-5s rows=%4d  median %.2f TF/s  max %.2f TF/s" % (
                    key[0], key[1], key[2], n[key], statistics.median(tf[key]), max(tf[key])))
            elif gbs[key]:
                print("  %-16s %-16s %-5s rows=%4d  median %.0f GB/s  max %.0f GB/s (rows with >= 1 Mi elements, fp32 bytes)" % (
                    key[0], key[1], key[2], n[key], statistics.median(gbs[key]), max(gbs[key])))
            else:
                print("  %-16s %-16s %-5s rows=%4d" % (key[0], key[1], key[2], n[key]))
        for key in sorted(algo):
            print("  fwd algorithms %s %s: %s" % (key[0], key[1], dict(algo[key].most_common())))
        for key in sorted(fam):
            print("    conv_fwd %s %s %-13s filter %dx%d stride %d: %2d shapes, median %.2f TF/s (direct-conv FLOPs)" % (
                key[0], key[1], key[2], key[3], key[4], key[5], len(fam[key]), statistics.median(fam[key])))


if __name__ == "__main__":
    main(sys.argv[1:])
