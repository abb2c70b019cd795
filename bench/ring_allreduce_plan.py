#!/usr/bin/env python3
"""Writes the ASTRA-sim ring microbenchmark as a placesim plan file (docs/performance.md,
"Whole process against whole process"): N devices in a ring of 50 GiB/s, 500 ns links and one
ring all-reduce of BYTES over all of them. Time it as a whole process:
    python3 bench/ring_allreduce_plan.py 512 1048576 > ring.json && time placesim simulate ring.json
"""
import json
import pathlib
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: ring_allreduce_plan.py DEVICES BYTES")
    devices, size = int(sys.argv[1]), float(sys.argv[2])
    root = pathlib.Path(__file__).resolve().parent.parent
    profile = json.loads((root / "hardware_profiles/devices/a100-sxm4-80gb.json").read_text())
    names = [f"/job:worker/replica:0/task:{i}/device:GPU:0" for i in range(devices)]
    plan = {
        "kind": "placesim-plan", "schema_version": 2, "name": f"ring_allreduce_{devices}",
        "collective_fidelity": "per-phase", "steps": 1, "samples_per_step": 1, "precision": "fp32",
        "transports": [],
        "cluster": {
            "name": f"ring{devices}", "description": "ASTRA-sim's ring microbenchmark: 50 GiB/s, 500 ns links",
            "devices": [{"name": n, "vertex": f"task:{i}/GPU:0", "node": i, "profile": profile}
                        for i, n in enumerate(names)],
            "links": [{"endpoints": [f"task:{i}/GPU:0", f"task:{(i + 1) % devices}/GPU:0"], "type": "ring",
                       "bandwidth_bytes_per_second": 50 * 2**30, "latency_seconds": 500e-9} for i in range(devices)],
            "switches": []},
        "static_memory": [{"device": n, "parameter_bytes": 0.0, "gradient_bytes": 0.0, "optimizer_state_bytes": 0.0}
                          for n in names],
        "tasks": [{"id": 0, "name": "allreduce", "op": "", "kind": "collective", "phase": "collective", "step": 0,
                   "algorithm": "ring", "bytes": size, "device": names[0], "group": names, "deps": []}],
    }
    json.dump(plan, sys.stdout)


if __name__ == "__main__":
    main()
