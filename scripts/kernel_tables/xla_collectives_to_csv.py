#!/usr/bin/env python3
"""Convert OpenXLA's measured collective table for sm_90 (8 H100s on NVSwitch) to a placesim
collective profile.

Input : xla/service/gpu/model/collective_interpolator_data.h from github.com/openxla/xla (read
        from the ROCm/xla mirror; commit in hardware_profiles/collectives/README.md), e.g.
          git --git-dir=<mirror> show <commit>:xla/service/gpu/model/collective_interpolator_data.h > FILE
Output: hardware_profiles/collectives/xla_h100-sxm5-nvswitch-8gpu.csv

Usage: python3 scripts/kernel_tables/xla_collectives_to_csv.py --header FILE --commit <40-hex> [-o OUT]

The header embeds a text protobuf written by xla/tools/collective_perf_table_gen.cc: per device
key ("sm_90", ...) one entry per (collective, replica groups, tensor size) with the HLO
instruction and network_throughput_bytes_per_sec = tensor_size_bytes / (median run time of the
compiled collective). The replica groups are an iota list: num_replica_groups groups of
num_devices_per_group devices over one machine's 8 GPUs, all groups running at once (4 x 2,
2 x 4, 1 x 8). tensor_size_bytes is nccl-tests' size: the all-reduce's buffer, the all-gather's
output and the reduce-scatter's input (the generator's GetInputDim/GetOutputDim), so it is the
instruction's output elements x element bytes, times the group size for a reduce-scatter.
algbw = throughput, seconds = bytes / algbw, busbw = algbw x nccl-tests' factor: 2(n-1)/n for
all-reduce, (n-1)/n for all-gather, reduce-scatter and all-to-all. Collective-permute entries are
left out (nccl-tests has no such collective).

Only the groups of all 8 GPUs are kept (--all-groups keeps the 2- and 4-GPU groups too). Checked
against NCCL's maintainer (nccl-tests issue #212: "NCCL can get an effective NVLink bandwidth of
370GB/s, which you can observe as BusBw when running non-allreduce operations" on 8 H100s), the
8-GPU all-gather and reduce-scatter reach 352 and 329 GB/s busbw at 2 GiB (5% and 11% below),
while the 2-GPU all-reduce peaks at 242 GB/s, 35% below the same link: XLA's compiled collectives
over small groups do not reach what NCCL reaches on that NVLink, so they are not shipped as the
machine's curves.

Standard library only.
"""
import argparse
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from collectives_to_csv import fmt, write  # noqa: E402  (the collective profile header and writer)

DEVICE_KEY = "sm_90"
SYSTEM = "xla-h100-sxm5-nvswitch-8gpu"
KINDS = {"all-reduce": "all_reduce", "all-gather": "all_gather", "reduce-scatter": "reduce_scatter",
         "all-to-all": "alltoall"}
ELEMENT_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "S32": 4, "S8": 1, "U8": 1}


def device_block(text, key):
    start = text.find('\n    key: "%s"' % key)
    if start < 0:
        sys.exit("no %s entry in the header" % key)
    following = text.find('\n    key: "', start + 10)
    return text[start:following if following > 0 else len(text)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--header", required=True)
    parser.add_argument("--commit", required=True)
    parser.add_argument("-o", "--output", default="hardware_profiles/collectives/xla_h100-sxm5-nvswitch-8gpu.csv")
    parser.add_argument("--all-groups", action="store_true", help="keep the 2- and 4-GPU groups too")
    args = parser.parse_args()
    block = device_block(open(args.header).read(), DEVICE_KEY)
    rows = []
    entry = 0
    for match in re.finditer(r'opcode: "([^"]+)"(.*?)network_throughput_bytes_per_sec: (\d+)', block, re.S):
        entry += 1
        opcode, body, throughput = match.group(1), match.group(2), int(match.group(3))
        if opcode not in KINDS:
            continue
        shape = re.search(r'shape \{\s*element_type: (\w+)\s*((?:dimensions: \d+\s*)+)', body)
        groups = re.search(r'num_replica_groups: (\d+)\s*num_devices_per_group: (\d+)', body)
        if not shape or not groups:
            sys.exit("entry %d: no shape or replica groups" % entry)
        elements = 1
        for d in re.findall(r'dimensions: (\d+)', shape.group(2)):
            elements *= int(d)
        gpus = int(groups.group(2))
        if gpus != 8 and not args.all_groups:
            continue
        nbytes = elements * ELEMENT_BYTES[shape.group(1)] * (gpus if opcode == "reduce-scatter" else 1)
        kind = KINDS[opcode]
        factor = 2.0 * (gpus - 1) / gpus if kind == "all_reduce" else (gpus - 1) / float(gpus)
        source = "openxla/xla xla/service/gpu/model/collective_interpolator_data.h %s entry %d %s %d groups of %d @%s" % (
            DEVICE_KEY, entry, shape.group(1), int(groups.group(1)), gpus, args.commit[:8])
        rows.append([SYSTEM, kind, gpus, nbytes, fmt(throughput), fmt(throughput * factor), fmt(nbytes / float(throughput)),
                     source])
    rows.sort(key=lambda r: (r[1], r[2], r[3]))
    write(args.output, rows)


if __name__ == "__main__":
    main()
