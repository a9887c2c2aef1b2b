"""What the Python tests share: where the repo, the shared dumps and the cargo-built binary
are (tests/python/run.sh sets them), the SKIPPED-or-fail rule for ../shared, and pages opened
in headless Chromium through open_page.mjs."""

import json
import os
import subprocess
import unittest

REPO = os.environ.get("BUFSCOPE_REPO") or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.environ.get("BUFSCOPE_SHARED") or os.path.join(os.path.dirname(REPO), "shared")
#: The binary cargo built from this checkout (not the wheel's), to compare with.
CARGO_BIN = os.environ.get("BUFSCOPE_CARGO_BIN") or os.path.join(REPO, "target", "debug", "bufscope")
ARTIFACTS = os.path.join(REPO, "tests", "artifacts")
TPU_AOT = os.path.join(SHARED, "dumps", "tpu-aot", "jax0.12-libtpu0.0.50")


def needs_shared(test: unittest.TestCase, path: str) -> str:
    """`path` when it is there; else SKIPPED (a failure under CI=true, which has ../shared)."""
    if os.path.exists(path):
        return path
    line = f"SKIPPED: {test.id()}: needs {path}"
    if os.environ.get("CI") == "true":
        test.fail(f"{line}, and CI=true: CI must not skip it")
    print(line, flush=True)
    test.skipTest(line)


def stem_files(folder: str, stem: str) -> list:
    """The files of one module of the TPU-AOT folder that bufscope reads (no HLO text)."""
    ends = (".buffer-assignment.txt", ".buffer-assignment-values.txt", ".live-range.txt", ".memory-usage-report.txt")
    return sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.startswith(stem + ".") and f.endswith(ends))


def cargo(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CARGO_BIN, *args], capture_output=True)


def open_page(path: str, module: str, shot: str) -> dict:
    """What headless Chromium showed of the page at `path`, opened from file://."""
    os.makedirs(ARTIFACTS, exist_ok=True)
    url = "file://" + os.path.abspath(path)
    done = subprocess.run(
        ["node", os.path.join(REPO, "tests", "python", "open_page.mjs"), url, module, os.path.join(ARTIFACTS, shot)],
        capture_output=True, text=True, timeout=180,
    )
    lines = [l for l in done.stdout.splitlines() if l.startswith("{")]
    if done.returncode != 0 or not lines:
        raise AssertionError(f"open_page.mjs failed ({done.returncode}): {done.stdout}\n{done.stderr}")
    return json.loads(lines[-1])
