#!/usr/bin/env bash
# Makes the MaxText per-device-batch sweep the sweep benchmark reads (issue 36): MaxText's own
# `train_compile` (ahead of time, no TPU) of MODEL (default llama3.1-8b) on TOPOLOGY (default
# v5e-16), as ../shared/dumps/tpu-aot/maxtext0.2.5's pdb1 point was made, one per-device batch
# per point; every other setting is base.yml's (sequence 2048, remat_policy full, scan_layers,
# bf16 activations, f32 weights, adamw, fsdp over the 16 chips). Needs a venv with MaxText 0.2.5,
# jax 0.12.0.1 and libtpu 0.0.52 (VENV, default /work/maxtext-venv).
#   bash tests/bench/make_maxtext_sweep.sh [OUT] [PDB ...]
# OUT defaults to target/maxtext-sweep; each point is written as
# OUT/pdbN/tpu_<TOPOLOGY>_maxtext_<MODEL>_pdbN.* (the four buffer-assignment files of the train
# step, its HLO text after optimizations, RESULT.json with the config, `memory_analysis()`, the
# compile's time and peak RSS, and .error.txt with the compiler's error when the compile fails
# out of memory: a point that does not fit). Without PDB it compiles 1, 2, 3, … up to the first
# that fails and two beyond. Machine paths inside are rewritten as in ../shared/dumps
# (/opt/venv-0.12/, /home/user/dumps/). A point already made is kept.
set -u
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="${1:-$HERE/target/maxtext-sweep}"; shift || true
VENV="${VENV:-/work/maxtext-venv}"
MODEL="${MODEL:-llama3.1-8b}"
TOPOLOGY="${TOPOLOGY:-v5e-16}"
MAX_PDB="${MAX_PDB:-16}"
# Other processes on the machine may hold libtpu's lockfile; a compile ahead of time needs no device.
export ALLOW_MULTIPLE_LIBTPU_LOAD=1
mkdir -p "$OUT"

# One compile: MaxText's train_compile.main with its compiled object kept for memory_analysis().
read -r -d '' DRIVER <<'PY'
import json, os, resource, sys, time, traceback
import jax, libtpu
import maxtext
from maxtext.trainers.pre_train import train_compile
out, argv = sys.argv[1], sys.argv[2:]
cfg = dict(a.split("=", 1) for a in argv)
kept = {}
inner = train_compile.jit_and_compile
def keep(*a, **k):
    kept["compiled"] = inner(*a, **k)
    return kept["compiled"]
train_compile.jit_and_compile = keep
initialize = train_compile.pyconfig.initialize
def config(*a, **k):
    kept["config"] = initialize(*a, **k)
    return kept["config"]
train_compile.pyconfig.initialize = config
RESOLVED = ["model_name", "compile_topology", "compile_topology_num_slices", "per_device_batch_size",
            "global_batch_size_to_train_on", "max_target_length", "base_emb_dim", "base_mlp_dim",
            "base_num_decoder_layers", "vocab_size", "remat_policy", "scan_layers", "attention", "dtype",
            "weight_dtype", "opt_type", "ici_fsdp_parallelism", "dcn_data_parallelism"]
t0 = time.time()
result = {"prog": "maxtext train_compile", "cfg": cfg, "ok": False, "jax": jax.__version__,
          "libtpu": getattr(libtpu, "__version__", "?"), "maxtext": getattr(maxtext, "__version__", "0.2.5")}
try:
    train_compile.main(["train_compile"] + argv)
    result["ok"] = True
except BaseException as e:  # the compiler's out-of-memory error among them
    open(out + ".error.txt", "w").write(f"{type(e).__name__}: {e}\n")
    traceback.print_exc()
result["wall_s_compile_call"] = round(time.time() - t0, 1)
if "config" in kept:
    result["cfg_resolved"] = {k: str(getattr(kept["config"], k, None)) for k in RESOLVED}
if "compiled" in kept:
    m = kept["compiled"].memory_analysis()
    result["memory_analysis"] = {k: getattr(m, k) for k in dir(m) if k.endswith("_in_bytes")}
