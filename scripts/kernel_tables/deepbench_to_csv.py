#!/usr/bin/env python3
"""Convert Baidu DeepBench NVIDIA result workbooks to placesim kernel tables.

Input : the DeepBench results/train/DeepBench_NV_*.xlsx workbooks, extracted
        from github.com/baidu-research/DeepBench (see README.md in
        hardware_profiles/kernels for the exact commit).
Output: hardware_profiles/kernels/deepbench_<device>.csv  (GEMM + convolution)
        hardware_profiles/collectives/deepbench_<system>.csv (all-reduce)

Usage:
  git --git-dir=<DeepBench mirror> show <commit>:results/train/DeepBench_NV_P100.xlsx > DIR/DeepBench_NV_P100.xlsx
  ... (one per workbook listed in WORKBOOKS)
  python3 scripts/kernel_tables/deepbench_to_csv.py --xlsx-dir DIR --commit <40-hex> [--repo-root .]

Standard library only.
"""
import argparse
import csv
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xlsx_reader import read_workbook, row_values  # noqa: E402

# Kernel tables not written by default (size budget; not in the brief's device
# list); pass --all-devices to write them too.
KERNELS_OFF_BY_DEFAULT = {"DeepBench_NV_TitanX_Pascal.xlsx", "DeepBench_NV_T4.xlsx"}

# workbook -> (device id, collective system id or None)
WORKBOOKS = {
    "DeepBench_NV_P100.xlsx": ("p100-pcie-16gb", "8x-p100-pcie-plx"),
    "DeepBench_NV_V100.xlsx": ("v100-sxm2-16gb", None),  # V100 all-reduce cells are empty
    "DeepBench_NV_TitanX.xlsx": ("titan-x-maxwell", "8x-titan-x-maxwell-pcie-plx"),
    "DeepBench_NV_M40.xlsx": ("m40", "8x-m40-pcie-plx"),
    "DeepBench_NV_1080Ti.xlsx": ("gtx-1080ti", "10x-gtx-1080ti-pcie-plx"),
    "DeepBench_NV_TitanX_Pascal.xlsx": ("titan-x-pascal", "10x-titan-x-pascal-pcie-plx"),
    "DeepBench_NV_TitanXp.xlsx": ("titan-xp", None),
    "DeepBench_NV_T4.xlsx": ("t4", None),
}

PRECISION = {
    "Float": "fp32",
    # P100 "pseudo fp16": fp16 storage, fp32 multiply and accumulate.
    "16 bit inputs, 32 bit multiplication, 32 bit addition": "fp16",
    # V100/T4: fp16 inputs, tensor-core fp16 multiply, fp32 accumulate.
    "16 bit inputs, 16 bit multiplication, 32 bit addition": "fp16",
}

# The T4 training workbook's "Forward Algorithm" column is identical, row for row,
# to the V100 workbook's (same template); it is not trusted and left empty.
NO_ALGO = {"DeepBench_NV_T4.xlsx"}

ALGO_FIX = {"LICIT_PRECOMP_GEMM": "IMPLICIT_PRECOMP_GEMM"}  # truncated cell text in some sheets

KERNEL_HEADER = ["device", "op", "shape", "precision", "algorithm", "seconds", "source"]
COLL_HEADER = ["system", "collective", "gpus", "bytes", "algbw_bytes_per_second",
               "busbw_bytes_per_second", "seconds", "source"]


def norm(h):
    return " ".join(str(h).lower().split()) if h is not None else None


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def ms_to_s(v):
    return float(v) / 1e3


def fmt_s(x):
    return "%.6g" % x


def conv_out(size, pad, filt, stride):
    return (size + 2 * pad - filt) // stride + 1


