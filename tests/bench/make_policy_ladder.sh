#!/usr/bin/env bash
# Compiles the policy ladder's missing pairs ahead of time (no TPU: libtpu from PyPI, jax
# 0.12.0.1 in a Python 3.12 venv) and keeps, per run, the files bufscope reads, renamed as in
# ../shared/dumps/tpu-aot: OUT/STEM.{buffer-assignment,buffer-assignment-values,live-range,
# after_optimizations}.txt.gz and STEM.RESULT.json.gz, machine paths rewritten as in
# ../shared/dumps (/home/user/models/, /opt/venv-0.12/): tests/fixtures/policy-ladder.
#   bash tests/bench/make_policy_ladder.sh VENV OUT [TOPO:SEQ:BATCH ...]
# PROGS="offload_dots ..." compiles only those programs (default: all six).
set -u
VENV=${1:?venv}; OUT=${2:?out}; shift 2
HERE=$(cd "$(dirname "$0")" && pwd)
CONFIGS=${*:-"v6e:1024:16 v5e:2048:8"}
mkdir -p "$OUT"
for cfg in $CONFIGS; do
  IFS=: read -r chip seq batch <<<"$cfg"
  for prog in ${PROGS:-plain remat dots save_qkv offload_dots offload_qkv}; do
    stem="tpu_${chip}_lm_scan_${prog}_s${seq}_b${batch}"
    [ -e "$OUT/$stem.buffer-assignment.txt.gz" ] && continue
    tmp=$(mktemp -d)
    ALLOW_MULTIPLE_LIBTPU_LOAD=1 XLA_FLAGS="--xla_dump_to=$tmp --xla_dump_hlo_as_text" RESULT_JSON="$OUT/$stem.RESULT.json" \
      "$VENV/bin/python" "$HERE/policy_programs.py" "lm_scan_$prog" "$chip:2x2" "seq=$seq" "batch=$batch"
    keep() { sed -e "s#$HERE/#/home/user/models/#g" -e "s#$VENV/#/opt/venv-0.12/#g" "$1" | gzip -9 > "$OUT/$stem.$2.gz"; }
    for f in "$tmp"/module_*jit_train_step*.after_optimizations*; do
      case "$f" in
        *-buffer-assignment.txt) keep "$f" buffer-assignment.txt ;;
        *-buffer-assignment-values.txt) keep "$f" buffer-assignment-values.txt ;;
        *-live-range.txt) keep "$f" live-range.txt ;;
        *.after_optimizations.txt) keep "$f" after_optimizations.txt ;;
      esac
    done
    [ -e "$OUT/$stem.RESULT.json" ] && keep "$OUT/$stem.RESULT.json" RESULT.json && rm "$OUT/$stem.RESULT.json"
    rm -rf "$tmp"
    if [ -e "$OUT/$stem.buffer-assignment.txt.gz" ]; then echo "$stem done"; else echo "$stem FAILED"; fi
  done
done
echo "all done"
