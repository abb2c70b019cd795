#!/usr/bin/env python3
"""Convert NeuSight's collected per-op latencies to placesim kernel tables.

Input : a copy of scripts/asplos/data/dataset/{test,train/collect} from
        github.com/sitar-lab/NeuSight (commit in hardware_profiles/kernels/README.md).
        Extract e.g. with
          git --git-dir=<mirror> ls-tree -r --name-only <commit> scripts/asplos/data/dataset/test \
              scripts/asplos/data/dataset/train/collect | grep '\\.csv$' | while read f; do
            mkdir -p "DIR/$(dirname "$f")"; git --git-dir=<mirror> show "<commit>:$f" > "DIR/$f"; done
        (the merged train/collect/<op>.csv files over 4 MiB are not needed; the
        per-device files under train/collect/<op>/p2.1.0/ are used).
Output: hardware_profiles/kernels/neusight_<device>.csv

Usage: python3 scripts/kernel_tables/neusight_to_csv.py --root DIR --commit <40-hex>

Subsampling (deterministic): for each device and op kind the pool is the union
of the train/collect rows and the test rows of that device (exact duplicate
shapes keep the first occurrence, test files first).  The pool is sorted by
(work, shape) - work = 2*m*n*k*batch for linear/bmm, elements otherwise - and
QUOTA rows are taken at evenly spaced ranks round(i*(len-1)/(quota-1)), so the
subset spans the whole size range.  Elementwise ops are sampled per function
(add, mul, ...) with QUOTA_ELEM_PER_FN each.

Standard library only.
"""
import argparse
import csv
import glob
import os

DEVICES = {
    "Tesla P100-PCIE-16GB": "p100-pcie-16gb",
    "Tesla V100-PCIE-32GB": "v100-pcie-32gb",
    "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA A100 80GB PCIe": "a100-pcie-80gb",
    "NVIDIA H100 80GB HBM3": "h100-sxm5-80gb",  # "H100 80GB HBM3" is the SXM5 board
    "Tesla T4": "t4",
}
QUOTA = {"linear": 60, "bmm": 60, "softmax": 30, "layernorm": 30}
QUOTA_ELEM_PER_FN = 6
ELEM_FNS = ["add", "mul", "div", "pow", "addu", "mulu", "divu", "powu", "relu", "gelu", "tanh"]
BINARY = {"add", "mul", "div", "pow"}
KERNEL_HEADER = ["device", "op", "shape", "precision", "algorithm", "seconds", "source"]


def precision_of(kernel):
    k = kernel.lower()
    if "tf32" in k:
        return "tf32"
    if "bf16" in k:
        return "bf16"
    if "f16" in k or "hgemm" in k or "h884" in k or "h1688" in k or "h16816" in k:
        return "fp16"
    return "fp32"  # inputs are torch.randn/zeros float32; TF32 disabled (sgemm/ffma kernels)


def convert_row(op, r):
    """-> (op, shape, work, algorithm) in placesim conventions."""
    if op == "linear":
        b, m, n, k = (int(r[x]) for x in "BMNK")
        # input [b,m,n] @ W[k,n]^T + bias -> [b,m,k]
        mm, nn, kk = b * m, k, n
        return "linear", "m=%d;n=%d;k=%d;ta=0;tb=1;bias=1" % (mm, nn, kk), 2 * mm * nn * kk
    if op == "bmm":
        b, m, n, k = (int(r[x]) for x in "BMNK")
        # torch.bmm([b,m,n], [b,n,k]) -> [b,m,k]
        return "bmm", "batch=%d;m=%d;n=%d;k=%d;ta=0;tb=0" % (b, m, k, n), 2 * b * m * n * k
    b, h = int(r["B"]), int(r["H"])
    if op == "softmax":
        return "softmax", "elements=%d;rows=%d;cols=%d" % (b * h, b, h), b * h
    if op == "ln":
        return "layernorm", "elements=%d;rows=%d;cols=%d" % (b * h, b, h), b * h
    fn = op[:-1] if op.endswith("u") and op[:-1] in BINARY else op
    inputs = 2 if op in BINARY else 1
    scalar = ";scalar=1" if op.endswith("u") and op[:-1] in BINARY else ""
    return "elementwise", "elements=%d;fn=%s;tensor_inputs=%d%s" % (b * h, fn, inputs, scalar), b * h


def read(path, rel, commit8):
    with open(path, newline="") as f:
        for i, r in enumerate(csv.DictReader(f), start=2):  # header is line 1
            yield r, "NeuSight %s line %d @%s" % (rel, i, commit8)


def evenly(rows, quota):
    if len(rows) <= quota:
        return rows
    return [rows[round(i * (len(rows) - 1) / (quota - 1))] for i in range(quota)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True, help="directory holding scripts/asplos/data/dataset/...")
    ap.add_argument("--commit", required=True)
    ap.add_argument("--repo-root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    a = ap.parse_args()
    c8 = a.commit[:8]
    base = os.path.join(a.root, "scripts", "asplos", "data", "dataset")
    files = []
    for op, fname in (("linear", "linear"), ("bmm", "bmm"), ("softmax", "softmax"), ("ln", "ln"), (None, "elem")):
        files.append((op, os.path.join(base, "test", fname + ".csv")))
    for op in ["linear", "bmm", "softmax", "ln"] + ELEM_FNS:
        for p in sorted(glob.glob(os.path.join(base, "train", "collect", op, "p2.1.0", "*.csv"))):
            files.append((op, p))
    pools = {}   # (device, kind, fn) -> {shape: row}
    for op_hint, path in files:
        if not os.path.exists(path):
            continue
        rel = os.path.relpath(path, a.root)
        for r, src in read(path, rel, c8):
            dev = DEVICES.get(r["Device"].strip())
            if dev is None:
                continue
            op = op_hint or r["OPName"]
            if op not in ("linear", "bmm", "softmax", "ln") and op not in ELEM_FNS:
                continue
            lat = float(r["Latency"])
            if not lat > 0:
                continue
            kind, shape, work = convert_row(op, r)
            fn = op if kind == "elementwise" else ""
            algo = "cublas" if kind in ("linear", "bmm") else ""
            prec = precision_of(r.get("Kernel Name", "")) if kind in ("linear", "bmm") else "fp32"
            pool = pools.setdefault((dev, kind, fn), {})
            if shape not in pool:
                pool[shape] = (work, [dev, kind, shape, prec, algo, "%.6g" % (lat / 1e3), src])
    out = {}
    for (dev, kind, fn), pool in sorted(pools.items()):
        rows = sorted(pool.values(), key=lambda t: (t[0], t[1][2]))
        q = QUOTA_ELEM_PER_FN if kind == "elementwise" else QUOTA[kind]
        out.setdefault(dev, []).extend(row for _, row in evenly(rows, q))
    kdir = os.path.join(a.repo_root, "hardware_profiles", "kernels")
    for dev, rows in sorted(out.items()):
        with open(os.path.join(kdir, "neusight_%s.csv" % dev), "w", newline="") as f:
            w = csv.writer(f, lineterminator="\n")
            w.writerow(KERNEL_HEADER)
            w.writerows(rows)
        counts = {}
        for r in rows:
            counts[r[1]] = counts.get(r[1], 0) + 1
        print("neusight_%s.csv: %d rows %s" % (dev, len(rows), counts))
    for (dev, kind, fn), pool in sorted(pools.items()):
        print("  pool %s %s %s: %d distinct shapes" % (dev, kind, fn, len(pool)))


if __name__ == "__main__":
    main()
