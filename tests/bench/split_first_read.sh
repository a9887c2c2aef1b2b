#!/usr/bin/env bash
# Would the first read pay split in two on this machine? (not a test; issue 38). The first
# read is the dump up to `Used values:` (the allocations and their values) and the
# `HloLiveRange` section at its end; the natural split gives one lane each. This cuts DUMP into
# the two halves and the whole first read (under target/split/), then, RUNS rounds, parses
# each alone and the two halves at once in two processes: the pair's slower half is the
# least a split read could take here, before joining the halves' names (which it would add).
# Each parse is tests/bench/wasm_parse.sh's feeding and nothing else (FILE fed in 2 MiB
# slices, timed): with WASM=1 the page's (wasm in Node's V8), else the same natively.
#   bash tests/bench/split_first_read.sh DUMP [RUNS]
set -eu
HERE="$(cd "$(dirname "$0")/../.." && pwd)"
DUMP="$1"; RUNS="${2:-3}"
OUT="$HERE/target/split"; mkdir -p "$OUT"
L1=$(grep -n -m1 '^Used values:' "$DUMP" | cut -d: -f1)
L2=$(grep -n -m1 '^HloLiveRange' "$DUMP" | cut -d: -f1)
[ -n "$L1" ] && [ -n "$L2" ] || { echo "no 'Used values:' or 'HloLiveRange' line in $DUMP" >&2; exit 1; }
sed -n "1,${L1}p" "$DUMP" > "$OUT/head.txt"
sed -n "${L2},\$p" "$DUMP" > "$OUT/tail.txt"
cat "$OUT/head.txt" "$OUT/tail.txt" > "$OUT/first.txt"
echo "first read of $DUMP: lines 1-$L1 and $L2-end; $(wc -c < "$OUT/head.txt") + $(wc -c < "$OUT/tail.txt") bytes"

BUILT="$HERE/target/wasm-parse/target"
if [ "${WASM:-0}" = 1 ]; then
  bash "$HERE/tests/bench/wasm_parse.sh" "$OUT/tail.txt" 0  # builds it
  RUN=(node "$HERE/tests/bench/wasm_parse.mjs" "$BUILT/wasm32-unknown-unknown/release/wasm_parse.wasm")
else
  NATIVE=1 bash "$HERE/tests/bench/wasm_parse.sh" "$OUT/tail.txt" 0
  RUN=("$BUILT/release/wasm-parse")
fi
parse() { "${RUN[@]}" "$1" | grep -o 'fed in [0-9.]* ms' | grep -o '[0-9.]*'; }

for r in $(seq "$RUNS"); do
  first=$(parse "$OUT/first.txt"); head=$(parse "$OUT/head.txt"); tail=$(parse "$OUT/tail.txt")
  parse "$OUT/head.txt" > "$OUT/pair.head" & parse "$OUT/tail.txt" > "$OUT/pair.tail" & wait
  echo "round $r: first read $first ms; alone: head $head, tail $tail ms; at once: head $(cat "$OUT/pair.head"), tail $(cat "$OUT/pair.tail") ms"
done
