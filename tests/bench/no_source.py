#!/usr/bin/env python3
"""Share of each memory space 0 peak's bytes with no source line, per real TPU dump with an
HLO text (`../shared/dumps/tpu-aot`): "(no source)", the entry's parameters (made by no
instruction: "(parameters: …)"; an older binary counts them as no source), and the share
whose source is inferred through the HLO text.

    python3 tests/bench/no_source.py [BUFSCOPE_BINARY]   # default target/release/bufscope

Prints figures, asserts nothing."""
import glob
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.normpath(os.path.join(here, "..", ".."))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "target/release/bufscope")
shared = os.path.join(root, "..", "shared", "dumps", "tpu-aot")

print(f"{'dump':<62} {'peak':>10} {'no source':>9} {'parameters':>10} {'inferred':>9}")
for text in sorted(glob.glob(os.path.join(shared, "**", "*.after_optimizations.txt"), recursive=True)):
    stem = text[: -len(".after_optimizations.txt")]
    files = [f for f in glob.glob(stem + ".*") if not f.endswith((".json", ".md", "before_optimizations.txt", "error.txt"))]
    if not any(f.endswith("buffer-assignment.txt") for f in files):
        continue
    out = subprocess.run([binary, "summary", "--json", "--top", "100000", *files], capture_output=True, text=True)
    if out.returncode != 0:
        print(f"{os.path.relpath(stem, shared):<60} failed: {out.stderr.strip()[:80]}")
        continue
    for m in json.loads(out.stdout)["modules"]:
        space = next((s for s in m["memory_spaces"] if s["color"] == 0), None)
        if not space:
            continue
        a = space["answers"]
        whole = a["occupied_bytes"] or 1
        none = sum(r["bytes"] for r in a["source_lines"] if r["file"] == "(no source)")
        params = sum(r["bytes"] for r in a["source_lines"] if r["file"].startswith("(parameters"))
        inferred = sum(r["bytes"] for r in a["source_lines"] if r.get("source_inferred"))
        print(f"{os.path.relpath(stem, shared):<62} {whole / 2**20:>8.1f}Mi {100 * none / whole:>8.1f}% {100 * params / whole:>9.1f}% {100 * inferred / whole:>8.1f}%")