def parse_sheet(rows, precision, device, src_prefix, stats, skipped):
    out, coll = [], []
    section, cols = None, None
    for r in sorted(rows):
        cells = rows[r]
        v = row_values(cells)
        first = v[0] if v else None
        if first == "Dense Matrix Multiplication":
            section, cols = "gemm", {norm(h): i for i, h in enumerate(v) if h is not None}
            continue
        if first == "Sparse Matrix Multiplication":
            section, cols = "sparse", None
            continue
        if first == "Convolution":
            section, cols = "conv_hdr", None
            continue
        if section == "conv_hdr" and v and "W" in [str(x).split(" ")[0] for x in v if x is not None]:
            section = "conv"
            cols = {}
            for i, h in enumerate(v):
                if h is None:
                    continue
                h0 = norm(h)
                key = h0.split(" ")[0]
                if key in ("w", "h", "c", "n", "k", "r", "s", "pad_h", "pad_w", "p", "q"):
                    cols[key] = i
                elif h0.startswith("vertical stride"):
                    cols["stride_h"] = i
                elif h0.startswith("horizontal stride"):
                    cols["stride_w"] = i
                elif h0.startswith("forward (msec)"):
                    cols["fwd"] = i
                elif h0.startswith("wrt inputs"):
                    cols["bwd_data"] = i
                elif h0.startswith("wrt parameters"):
                    cols["bwd_filter"] = i
                elif h0.startswith("forward algorithm"):
                    cols["algo"] = i
            continue
        if isinstance(first, str) and first.startswith("Recurrent"):
            section, cols = "rnn", None
            continue
        if first == "All-Reduce":
            section, cols = "allreduce", None
            continue
        src = "%s row %d" % (src_prefix, r)
        if section == "gemm":
            ci = cols
            try:
                m, n, k = v[ci["m"]], v[ci["n"]], v[ci["k"]]
                ta, tb = v[ci["a transpose"]], v[ci["b transpose"]]
                t = v[ci["time (msec)"]]
            except (IndexError, KeyError):
                continue
            if not (is_num(m) and is_num(n) and is_num(k)):
                continue
            note = [x for x in v if isinstance(x, str) and x.startswith("(")]
            if note:
                skipped.append("%s: GEMM m=%s n=%s k=%s carries the note %r that contradicts the shape; skipped" % (src, m, n, k, note[0]))
                continue
            if not is_num(t) or t <= 0:
                skipped.append("%s: GEMM m=%s n=%s k=%s has no time (%r)" % (src, m, n, k, t))
                continue
            shape = "m=%d;n=%d;k=%d;ta=%d;tb=%d" % (m, n, k, ta == "T", tb == "T")
            out.append([device, "gemm", shape, precision, "cublas", fmt_s(ms_to_s(t)), src])
        elif section == "conv":
            ci = cols
            try:
                W, H, C, N, K = (v[ci[x]] for x in ("w", "h", "c", "n", "k"))
                R, S = v[ci["r"]], v[ci["s"]]
                ph, pw, sh, sw = v[ci["pad_h"]], v[ci["pad_w"]], v[ci["stride_h"]], v[ci["stride_w"]]
            except (IndexError, KeyError):
                continue
            if not all(is_num(x) for x in (W, H, C, N, K, R, S, ph, pw, sh, sw)):
                continue
            shape = "n=%d;c=%d;h=%d;w=%d;k=%d;r=%d;s=%d;pad_h=%d;pad_w=%d;stride_h=%d;stride_w=%d" % (
                N, C, H, W, K, R, S, ph, pw, sh, sw)
            algo = v[ci["algo"]] if ci.get("algo") is not None and ci["algo"] < len(v) else None
            algo = ALGO_FIX.get(algo, algo) if isinstance(algo, str) else ""
            algo = algo.upper().replace(" ", "_").replace("CUDNN_CONVOLUTION_FWD_ALGO_", "")
            for op, key in (("conv_fwd", "fwd"), ("conv_bwd_data", "bwd_data"), ("conv_bwd_filter", "bwd_filter")):
                if key not in ci or ci[key] >= len(v):
                    continue
                t = v[ci[key]]
                if not is_num(t) or t <= 0:
                    skipped.append("%s: %s %s has no time (%r)" % (src, op, shape, t))
                    continue
                out.append([device, op, shape, precision, algo if op == "conv_fwd" else "",
                            fmt_s(ms_to_s(t)), src])
        elif section == "allreduce":
            if len(v) < 7 or not is_num(v[2]) or not is_num(v[3]):
                continue
            floats, gpus, t = v[2], v[3], v[6]
            nodes = v[4] if len(v) > 4 and is_num(v[4]) else 1
            impl = v[9] if len(v) > 9 else ""
            if not is_num(t) or t <= 0:
                skipped.append("%s: all-reduce %d floats x %d GPUs has no time" % (src, floats, gpus))
                continue
            coll.append((floats, gpus, nodes, ms_to_s(t), impl, src))
    return out, coll


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--xlsx-dir", required=True)
    ap.add_argument("--commit", required=True)
    ap.add_argument("--all-devices", action="store_true")
    ap.add_argument("--repo-root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    a = ap.parse_args()
    kdir = os.path.join(a.repo_root, "hardware_profiles", "kernels")
    cdir = os.path.join(a.repo_root, "hardware_profiles", "collectives")
    os.makedirs(kdir, exist_ok=True)
    os.makedirs(cdir, exist_ok=True)
    skipped = []
    for wbname, (device, system) in WORKBOOKS.items():
        path = os.path.join(a.xlsx_dir, wbname)
        if not os.path.exists(path):
            print("missing %s, skipped" % path, file=sys.stderr)
            continue
        wb = read_workbook(path)
        rows_all, coll_all = [], []
        for sheet, rows in wb.items():
            if sheet == "Specs":
                continue
            ptxt = (rows.get(1) or {}).get("B")
            if ptxt not in PRECISION:
                print("%s sheet %r: unknown precision %r, skipped" % (wbname, sheet, ptxt), file=sys.stderr)
                continue
            prefix = "DeepBench results/train/%s sheet %s" % (wbname, sheet)
            suffix = " @%s" % a.commit[:8]
            kr, cr = parse_sheet(rows, PRECISION[ptxt], device, prefix, None, skipped)
            for row in kr:
                row[-1] += suffix
                if wbname in NO_ALGO and row[1].startswith("conv_"):
                    row[4] = ""
            rows_all += kr
            coll_all += [c[:-1] + (c[-1] + suffix,) for c in cr]
        if wbname not in KERNELS_OFF_BY_DEFAULT or a.all_devices:
            with open(os.path.join(kdir, "deepbench_%s.csv" % device), "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(KERNEL_HEADER)
                w.writerows(rows_all)
            print("deepbench_%s.csv: %d rows" % (device, len(rows_all)))
        if system and coll_all:
            with open(os.path.join(cdir, "deepbench_%s.csv" % system), "w", newline="") as f:
                w = csv.writer(f, lineterminator="\n")
                w.writerow(COLL_HEADER)
                for floats, gpus, nodes, t, impl, src in coll_all:
                    nbytes = int(floats) * 4  # DeepBench all-reduces float32 buffers
                    algbw = nbytes / t
                    busbw = algbw * 2 * (gpus - 1) / gpus
                    src2 = src + " (%s%s)" % (impl, "; %d nodes" % nodes if nodes > 1 else "")
                    w.writerow([system, "all_reduce", int(gpus), nbytes, "%.6g" % algbw, "%.6g" % busbw,
                                fmt_s(t), src2])
            print("deepbench_%s.csv (collectives): %d rows" % (system, len(coll_all)))
    for s in skipped:
        print("SKIPPED " + s, file=sys.stderr)


if __name__ == "__main__":
    main()
