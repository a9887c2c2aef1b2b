#!/usr/bin/env python3
"""What the HLO module text beside a dump costs (issue 24, "Speed"): per real
`*after_optimizations.txt` in ../shared/dumps that has its dump files beside it, the wall
time of `bufscope summary --json` on the dump files without and with the text (median of
--runs runs each, whole processes, taken in turns), what the text adds against half the dumps' time (the
target), and the heap the read text keeps against its file's size (`bufscope bench TEXT`,
the binary's counting allocator; target: at most the file's size).

A benchmark that prints figures, not a test: it asserts nothing. Other work on the machine
moves the times; the medians are what to compare.

    cargo build --release --bin bufscope
    python3 tests/bench/hlo_bench.py [--bufscope target/release/bufscope] [--shared ../shared] [--runs 5] [--match unrolled]
"""

import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DUMP_SUFFIXES = [".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt"]


def once(cmd):
    """Wall seconds of one run of `cmd` (its output discarded)."""
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def walls(a, b, runs):
    """Median wall seconds of commands `a` and `b` over `runs` runs each, taken in turns (a,
    b, a, b, …) so that a change in the machine's load moves both alike."""
    ta, tb = [], []
    for _ in range(runs):
        ta.append(once(a))
        tb.append(once(b))
    return statistics.median(ta), statistics.median(tb)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bufscope", default=os.path.join(REPO, "target/release/bufscope"))
    ap.add_argument("--shared", default=os.path.join(REPO, "..", "shared"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--match", default="", help="only the texts whose path holds this")
    args = ap.parse_args()
    texts = sorted(glob.glob(os.path.join(args.shared, "dumps", "**", "*after_optimizations.txt"), recursive=True))
    texts = [t for t in texts if args.match in t]
    if not texts:
        sys.exit(f"no HLO text under {args.shared}/dumps")
    print(f"bufscope summary --json, wall ms, median of {args.runs} runs; kept: the read text's heap")
    print(f"{'module':62} {'dumps MB':>8} {'text MB':>7} {'without':>8} {'with':>8} {'added':>7} {'≤ half?':>7} {'kept':>6}")
    for text in texts:
        stem = text[: -len(".after_optimizations.txt")] if text.endswith(".after_optimizations.txt") else None
        dumps = [stem + s for s in DUMP_SUFFIXES if stem and os.path.exists(stem + s)]
        bench = subprocess.run([args.bufscope, "bench", "--json", "--runs", "1", text], capture_output=True, text=True, check=True)
        kept = json.loads(bench.stdout)["kept_bytes"] / os.path.getsize(text)
        name = os.path.relpath(text, os.path.join(args.shared, "dumps"))[: -len(".after_optimizations.txt")]
        if not dumps or not os.path.exists(stem + ".buffer-assignment.txt"):
            print(f"{name[-62:]:62} {'':>8} {os.path.getsize(text) / 1e6:>7.2f} {'(no dump files beside it)':>34} {kept:>5.2f}x")
            continue
        base = [args.bufscope, "summary", "--json"] + dumps
        without, with_text = walls(base, base + [text], args.runs)
        added = with_text - without
        ok = "yes" if added <= without / 2 else "no"
        size = sum(os.path.getsize(d) for d in dumps) / 1e6
        print(f"{name[-62:]:62} {size:>8.2f} {os.path.getsize(text) / 1e6:>7.2f} {without * 1e3:>8.1f} {with_text * 1e3:>8.1f} {added * 1e3:>+7.1f} {ok:>7} {kept:>5.2f}x")


if __name__ == "__main__":
    main()
