#!/usr/bin/env python3
"""How good is `bufscope whatif --policy` (issue 37): each jax.checkpoint policy's estimate,
made on the compile with no jax.checkpoint (`lm_scan_plain`), against the real recompile with
that policy, for every pair the ladders hold: the remat ladder and the offload pair of
`../shared/dumps/tpu-aot` (v5e, seq 1024), and the policy ladders tests/bench/
make_policy_ladder.sh compiles into tests/fixtures/policy-ladder (v6e seq 1024, v5e and v6e seq
2048 batch 8), where present.

Per pair: HBM (colour 0) estimated peak against the recompile's occupied-bytes peak; host
(colour 5, `pinned_host`) `host_bytes_added` against the recompile's host peak; the FLOPs the
recomputation adds (`flops_added`) against the difference of the two compiles' `step_flops`.
Then the median absolute HBM error and how many estimates fall under the real peak (an
under-estimate is a false "fits"; more than 5 % under is counted apart).

A benchmark that prints figures, not a test: it asserts nothing.

    cargo build --release --bin bufscope
    python3 tests/bench/policy_ladder.py [--bufscope target/release/bufscope] [--shared ../shared]
        [--ladder DIR]   # the folder make_policy_ladder.sh wrote (default tests/fixtures/policy-ladder)
"""

import argparse
import json
import os
import statistics
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
QKV = "bsd,dhk->bshk/dot_general"  # q, k and v: checkpoint_name("q"/"k"/"v") in the program

# (policy, the generated program's name)
POLICIES = [
    ("nothing_saveable", "remat"),
    ("dots_with_no_batch_dims_saveable", "dots"),
    (f"save_only_these_names({QKV})", "save_qkv"),
    ("offload_dot_with_no_batch_dims", "offload_dots"),
    (f"save_and_offload_only_these_names({QKV})", "offload_qkv"),
]
SUFFIXES = [".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt",
            ".after_optimizations.txt"]


def files(base):
    """The run's four files, plain or gzipped."""
    out = []
    for s in SUFFIXES:
        out += [base + s + z for z in ["", ".gz"] if os.path.exists(base + s + z)][:1]
    return out


def pairs(shared, ladder):
    """(label, plain base, [(policy, real base)])."""
    aot = os.path.join(shared, "dumps", "tpu-aot")
    v5e = [os.path.join(aot, "jax0.12-libtpu0.0.50", "tpu_v5e_lm_scan_remat"),
           os.path.join(aot, "remat-ladder", "tpu_v5e_lm_scan_dots"),
           os.path.join(aot, "remat-ladder", "tpu_v5e_lm_scan_save_qkv"),
           os.path.join(aot, "turn4", "tpu_v5e_lm_scan_offload_dots"),
           os.path.join(aot, "turn4", "tpu_v5e_lm_scan_offload_qkv")]
    out = [("v5e s1024 b16", os.path.join(aot, "remat-ladder", "tpu_v5e_lm_scan_plain"),
            [(p, r) for (p, _), r in zip(POLICIES, v5e)])]
    for chip, seq, batch in [("v6e", 1024, 16), ("v5e", 2048, 8), ("v6e", 2048, 8)]:
        stem = lambda prog: os.path.join(ladder, f"tpu_{chip}_lm_scan_{prog}_s{seq}_b{batch}")
        real = []
        for policy, prog in POLICIES:
            r = stem(prog)
            if prog == "remat" and chip == "v6e" and seq == 1024 and not files(r):
                r = os.path.join(aot, "jax0.12-libtpu0.0.50", "tpu_v6e_lm_scan_remat")
            real.append((policy, r))
        out.append((f"{chip} s{seq} b{batch}", stem("plain"), real))
    return out


def run(bufscope, paths, flags):
    out = subprocess.run([bufscope, "whatif", *paths, *flags, "--json"],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)["modules"][0]


def space(module, color):
    return next((s for s in module["memory_spaces"] if s["color"] == color), None)


def gib(b):
    return f"{b / 2**30:.2f} GiB"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bufscope", default=os.path.join(REPO, "target", "release", "bufscope"))
    ap.add_argument("--shared", default=os.environ.get("BUFSCOPE_SHARED",
                                                       os.path.join(REPO, "..", "shared")))
    ap.add_argument("--ladder", default=os.path.join(REPO, "tests", "fixtures", "policy-ladder"))
    a = ap.parse_args()
    print("| compile | policy | HBM estimate | HBM real | error | host estimate | host real "
          "| FLOPs added, estimate | real | plain's step |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    errors = []
    for label, plain, real in pairs(a.shared, a.ladder):
        if len(files(plain)) < 4:
            continue
        for policy, base in real:
            if len(files(base)) < 4:
                continue
            est = run(a.bufscope, files(plain), ["--policy", policy])
            rec = run(a.bufscope, files(base), [])
            e0, r0 = space(est, 0), space(rec, 0)
            host_real = (space(rec, 5) or {}).get("peak_before", 0)
            err = (e0["peak_after"] - r0["peak_before"]) / r0["peak_before"] * 100
            errors.append(err)
            real_flops = rec["step_flops"] - est["step_flops"]
            print(f"| {label} | `{policy}` | {gib(e0['peak_after'])} | {gib(r0['peak_before'])} "
                  f"| {err:+.1f} % | {gib(e0['host_bytes_added'])} | {gib(host_real)} "
                  f"| {est['flops_added'] / 1e12:.3f} T | {real_flops / 1e12:.3f} T "
                  f"| {est['step_flops'] / 1e12:.2f} T |")
    if errors:
        print()
        print(f"{len(errors)} pairs: median |HBM error| {statistics.median(abs(e) for e in errors):.1f} %, "
              f"max {max(abs(e) for e in errors):.1f} %; under the real peak: "
              f"{sum(e < 0 for e in errors)}, of which more than 5 % under: "
              f"{sum(e < -5 for e in errors)}")


if __name__ == "__main__":
    main()
