#!/usr/bin/env python3
"""GPU kernel time per step of a PyTorch profiler (Kineto) trace, grouped by the aten operator that
launched each kernel, with cuDNN's NCHW<->NHWC layout transposes (kernels named nchwToNhwc /
nhwcToNchw) apart. Kernels no operator launched (NCCL's) are grouped by name.

Usage: python3 scripts/traces/kineto_kernel_groups.py TRACE.json[.gz] --steps N
Prints: operator, kernel kind (compute | layout_transpose), microseconds per step, kernels per step.
Used for docs/validation.md ("A100: where a ResNet-50 step's kernel time goes"). Standard library only.
"""
import argparse
import collections
import gzip
import json


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("trace")
    parser.add_argument("--steps", type=int, required=True, help="profiled steps in the trace")
    args = parser.parse_args()
    opener = gzip.open if args.trace.endswith(".gz") else open
    with opener(args.trace, "rt") as f:
        events = json.load(f)["traceEvents"]
    operator_of = {e["args"].get("External id"): e["name"] for e in events if e.get("cat") == "cpu_op"}
    groups = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        if e.get("cat") != "kernel":
            continue
        name = operator_of.get(e["args"].get("External id")) or ("kernel " + e["name"][:40])
        kind = "layout_transpose" if ("nchwToNhwc" in e["name"] or "nhwcToNchw" in e["name"]) else "compute"
        groups[(name, kind)][0] += e["dur"]
        groups[(name, kind)][1] += 1
    total = sum(us for us, _ in groups.values())
    print("operator,kind,us_per_step,kernels_per_step")
    for (name, kind), (us, count) in sorted(groups.items(), key=lambda item: -item[1][0]):
        print("%s,%s,%.1f,%.1f" % (name, kind, us / args.steps, count / args.steps))
    print("total,,%.1f," % (total / args.steps))


if __name__ == "__main__":
    main()
