"""What the kernel-table converters share: reading a file of a git mirror at a commit, and writing
rows in the kernel-table format (hardware_profiles/kernels/README.md) with a count per op.

Standard library only.
"""
import argparse
import csv
import subprocess
import sys

KERNEL_HEADER = ["device", "op", "shape", "precision", "algorithm", "seconds", "source"]


def mirror_arguments(repository, default_output):
    """An argument parser with what every converter of a mirrored repository takes: --repo (its git
    directory), --commit and -o (default `default_output`; None: the converter derives it)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", required=True, help="git directory of a %s mirror or clone" % repository)
    parser.add_argument("--commit", required=True)
    parser.add_argument("-o", "--output", default=default_output)
    return parser


def git_show(git_dir, commit, path):
    """The text of `path` at `commit` in the git directory `git_dir` (a bare mirror or a .git)."""
    return subprocess.check_output(["git", "--git-dir", git_dir, "show", "%s:%s" % (commit, path)]).decode()


def git_files(git_dir, commit, folder):
    """Every file below `folder` at `commit`."""
    out = subprocess.check_output(["git", "--git-dir", git_dir, "ls-tree", "-r", "--name-only", commit, folder])
    return out.decode().split()


def write_kernel_table(path, rows):
    """Writes `rows` (lists in KERNEL_HEADER order) to `path` and prints the count per op."""
    with open(path, "w", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(KERNEL_HEADER)
        writer.writerows(rows)
    counts = {}
    for row in rows:
        counts[row[1]] = counts.get(row[1], 0) + 1
    print("%s: %d rows %s" % (path, len(rows), counts), file=sys.stderr)
