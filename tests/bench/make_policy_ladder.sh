#!/usr/bin/env bash
# Compiles the policy ladder's missing pairs ahead of time (no TPU: libtpu from PyPI, jax
# 0.12.0.1 in a Python 3.12 venv) and keeps, per run, the files bufscope reads, renamed as in
# ../shared/dumps/tpu-aot: OUT/STEM.{buffer-assignment,buffer-assignment-values,live-range,
# memory-usage-report,after_optimizations}.txt and STEM.RESULT.json.
#   bash tests/bench/make_policy_ladder.sh VENV OUT [TOPO:SEQ:BATCH ...]
set -u
VENV=${1:?venv}; OUT=${2:?out}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
CONFIGS=${*:-"v6e:1024:16 v5e:2048:8"}
mkdir -p "$OUT"
for cfg in $CONFIGS; do
  IFS=: read -r chip seq batch <<<"$cfg"
  for prog in plain remat dots save_qkv offload_dots offload_qkv; do
    stem="tpu_${chip}_lm_scan_${prog}_s${seq}_b${batch}"
    [ -e "$OUT/$stem.buffer-assignment.txt" ] && continue
    tmp=$(mktemp -d)
    ALLOW_MULTIPLE_LIBTPU_LOAD=1 XLA_FLAGS="--xla_dump_to=$tmp --xla_dump_hlo_as_text" RESULT_JSON="$OUT/$stem.RESULT.json" \
      "$VENV/bin/python" "$HERE/policy_programs.py" "lm_scan_$prog" "$chip:2x2" "seq=$seq" "batch=$batch"
    for f in "$tmp"/module_*jit_train_step*.after_optimizations*; do
      case "$f" in
        *-buffer-assignment.txt) cp "$f" "$OUT/$stem.buffer-assignment.txt" ;;
        *-buffer-assignment-values.txt) cp "$f" "$OUT/$stem.buffer-assignment-values.txt" ;;
        *-live-range.txt) cp "$f" "$OUT/$stem.live-range.txt" ;;
        *-memory-usage-report.txt) cp "$f" "$OUT/$stem.memory-usage-report.txt" ;;
        *.after_optimizations.txt) cp "$f" "$OUT/$stem.after_optimizations.txt" ;;
      esac
    done
    rm -rf "$tmp"
    if [ -e "$OUT/$stem.buffer-assignment.txt" ]; then echo "$stem done"; else echo "$stem FAILED"; fi
  done
done
echo "all done"