result["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
json.dump(result, open(out, "w"), indent=1)
sys.exit(0 if result["ok"] else 1)
PY

compile_point() {  # $1 = per-device batch; returns 0 when it fits, 1 when it failed
  local pdb="$1" name="pdb$1" dest stem tmp
  dest="$OUT/$name"; stem="tpu_${TOPOLOGY}_maxtext_${MODEL}_$name"
  if [ -f "$dest/$stem.RESULT.json" ]; then
    echo "kept $dest"; [ -f "$dest/$stem.error.txt" ] && return 1 || return 0
  fi
  tmp="$(mktemp -d)"; mkdir -p "$dest"
  echo "compiling $name ($MODEL on $TOPOLOGY) ..."
  local t0=$SECONDS
  XLA_FLAGS="--xla_dump_to=$tmp/xla --xla_dump_hlo_as_text --xla_dump_hlo_module_re=jit_train_step" \
    "$VENV/bin/python" -c "$DRIVER" "$tmp/RESULT.json" model_name="$MODEL" compile_topology="$TOPOLOGY" \
    compile_topology_num_slices=1 per_device_batch_size="$pdb" run_name="$name" \
    base_output_directory="$tmp/out" >"$tmp/log.txt" 2>&1
  echo "  exit $? after $((SECONDS - t0)) s ($(grep -v '^\s*$' "$tmp/log.txt" | tail -1 | cut -c1-160))"
  for f in "$tmp"/xla/module_*jit_train_step*after_optimizations*; do
    [ -e "$f" ] || continue
    local base suffix; base="$(basename "$f")"
    case "$base" in
      *after_optimizations-buffer-assignment.txt) suffix=buffer-assignment.txt;;
      *after_optimizations-buffer-assignment-values.txt) suffix=buffer-assignment-values.txt;;
      *after_optimizations-live-range.txt) suffix=live-range.txt;;
      *after_optimizations-memory-usage-report.txt) suffix=memory-usage-report.txt;;
      *after_optimizations.txt) suffix=after_optimizations.txt;;
      *) continue;;
    esac
    sed -e "s#$VENV/#/opt/venv-0.12/#g" -e "s#$tmp#/home/user/dumps/$name#g" "$f" >"$dest/$stem.$suffix"
  done
  if [ -f "$tmp/RESULT.json" ]; then
    sed -e "s#$tmp#/home/user/dumps/$name#g" -e "s#$VENV/#/opt/venv-0.12/#g" "$tmp/RESULT.json" >"$dest/$stem.RESULT.json"
  else
    echo "  no RESULT.json: $(tail -3 "$tmp/log.txt")"
  fi
  [ -f "$tmp/RESULT.json.error.txt" ] && sed -e "s#$tmp#/home/user/dumps/$name#g" "$tmp/RESULT.json.error.txt" >"$dest/$stem.error.txt"
  # The compile's log beside the points, not among them (a folder's logs are read for OOM messages).
  mkdir -p "$OUT/logs"
  sed -e "s#$tmp#/home/user/dumps/$name#g" -e "s#$VENV/#/opt/venv-0.12/#g" "$tmp/log.txt" >"$OUT/logs/$stem.log"
  rm -rf "$tmp"
  if [ -f "$dest/$stem.error.txt" ]; then
    # A compile that failed for another reason than memory is no point: not kept.
    if ! grep -qiE "memory|RESOURCE_EXHAUSTED|OOM" "$dest/$stem.error.txt"; then
      echo "  not kept: $(head -c 300 "$dest/$stem.error.txt")"; rm -rf "$dest"; return 2
    fi
    return 1
  fi
  [ -f "$dest/$stem.RESULT.json" ] || { rm -rf "$dest"; return 2; }
  return 0
}

if [ $# -gt 0 ]; then
  for pdb in "$@"; do compile_point "$pdb"; done
  exit 0
fi
beyond=-1
for ((pdb = 1; pdb <= MAX_PDB; pdb++)); do
  compile_point "$pdb"; rc=$?
  [ $rc -eq 2 ] && { echo "stopped: pdb $pdb failed for another reason than memory"; exit 1; }
  if [ $rc -eq 1 ] && [ $beyond -lt 0 ]; then beyond=2; continue; fi
  if [ $beyond -ge 0 ]; then beyond=$((beyond - 1)); [ $beyond -le 0 ] && break; fi
done
