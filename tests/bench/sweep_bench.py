#!/usr/bin/env python3
"""The sweep's accuracy on real TPU v5e compiles (issue 36): prints tables, asserts nothing.

    cargo build --release && python3 tests/bench/sweep_bench.py [--bin target/release/bufscope] [--only MaxText]

Reads the batch, sequence and layers points of ../shared/dumps/tpu-aot (batch 8, 16, 32, 48,
64; sequence 512, 1024; 8 layers) and those tests/bench/make_sweep.sh made into
target/sweep-dumps (layers 4, 12; sequence 256 to 6144; batch near the capacity; a point
whose compile failed keeps its dump and `.error.txt`: a point that does not fit), and the
MaxText per-device batch sweep tests/bench/make_maxtext_sweep.sh made into
target/maxtext-sweep (MaxText's own train_compile of llama3.1-8b on v5e-16, per-device batch
1, 2, 3, … to the first that fails and two beyond; without it, the same points kept in
tests/fixtures/sweep-maxtext). A point that is absent is left out and said so.

1. Inside the range: each point between the smallest and the largest left out, predicted by
   `bufscope sweep --at V` from the others (target: within 10 %).
2. Extrapolation: from the points up to M (at least two), each point above M up to 2·M
   (target: within 15 %).
3. With `--capacity v5e`, the largest value said to fit from the points up to M (and what the
   fit alone says, `fit_says_largest`), against the
   real bracket: the largest compiled that fits and the smallest that failed (target: never
   above the real one).
Every figure is HBM's (memory space 0) occupied-bytes peak, `peak_live_bytes`.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SHARED = os.environ.get("BUFSCOPE_SHARED", os.path.join(ROOT, "..", "shared"))
AOT = os.path.join(SHARED, "dumps", "tpu-aot")
MADE = os.path.join(ROOT, "target", "sweep-dumps")
MAXTEXT = os.path.join(ROOT, "target", "maxtext-sweep")
STEM = "tpu_v5e_lm_scan_remat"


def shared(folder, stem):
    return os.path.join(AOT, folder, stem + ".buffer-assignment.txt")


def made(name):
    return os.path.join(MADE, name)


def maxtext_points():
    """The per-device batches make_maxtext_sweep.sh made (pdb1 … its first failure and beyond)
    into target/maxtext-sweep, else those tests/fixtures/sweep-maxtext keeps (1 to 8)."""
    there = os.listdir(MAXTEXT) if os.path.isdir(MAXTEXT) else []
    pdbs = sorted(int(d[3:]) for d in there if d.startswith("pdb") and d[3:].isdigit())
    if pdbs:
        return [os.path.join(MAXTEXT, f"pdb{b}") for b in pdbs]
    kept = os.path.join(ROOT, "tests", "fixtures", "sweep-maxtext")
    stem = "tpu_v5e-16_maxtext_llama3.1-8b_pdb{}.buffer-assignment.txt.gz"
    return [os.path.join(kept, stem.format(b)) for b in range(1, 9)]


def present(path):
    """A made point is there once its compile ended (its RESULT.json written)."""
    if os.path.isdir(path):
        return any(f.endswith(f"_{os.path.basename(path)}.RESULT.json") for f in os.listdir(path))
    return os.path.exists(path)


SWEEPS = {
    "batch (tokens dim 0 = batch / 2)": [
        shared("remat-ladder", STEM + "_b8"), shared("jax0.12-libtpu0.0.50", STEM),
        shared("remat-ladder", STEM + "_b32"), shared("turn4", STEM + "_b48"),
        shared("turn4", STEM + "_b64"), made("b192"), made("b256"), made("b264"), made("b272"), made("b280"),
        made("b288"), made("b320")],
    "sequence (tokens dim 1 = seq + 1)": [
        made("s256"), shared("turn4", STEM + "_s512"), shared("jax0.12-libtpu0.0.50", STEM), made("s2048"),
        made("s4096"), made("s5120"), made("s6144")],
    "layers (scan trip count)": [
        made("l4"), shared("jax0.12-libtpu0.0.50", STEM), made("l12")],
    "MaxText per-device batch (llama3.1-8b, v5e-16)": maxtext_points(),
}


def run(binary, paths, at=(), capacity=None):
    args = [binary, "sweep", "--json"] + [a for v in at for a in ("--at", str(v))]
    if capacity:
        args += ["--capacity", capacity]
    out = subprocess.run(args + paths, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return json.loads(out.stdout)


def pct(predicted, real):
    return 100.0 * (predicted - real) / real


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "target", "release", "bufscope"))
    ap.add_argument("--only", default="", help="only the sweeps whose name holds this text (MaxText)")
    args = ap.parse_args()
    rows, fits = [], []
    for name, paths in SWEEPS.items():
        if args.only not in name:
            continue
        there = [p for p in paths if present(p)]
        missing = [os.path.relpath(p, ROOT) for p in paths if not present(p)]
        if missing:
            print(f"{name}: left out (absent): {', '.join(missing)}", file=sys.stderr)
        if len(there) < 3:
            print(f"{name}: fewer than three points, skipped", file=sys.stderr)
            continue
        whole = run(args.bin, there)
        values = whole["varied"]["values"]
        hbm = whole["spaces"][0]
        ok = {p["value"]: p["peak_live_bytes"] for p in hbm["points"] if not p["failed"]}
        by_value = dict(zip(values, there))
        good = sorted(ok)
        # 1. Inside the range.
        for v in good[1:-1]:
            kept = [by_value[u] for u in good if u != v]
            pred = run(args.bin, kept, at=[v])["spaces"][0]["at"][0]["peak_live_bytes"]
            rows.append((name, "inside", f"all but {v}", v, ok[v], pred))
        # 2. Extrapolation up to twice the largest fitted.
        for k in range(2, len(good)):
            m = good[k - 1]
            targets = [v for v in good[k:] if v <= 2 * m]
            if not targets:
                continue
            res = run(args.bin, [by_value[u] for u in good[:k]], at=targets)
            for a in res["spaces"][0]["at"]:
                rows.append((name, "extrapolated", f"{good[0]}..{m}", a["value"], ok[a["value"]], a["peak_live_bytes"]))
        # 3. Largest fitting against the real bracket.
        failed = sorted(p["value"] for p in hbm["points"] if p["failed"])
        cap = run(args.bin, there, capacity="v5e")["spaces"][0]
        fit_ok = [p["value"] for p in cap["points"] if not p["failed"] and p["peak_live_bytes"] <= cap["capacity_bytes"]]
        real_lo, real_hi = max(fit_ok), (failed[0] - 1 if failed else None)
        for k in range(2, len(good) + 1):
            sub = [by_value[u] for u in good[:k]]
            res = run(args.bin, sub, capacity="v5e")["spaces"][0]
            fits.append((name, f"{good[0]}..{good[k - 1]}", res["largest_fitting"], res["fit_says_largest"], real_lo, real_hi, res["pinned"]))
    print("| sweep | kind | fitted on | value | real peak | predicted | error |")
    print("|---|---|---|---|---|---|---|")
    for name, kind, on, v, real, pred in rows:
        print(f"| {name} | {kind} | {on} | {v} | {real / 2**30:.3f} GiB | {pred / 2**30:.3f} GiB | {pct(pred, real):+.1f} % |")
    for kind, limit in (("inside", 10.0), ("extrapolated", 15.0)):
        errs = [pct(p, r) for _, k, _, _, r, p in rows if k == kind]
        if errs:
            within = sum(abs(e) <= limit for e in errs)
            print(f"\n{kind}: {len(errs)} predictions, worst |error| {max(abs(e) for e in errs):.1f} %, "
                  f"{within}/{len(errs)} within {limit:.0f} %")
    errs = [pct(p, r) for *_, r, p in rows]
    if errs:
        under = sum(e < 0 for e in errs)
        print(f"under-estimates: {under}/{len(errs)} ({100.0 * under / len(errs):.0f} %)")
    print("\n| sweep | fitted on | largest said to fit (v5e) | the fit alone | real: largest compiled that fits | real: first failed − 1 | pinned | never above the real one |")
    print("|---|---|---|---|---|---|---|---|")
    for name, on, said, alone, lo, hi, pinned in fits:
        if said is None:
            verdict = "no value said"
        elif said <= lo:
            verdict = "yes"
        elif hi is not None and said > hi:
            verdict = "NO"
        else:
            verdict = "unknown (between the real bracket)"
        print(f"| {name} | {on} | {said} | {alone} | {lo} | {hi if hi is not None else '—'} | {pinned} | {verdict} |")


if __name__ == "__main__":
    main()
