#!/usr/bin/env bash
# Browser tests: builds the app with Trunk once (with the `test-hooks` cargo feature: the
# `window.__bufscope_*` hooks the tests read, which the release page leaves out), serves it
# on 127.0.0.1 (a free port), runs every tests/e2e/*.test.mjs one after another against
# that one server (each gets the URL as its argv[2] and closes with a line `N passed,
# M failed`, or `N passed, M failed, K skipped` when tests skipped for want of ../shared),
# stops the server, and prints the sum of those lines as its own last line, `N passed,
# M failed, K skipped`. Exits non-zero when a file failed, exited non-zero, or printed no
# closing line, and, with CI=true in the environment (CI always has ../shared), when a test
# skipped.
#   tests/e2e/run.sh                   build, then test
#   E2E_NO_BUILD=1 tests/e2e/run.sh    test the dist already in target/e2e-dist
#   E2E_DIST=target/my-dist tests/e2e/run.sh   build into (and serve) another folder
#   tests/e2e/run.sh app loading       only tests/e2e/app.test.mjs and loading.test.mjs
#   tests/e2e/run.sh share 'the picker'   only the test of share.test.mjs called that (its
#                                      exact name or a part of one name): two arguments
#                                      of which the second names no test file
#   E2E_SHUFFLE=1 tests/e2e/run.sh     each file's tests in a shuffled order (each file
#                                      prints its seed, `note: shuffled, E2E_SEED=N`;
#                                      E2E_SEED=N replays it). Each test runs on a fresh
#                                      page (tests/e2e/harness.mjs), so any order passes.
#   E2E_USES_WORKER=1 tests/e2e/run.sh   the app given its `Used values` worker whatever
#                                      the cores (as on a machine with 4 or more)
set -euo pipefail
cd "$(dirname "$0")/../.."

TOOLS="${BUFSCOPE_TOOLS:-$HOME/.cache/bufscope-tools}"
export PATH="$HOME/.cargo/bin:$TOOLS/node_modules/.bin:$PATH"
DIST="${E2E_DIST:-target/e2e-dist}"

if [ "$#" -eq 2 ] && ! [ -f "tests/e2e/${2%.test.mjs}.test.mjs" ]; then
  export E2E_TEST="$2"
  set -- "$1"
fi
if [ "$#" -gt 0 ]; then
  files=()
  for name in "$@"; do
    f="tests/e2e/${name%.test.mjs}.test.mjs"
    [ -f "$f" ] || { echo "no $f" >&2; exit 2; }
    files+=("$f")
  done
else
  shopt -s nullglob
  files=(tests/e2e/*.test.mjs)
  shopt -u nullglob
  [ "${#files[@]}" -gt 0 ] || { echo "no tests/e2e/*.test.mjs" >&2; exit 1; }
fi

if [ "${E2E_NO_BUILD:-}" != 1 ]; then
  trunk build --release --features test-hooks --dist "$DIST"
fi
[ -f "$DIST/index.html" ] || { echo "no $DIST/index.html: build first" >&2; exit 1; }

work=$(mktemp -d)
node tests/e2e/serve.mjs "$DIST" 0 >"$work/url" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  [ -s "$work/url" ] && break
  kill -0 "$server" 2>/dev/null || { echo "the static server did not start" >&2; exit 1; }
  sleep 0.1
done
url=$(head -n1 "$work/url")
[ -n "$url" ] || { echo "the static server did not report its address" >&2; exit 1; }

total_passed=0
total_failed=0
total_skipped=0
bad=()
for f in "${files[@]}"; do
  printf '\n== %s\n' "$f"
  status=0
  node "$f" "$url" 2>&1 | tee "$work/out" || status=$?
  closing=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$work/out" | tail -n1 || true)
  if [ -z "$closing" ]; then
    bad+=("$f (no closing line, exit $status)")
    total_failed=$((total_failed + 1))
    continue
  fi
  read -r p _ m _ k _ <<<"${closing//,/}"
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + m))
  total_skipped=$((total_skipped + ${k:-0}))
  if [ "$m" -gt 0 ] || [ "$status" -ne 0 ]; then bad+=("$f ($closing, exit $status)"); fi
  if [ "${k:-0}" -gt 0 ] && [ "${CI:-}" = true ]; then bad+=("$f ($closing: CI=true, and CI must not skip)"); fi
done

echo
for b in "${bad[@]}"; do echo "failed: $b"; done
echo "$total_passed passed, $total_failed failed, $total_skipped skipped"
[ "${#bad[@]}" -eq 0 ]
