#!/usr/bin/env python3
"""Per-GPU medians of the SGEMM runs in hal-uw/blox-pal's aggregated_data/sgemm-longhorn-agg.csv
(commit da726cabd3113ff50cb9860b040b479fa7114221; Jain, Tran, Chen, Sinclair, Venkataraman, "PAL",
arXiv 2408.11919; the data of Sinha et al., "Not All GPUs Are Created Equal", SC'22): one
25,536^3 SGEMM (volta_sgemm_128x32_sliced1x4_nn) timed on each of TACC Longhorn's V100 GPUs in
repeated runs. Writes one row per GPU: its median time over its runs and its median SM clock.

Usage: convert_blox_pal.py sgemm-longhorn-agg.csv > longhorn_v100_sgemm.csv
Standard library only."""
import csv
import statistics
import sys

SOURCE = ("hal-uw/blox-pal@da726cabd3113ff50cb9860b040b479fa7114221:aggregated_data/sgemm-longhorn-agg.csv "
          "(perf: ms for one 25536^3 SGEMM; freq: SM clock MHz)")


def main(path):
    runs = {}
    node_of = {}
    with open(path, newline="") as table:
        for row in csv.DictReader(table):
            runs.setdefault(row["uuid"], []).append((float(row["perf"]), float(row["freq"])))
            node_of[row["uuid"]] = row["node"]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["gpu_uuid", "node", "runs", "median_sgemm_ms", "median_sm_clock_mhz", "source"])
    for uuid in sorted(runs):
        times = [t for t, _ in runs[uuid]]
        clocks = [c for _, c in runs[uuid]]
        out.writerow([uuid, node_of[uuid], len(times), f"{statistics.median(times):.3f}",
                      f"{statistics.median(clocks):.0f}", SOURCE])


if __name__ == "__main__":
    main(sys.argv[1])
