#!/usr/bin/env bash
# Makes the sweep points the sweep benchmark and tests read (issue 36): real XLA:TPU compiles of
# ../shared/dumps/tpu-aot/programs/tpu_programs.py's lm_scan_remat for v5e:2x2, ahead of time,
# one config value changed per point. Needs a venv with jax[tpu] (VENV, default /work/tpu-venv).
#   bash tests/bench/make_sweep.sh [OUT] [NAME=key=value ...]
# OUT defaults to target/sweep-dumps; each point is written as OUT/<NAME>/tpu_v5e_lm_scan_remat_<NAME>.*
# (the four buffer-assignment files, the HLO text after optimizations, RESULT.json, and
# .error.txt when the compile fails: a point that does not fit). Machine paths inside are
# rewritten as in ../shared/dumps (/home/user/models/, /opt/venv-0.12/). A point already made is kept.
set -u
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$HERE/target/sweep-dumps}"; shift || true
VENV="${VENV:-/work/tpu-venv}"
# Other processes on the machine may hold libtpu's lockfile; a compile ahead of time needs no device.
export ALLOW_MULTIPLE_LIBTPU_LOAD=1
PROG="${PROG_PY:-$HERE/../shared/dumps/tpu-aot/programs/tpu_programs.py}"
[ -f "$PROG" ] || PROG=/work/shared/dumps/tpu-aot/programs/tpu_programs.py
POINTS=("$@")
[ ${#POINTS[@]} -eq 0 ] && POINTS=(l4=n_layers=4 l12=n_layers=12 s256=seq=256 s2048=seq=2048 s4096=seq=4096 s5120=seq=5120 s6144=seq=6144 b192=batch=192 b256=batch=256 b264=batch=264 b272=batch=272 b280=batch=280 b288=batch=288 b320=batch=320)
mkdir -p "$OUT"
for point in "${POINTS[@]}"; do
  name="${point%%=*}"; kv="${point#*=}"
  dest="$OUT/$name"; stem="tpu_v5e_lm_scan_remat_$name"
  if [ -f "$dest/$stem.RESULT.json" ]; then echo "kept $dest"; continue; fi
  tmp="$(mktemp -d)"; mkdir -p "$dest"
  echo "compiling $name ($kv) ..."
  XLA_FLAGS="--xla_dump_to=$tmp/xla --xla_dump_hlo_as_text" RESULT_JSON="$tmp/RESULT.json" \
    "$VENV/bin/python" "$PROG" lm_scan_remat v5e:2x2 "$kv" >"$tmp/log.txt" 2>&1
  echo "  exit $? ($(tail -1 "$tmp/log.txt" | cut -c1-160))"
  for f in "$tmp"/xla/module_*jit_train_step*after_optimizations*; do
    [ -e "$f" ] || continue
    base="$(basename "$f")"
    case "$base" in
      *after_optimizations-buffer-assignment.txt) suffix=buffer-assignment.txt;;
      *after_optimizations-buffer-assignment-values.txt) suffix=buffer-assignment-values.txt;;
      *after_optimizations-live-range.txt) suffix=live-range.txt;;
      *after_optimizations-memory-usage-report.txt) suffix=memory-usage-report.txt;;
      *after_optimizations.txt) suffix=after_optimizations.txt;;
      *) continue;;
    esac
    sed -e "s#$(dirname "$PROG")/#/home/user/models/#g" -e "s#$VENV/#/opt/venv-0.12/#g" "$f" >"$dest/$stem.$suffix"
  done
  sed -e "s#$tmp#/home/user/dumps/$name#g" -e "s#$VENV/#/opt/venv-0.12/#g" "$tmp/RESULT.json" >"$dest/$stem.RESULT.json"
  [ -f "$tmp/RESULT.error.txt" ] && cp "$tmp/RESULT.error.txt" "$dest/$stem.error.txt"
  rm -rf "$tmp"
  # A compile that failed for another reason than memory is no point: not kept.
  if [ -f "$dest/$stem.error.txt" ] && ! grep -qiE "memory|RESOURCE_EXHAUSTED|OOM" "$dest/$stem.error.txt"; then
    echo "  not kept: $(head -c 200 "$dest/$stem.error.txt")"; rm -rf "$dest"
  fi
done
