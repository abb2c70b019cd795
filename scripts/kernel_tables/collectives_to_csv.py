#!/usr/bin/env python3
"""Convert published all-reduce curves to placesim collective tables.

Sources (commits in hardware_profiles/collectives/README.md):
  vTrain  (github.com/VIA-Research/vTrain): trace/{v100,a100}/AR_GPU<n>_1M_1024M_LUT
          nccl-tests all_reduce_perf output as CSV: size(B),count,type,
          time(ns),busbw(GB/s) [out-of-place], time(ns),busbw(GB/s) [in-place].
  Azure   (github.com/Azure/AI-benchmarking-guide): Azure_Results/ND_*_results.md,
          table "NCCL Bandwidth": in-place busbw (GB/s) of all_reduce_perf
          -b 8 -e 8G -f 2 -g 8 (Benchmarks/NCCLBandwidth.py), sizes 1K..8G.
  nccl-tests logs (--nccl-log SYSTEM:GPUS:PATH:REPO@COMMIT:UPSTREAM_PATH): raw
          all_reduce_perf text output; the out-of-place time (us) is used.
(DeepBench all-reduce rows are written by deepbench_to_csv.py.)

Usage:
  python3 scripts/kernel_tables/collectives_to_csv.py --vtrain DIR_WITH_trace --vtrain-commit <hex> \
      --azure DIR_WITH_Azure_Results --azure-commit <hex>
Conventions: bytes = message size per GPU buffer; algbw = bytes/seconds;
busbw = algbw * 2(n-1)/n (nccl-tests doc/PERFORMANCE.md).  GB/s in the
sources are 1e9 bytes/s (nccl-tests).  Standard library only.
"""
import argparse
import csv
import os
import re

HEADER = ["system", "collective", "gpus", "bytes", "algbw_bytes_per_second",
          "busbw_bytes_per_second", "seconds", "source"]
VTRAIN_SYSTEMS = {"v100": "v100-sxm2-nvlink-8gpu", "a100": "a100-sxm4-nvswitch-8gpu"}
AZURE_SYSTEMS = {"ND_A100_v4": "nd-a100-v4", "ND_H100_v5": "nd-h100-v5",
                 "ND_H200_v5": "nd-h200-v5"}


def keep_vtrain_size(nbytes):
    """1 MiB..1 GiB in 1 MiB steps upstream; keep powers of two and multiples of 64 MiB."""
    mib = nbytes // (1 << 20)
    return (mib & (mib - 1)) == 0 or mib % 64 == 0


def fmt(x):
    return "%.6g" % x


def write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(HEADER)
        w.writerows(rows)
    print("%s: %d rows" % (os.path.basename(path), len(rows)))


def vtrain(root, commit, outdir):
    for gpu, system in VTRAIN_SYSTEMS.items():
        rows = []
        for n in range(2, 9):
            rel = "trace/%s/AR_GPU%d_1M_1024M_LUT" % (gpu, n)
            p = os.path.join(root, rel)
            if not os.path.exists(p):
                continue
            with open(p) as f:
                lines = f.read().splitlines()
            for ln, line in enumerate(lines[1:], start=2):
                parts = line.split(",")
                if len(parts) < 7:
                    continue
                nbytes = int(parts[0])
                if not keep_vtrain_size(nbytes):
                    continue
                t = int(parts[3]) * 1e-9  # out-of-place time, ns
                algbw = nbytes / t
                busbw = algbw * 2 * (n - 1) / n
                rows.append([system, "all_reduce", n, nbytes, fmt(algbw), fmt(busbw), fmt(t),
                             "vTrain %s line %d out-of-place (upstream busbw %s GB/s) @%s" % (
                                 rel, ln, parts[4], commit[:8])])
        write(os.path.join(outdir, "vtrain_%s.csv" % system), rows)


SIZE_RE = re.compile(r"^\s*\|\s*(\d+)([KMG]?)\s*\|\s*([0-9.]+)\s*\|")


def azure(root, commit, outdir):
    for stem, system in AZURE_SYSTEMS.items():
        rel = "Azure_Results/%s_results.md" % stem
        p = os.path.join(root, rel)
        if not os.path.exists(p):
            continue
        with open(p) as f:
            lines = f.read().splitlines()
        rows, in_table = [], False
        for ln, line in enumerate(lines, start=1):
            if line.startswith("## NCCL Bandwidth"):
                in_table = True
                continue
            if in_table and line.startswith("## "):
                break
            m = SIZE_RE.match(line) if in_table else None
            if not m:
                continue
            # The table labels ("65K", "132K", "33M", ...) are hand-written
            # abbreviations of nccl-tests' -f 2 sweep: the k-th row is 2^(10+k) bytes.
            k = len(rows)
            nbytes = 1 << (10 + k)
            label = m.group(1) + m.group(2)
            busbw = float(m.group(3)) * 1e9
            n = 8
            algbw = busbw * n / (2 * (n - 1))
            t = nbytes / algbw if algbw > 0 else 0
            rows.append([system, "all_reduce", n, nbytes, fmt(algbw), fmt(busbw), fmt(t),
                         "Azure AI-benchmarking-guide %s line %d label %s in-place busbw @%s" % (
                             rel, ln, label, commit[:8])])
        write(os.path.join(outdir, "azure_%s.csv" % system), rows)


NCCL_ROW = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(-?\d+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+\S+"
                      r"\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)")


def nccl_log(spec, outdir):
    system, gpus, path, origin, upstream = spec.split(":", 4)
    repo, commit = origin.split("@")
    n = int(gpus)
    rows = []
    with open(path) as f:
        for ln, line in enumerate(f.read().splitlines(), start=1):
            m = NCCL_ROW.match(line)
            if not m:
                continue
            nbytes = int(m.group(1))
            t = float(m.group(6)) * 1e-6  # out-of-place time, us
            algbw = nbytes / t
            busbw = algbw * 2 * (n - 1) / n
            rows.append([system, "all_reduce", n, nbytes, fmt(algbw), fmt(busbw), fmt(t),
                         "%s %s line %d out-of-place (upstream busbw %s GB/s) @%s" % (
                             repo, upstream, ln, m.group(8), commit[:8])])
    write(os.path.join(outdir, "nccltests_%s.csv" % system), rows)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--vtrain")
    ap.add_argument("--vtrain-commit")
    ap.add_argument("--azure")
    ap.add_argument("--azure-commit")
    ap.add_argument("--nccl-log", action="append", default=[],
                    help="SYSTEM:GPUS:LOCAL_PATH:OWNER/REPO@COMMIT:UPSTREAM_PATH")
    ap.add_argument("--repo-root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    a = ap.parse_args()
    outdir = os.path.join(a.repo_root, "hardware_profiles", "collectives")
    os.makedirs(outdir, exist_ok=True)
    if a.vtrain:
        vtrain(a.vtrain, a.vtrain_commit, outdir)
    if a.azure:
        azure(a.azure, a.azure_commit, outdir)
    for spec in a.nccl_log:
        nccl_log(spec, outdir)


if __name__ == "__main__":
    main()
