#!/usr/bin/env bash
# The Python package's tests (./dev test runs them after `./dev wheel`): the wheel in
# target/wheels installed in a fresh venv with nothing else (test_wheel.py: its `bufscope`,
# `python -m bufscope` and functions against the cargo-built target/debug/bufscope, pages
# opened from file:// in headless Chromium), then with the Python of the venv with JAX for
# the CPU that ./dev setup keeps (BUFSCOPE_JAX_VENV; test_jax.py), the wheel in a folder of
# its own first on PYTHONPATH. Each closes with `N passed, M failed, K skipped`; with
# CI=true a skip fails. XLA_FLAGS is unset: bufscope.jax needs none.
#   tests/python/run.sh      (after ./dev setup and ./dev wheel)
set -euo pipefail
cd "$(dirname "$0")/../.."
unset XLA_FLAGS
TOOLS="${BUFSCOPE_TOOLS:-$HOME/.cache/bufscope-tools}"
export PATH="$TOOLS/node_modules/.bin:$PATH"
export BUFSCOPE_REPO="$PWD" BUFSCOPE_CARGO_BIN="$PWD/target/debug/bufscope"
# ./dev pins the version and exports the venv's path; run alone, the same path.
jax_venv="${BUFSCOPE_JAX_VENV:-$TOOLS/python/jax-$(sed -n 's/^JAX_VERSION=//p' dev)}"
[ -x "$jax_venv/bin/python" ] || { echo "no venv with jax at $jax_venv: run ./dev setup" >&2; exit 1; }
shopt -s nullglob
wheels=(target/wheels/bufscope-*.whl)
[ "${#wheels[@]}" -eq 1 ] || { echo "expected one wheel in target/wheels (./dev wheel), found ${#wheels[@]}" >&2; exit 1; }
wheel="$PWD/${wheels[0]}"
cargo build --locked --quiet

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
start=$(date +%s)
"${BUFSCOPE_PYTHON:-python3}" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --disable-pip-version-check "$wheel"
echo "== the wheel in a fresh venv (installed in $(( $(date +%s) - start )) s)"
(cd "$work" && "$work/venv/bin/python" "$BUFSCOPE_REPO/tests/python/run.py" test_wheel) || status=1

# The venv with jax is shared (other checkouts test their wheels with it): the wheel goes
# into a folder of this run's own, put first on PYTHONPATH, and the venv is left as it is.
"$jax_venv/bin/pip" install --quiet --disable-pip-version-check --no-deps --target "$work/jax-site" "$wheel"
echo "== bufscope.jax with jax $("$jax_venv/bin/python" -c 'import jax; print(jax.__version__)') (CPU)"
(cd "$work" && JAX_PLATFORMS=cpu BUFSCOPE_UNDER_TEST="$work/jax-site" PYTHONPATH="$work/jax-site" \
  "$jax_venv/bin/python" "$BUFSCOPE_REPO/tests/python/run.py" test_jax) || status=1
exit "$status"
