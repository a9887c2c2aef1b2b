#!/usr/bin/env python3
"""How good is `bufscope whatif`: its estimate against real recompiles (issue 29).

Runs `bufscope whatif --json` on the remat ladder's `tpu_v5e_lm_scan_plain` (no
jax.checkpoint) once per checkpoint policy, each mapped to `--remat-loops` and a `--keep`
pattern over the op_name of what the forward scan stacks, and prints the estimated HBM peak
beside the peak of the real recompile with that policy (bufscope's occupied-bytes peak of
the recompile's own dump, colour 0), and the error. Then the batch pair (nothing_saveable
at batch 8 and 32): there is no plain compile at those batch sizes, so what is printed is
the estimate of rematerialising what they still stack, with no real peak to compare.

A benchmark that prints figures, not a test: it asserts nothing.

    cargo build --release --bin bufscope
    python3 tests/bench/remat_ladder.py [--bufscope target/release/bufscope] [--shared ../shared]
"""

import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# op_names of the einsums in programs/tpu_programs.py's layer_fn, as the HLO text prints
# them (`…/eval_jaxpr/bsd,dhk->bshk/dot_general`).
QKV = r"bsd,dhk->bshk/dot_general"  # q, k and v: checkpoint_name("q"/"k"/"v")
NO_BATCH_DOTS = r"(bsd,dhk->bshk|bshk,hkd->bsd|bsd,df->bsf|bsf,fd->bsd)/dot_general"

# (policy, flags, the recompile's run, its folder)
LADDER = [
    ("nothing_saveable", ["--remat-loops"], "tpu_v5e_lm_scan_remat", "jax0.12-libtpu0.0.50"),
    ("dots_with_no_batch_dims_saveable", ["--remat-loops", "--keep", NO_BATCH_DOTS],
     "tpu_v5e_lm_scan_dots", "remat-ladder"),
    ("  (as --keep dot_general)", ["--remat-loops", "--keep", "dot_general"],
     "tpu_v5e_lm_scan_dots", "remat-ladder"),
    ("save_only_these_names(q, k, v)", ["--remat-loops", "--keep", QKV],
     "tpu_v5e_lm_scan_save_qkv", "remat-ladder"),
]

SUFFIXES = [".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt",
            ".after_optimizations.txt"]


def files(shared, folder, run):
    base = os.path.join(shared, "dumps", "tpu-aot", folder, run)
    return [base + s for s in SUFFIXES if os.path.exists(base + s)]


def whatif(bufscope, paths, flags):
    out = subprocess.run([bufscope, "whatif", *paths, *flags, "--json"],
                         check=True, capture_output=True, text=True).stdout
    module = json.loads(out)["modules"][0]
    space = next(s for s in module["memory_spaces"] if s["color"] == 0)
    return space, module


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bufscope", default=os.path.join(REPO, "target", "release", "bufscope"))
    ap.add_argument("--shared", default=os.environ.get("BUFSCOPE_SHARED",
                                                       os.path.join(REPO, "..", "shared")))
    a = ap.parse_args()
    plain = files(a.shared, "remat-ladder", "tpu_v5e_lm_scan_plain")
    if len(plain) < 4:
        sys.exit(f"needs the remat ladder in {a.shared}/dumps/tpu-aot/remat-ladder")
    rows = []
    base, _ = whatif(a.bufscope, plain, [])
    rows.append(("no edit (lm_scan_plain itself)", "", base["peak_after"], base["peak_before"]))
    for policy, flags, run, folder in LADDER:
        est, m = whatif(a.bufscope, plain, flags)
        real, _ = whatif(a.bufscope, files(a.shared, folder, run), [])
        note = f"{len(m['loop_outputs'])} stacked outputs gone, {m['loop_outputs_kept']} kept"
        shown = " ".join(f"'{f}'" if " " in f or "|" in f else f for f in flags)
        # A | inside a Markdown table cell is escaped.
        rows.append((policy, shown.replace("|", "\\|") + f"  [{note}]", est["peak_after"],
                     real["peak_before"]))
    print(f"whatif on tpu_v5e_lm_scan_plain (real peak {gib(base['peak_before'])}), HBM, "
          f"against each policy's real recompile")
    print(f"| policy | whatif flags | estimate | real recompile | error |")
    print(f"|---|---|---|---|---|")
    for policy, flags, est, real in rows:
        err = (est - real) / real * 100
        print(f"| {policy} | {flags} | {gib(est)} | {gib(real)} | {err:+.1f} % |")
    print()
    print("the batch pair (nothing_saveable, batch 8 and 32): no plain compile to start from;")
    print("what --remat-loops estimates they would still give up")
    print("| run | real peak | whatif --remat-loops | change |")
    print("|---|---|---|---|")
    for run in ["tpu_v5e_lm_scan_remat_b8", "tpu_v5e_lm_scan_remat_b32"]:
        est, m = whatif(a.bufscope, files(a.shared, "remat-ladder", run), ["--remat-loops"])
        change = (est["peak_after"] - est["peak_before"]) / est["peak_before"] * 100
        print(f"| {run} | {gib(est['peak_before'])} | {gib(est['peak_after'])} "
              f"({len(m['loop_outputs'])} stacked outputs) | {change:+.1f} % |")


if __name__ == "__main__":
    main()
