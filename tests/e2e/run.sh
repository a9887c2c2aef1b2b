#!/usr/bin/env bash
# Browser tests: builds the app with Trunk, serves it on 127.0.0.1 (a free port), runs
# tests/e2e/app.test.mjs in headless Chromium, stops the server. Exits non-zero on failure.
#   tests/e2e/run.sh            build, then test
#   E2E_NO_BUILD=1 tests/e2e/run.sh   test the dist already in target/e2e-dist
set -euo pipefail
cd "$(dirname "$0")/../.."

TOOLS="${BUFSCOPE_TOOLS:-$HOME/.cache/bufscope-tools}"
export PATH="$HOME/.cargo/bin:$TOOLS/node_modules/.bin:$PATH"
DIST=target/e2e-dist

if [ "${E2E_NO_BUILD:-}" != 1 ]; then
  trunk build --release --dist "$DIST"
fi
[ -f "$DIST/index.html" ] || { echo "no $DIST/index.html: build first" >&2; exit 1; }

url_file=$(mktemp)
node tests/e2e/serve.mjs "$DIST" 0 >"$url_file" &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -f "$url_file"' EXIT
for _ in $(seq 100); do
  [ -s "$url_file" ] && break
  kill -0 "$server" 2>/dev/null || { echo "the static server did not start" >&2; exit 1; }
  sleep 0.1
done
url=$(head -n1 "$url_file")
[ -n "$url" ] || { echo "the static server did not report its address" >&2; exit 1; }

node tests/e2e/app.test.mjs "$url"
