"""The wheel, installed in a fresh venv with nothing else (tests/python/run.sh): its
`bufscope` script, `python -m bufscope` and the package's functions against the binary
cargo built from the same checkout, on the shared TPU dumps; its pages opened from file://
in headless Chromium."""

import html
import json
import os
import re
import subprocess
import sys
import sysconfig
import tempfile
import unittest

import bufscope
from common import ARTIFACTS, TPU_AOT, cargo, needs_shared, open_page, stem_files

# The seven runs of tpu-aot/jax0.12-libtpu0.0.50 (its README), one module each.
TPU_MODULES = {
    "tpu_v5e_host_offload",
    "tpu_v5e_lm_scan_remat",
    "tpu_v5e_lm_scan_remat_OOM",
    "tpu_v5e_lm_unrolled",
    "tpu_v5e_pallas_matmul",
    "tpu_v5e_tiny_matmul",
    "tpu_v6e_lm_scan_remat",
}


def script(*args: str) -> subprocess.CompletedProcess:
    """The wheel's `bufscope` as a shell finds it in the venv."""
    return subprocess.run([os.path.join(sysconfig.get_path("scripts"), "bufscope"), *args], capture_output=True)


def module_m(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "bufscope", *args], capture_output=True)


def open_in_notebook(outputs: list, module: str, shot: str) -> dict:
    """`open_page` of a page laid out as a notebook with these outputs, one after another."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "notebook.html")
        with open(out, "w", encoding="utf-8") as f:
            f.write("<!doctype html><meta charset=utf-8><title>a notebook</title>")
            f.write("".join(f"<h1>Out[{i + 1}]:</h1>{o}" for i, o in enumerate(outputs)))
        return open_page(out, module, shot)


class Installed(unittest.TestCase):
    def test_the_binary_is_the_wheels_script_in_this_venv(self):
        found = bufscope.find_bufscope_bin()
        self.assertEqual(os.path.dirname(found), sysconfig.get_path("scripts"))
        self.assertTrue(found.startswith(sys.prefix), f"{found} is outside the venv {sys.prefix}")
        # The package came from the wheel, not from the checkout.
        self.assertTrue(bufscope.__file__.startswith(sys.prefix), bufscope.__file__)
        for run in (script, module_m):
            version = run("--version")
            self.assertEqual(version.returncode, 0, version.stderr)
            self.assertEqual(version.stdout, cargo("--version").stdout)

    def test_without_jax_bufscope_jax_says_how_to_get_it(self):
        with self.assertRaises(ImportError) as caught:
            import bufscope.jax  # noqa: F401
        self.assertIn("pip install 'bufscope[jax]'", str(caught.exception))

    def test_a_missing_file_is_an_error_with_the_binarys_sentence(self):
        with self.assertRaises(bufscope.BufscopeError) as caught:
            bufscope.summary("/nonexistent/bufscope/dump.txt")
        self.assertIn("/nonexistent/bufscope/dump.txt", str(caught.exception))
        # Exit codes pass through `python -m bufscope`: 1 nothing to show, 2 wrong arguments.
        self.assertEqual(module_m("summary", "/nonexistent/bufscope/dump.txt").returncode, 1)
        self.assertEqual(module_m("frobnicate").returncode, 2)


class AgreesWithCargo(unittest.TestCase):
    def test_summary_of_the_tpu_folder(self):
        folder = needs_shared(self, TPU_AOT)
        expected = cargo("summary", "--json", folder)
        self.assertEqual(expected.returncode, 0, expected.stderr)
        parsed = json.loads(expected.stdout)
        self.assertEqual({m["name"] for m in parsed["modules"]}, TPU_MODULES)
        for run in (script, module_m):
            got = run("summary", "--json", folder)
            self.assertEqual(got.returncode, 0, got.stderr)
            self.assertEqual(got.stdout, expected.stdout, run.__name__)
        self.assertEqual(bufscope.summary(folder), parsed)
        # Tables too, and `--capacity` through the keyword.
        self.assertEqual(script("summary", folder).stdout, cargo("summary", folder).stdout)
        self.assertEqual(
            bufscope.summary(folder, capacity="v5e"), json.loads(cargo("summary", "--json", "--capacity", "v5e", folder).stdout)
        )

    def test_diff_of_two_jax_and_libtpu_versions_and_its_gate(self):
        old = needs_shared(self, os.path.join(os.path.dirname(TPU_AOT), "jax0.6.2-libtpu0.0.17"))
        new = needs_shared(self, TPU_AOT)
        for args, code in (
            (["diff", "--json", old, new], 0),
            # Some peak grew between the versions: the gate at 0 bytes trips (exit 1).
            (["diff", "--max-growth", "0", "--top", "3", old, new], 1),
        ):
            expected = cargo(*args)
            self.assertTrue(expected.stdout.strip(), expected.stderr)
            self.assertEqual(expected.returncode, code, expected.stderr)
            for run in (script, module_m):
                got = run(*args)
                self.assertEqual((got.returncode, got.stdout), (expected.returncode, expected.stdout), run.__name__)
        # Both runs of jax 0.6.2 are paired by name with their jax 0.12 runs.
        pairs = {(m["base_name"], m["new_name"]) for m in json.loads(cargo("diff", "--json", old, new).stdout)["modules"]}
        self.assertEqual(pairs, {(n, n) for n in ("tpu_v5e_lm_scan_remat", "tpu_v5e_lm_scan_remat_OOM")})

    def test_sweep_is_a_table_of_the_binarys_answer(self):
        aot = os.path.dirname(TPU_AOT)
        b8 = needs_shared(self, os.path.join(aot, "remat-ladder", "tpu_v5e_lm_scan_remat_b8.buffer-assignment.txt"))
        b16 = os.path.join(TPU_AOT, "tpu_v5e_lm_scan_remat.buffer-assignment.txt")
        expected = cargo("sweep", "--json", "--capacity", "v5e", "--at", "64", b8, b16)
        self.assertEqual(expected.returncode, 0, expected.stderr)
        table = bufscope.sweep([b8, b16], capacity="v5e", at=[64])
        self.assertEqual(table.answer, json.loads(expected.stdout))
        self.assertEqual(table.varied, {"what": "parameter tokens, dim 0", "values": [4, 8]})
        hbm = [r for r in table if r["space"] == "0 default (HBM)"]
        self.assertEqual([(r["value"], r["kind"]) for r in hbm], [(4, "measured"), (8, "measured"), (64, "predicted")])
        self.assertEqual(hbm[0]["peak_live_bytes"], 1_651_259_392)
        # Two dimensions varying: the binary's sentence naming both.
        s512 = os.path.join(aot, "turn4", "tpu_v5e_lm_scan_remat_s512.buffer-assignment.txt")
        with self.assertRaises(bufscope.BufscopeError) as caught:
            bufscope.sweep([b8, b16, s512])
        self.assertIn("two dimensions vary", str(caught.exception))


class Pages(unittest.TestCase):
    def dump(self):
        return stem_files(needs_shared(self, TPU_AOT), "tpu_v5e_lm_scan_remat")

    def test_html_opens_from_file_draws_and_makes_no_request(self):
        files = self.dump()
        page = bufscope.html(files)
        # The dump is inside: one data block per file, and the page's own policy.
        self.assertEqual(len(re.findall(r'<script type="application/gzip" id="bufscope-dump-\d+"', page)), 4)
        self.assertIn("connect-src 'none'", page)
        self.assertIn("<title>tpu_v5e_lm_scan_remat · bufscope</title>", page)
        # The same page as the command line writes.
        with tempfile.TemporaryDirectory() as tmp:
            out = os.path.join(tmp, "report.html")
            written = script("html", *files, "-o", out)
            self.assertEqual(written.returncode, 0, written.stderr)
            with open(out, encoding="utf-8") as f:
                self.assertEqual(f.read(), page)
            seen = open_page(out, "tpu_v5e_lm_scan_remat", "python-html-report.png")
        self.assertEqual(seen["errors"], [])
        self.assertEqual(seen["module"], "tpu_v5e_lm_scan_remat")
        self.assertGreater(seen["ink"], 0.02, "the HBM diagram is nearly blank")
        self.assertEqual(seen["requests"], [], "the page made requests")

    def test_show_renders_in_a_notebook_like_page(self):
        report = bufscope.show(self.dump(), height=700, embed=True)
        frame = report._repr_html_()
        m = re.fullmatch(r'<iframe id="bufscope-app-[0-9a-f]+-\d+" srcdoc="([^"]*)" title="bufscope" style="width: 100%; height: 700px;[^"]*"[^>]*></iframe><script>[^<]*</script>', frame)
        self.assertIsNotNone(m, frame[:300])
        self.assertEqual(html.unescape(m.group(1)), report.page)
        seen = open_in_notebook([frame], "tpu_v5e_lm_scan_remat", "python-show-iframe.png")
        self.assertEqual(seen["errors"], [])
        self.assertEqual(seen["frames"], 2, "the app is not in an iframe")
        self.assertEqual(seen["module"], "tpu_v5e_lm_scan_remat")
        self.assertGreater(seen["ink"], 0.02, "the HBM diagram is nearly blank")
        self.assertEqual(seen["requests"], [], "the page made requests")

    def test_a_later_show_holds_its_dumps_only_and_draws_them_in_the_first_ones_app(self):
        folder = needs_shared(self, TPU_AOT)
        bufscope._app_on_page = False  # a fresh kernel
        first = bufscope.show(self.dump())._repr_html_()
        second = bufscope.show(stem_files(folder, "tpu_v5e_pallas_matmul"))._repr_html_()
        again = bufscope.show(stem_files(folder, "tpu_v5e_pallas_matmul"), embed=True)._repr_html_()
        size = lambda out: len(out.encode("utf-8"))  # noqa: E731 - bytes, as a notebook file holds them
        print(f"show() output sizes: first {size(first):,} B, second {size(second):,} B, "
              f"second with embed=True {size(again):,} B", flush=True)
        self.assertIn('id="bufscope-wasm"', html.unescape(first))
        self.assertNotIn("bufscope-wasm", second)
        self.assertIn("bufscope-wasm", html.unescape(again))
        # The second holds its dumps and its static view, not the app again.
        self.assertLess(len(second), len(again) - 1_000_000)
        self.assertIn("data:image/png;base64,", second)
        seen = open_in_notebook([first, second], "tpu_v5e_pallas_matmul", "python-show-second.png")
        # Where no earlier output left the app (scripts off, another kernel): the static view.
        fallback = open_in_notebook([second], "tpu_v5e_pallas_matmul", "python-show-fallback.png")
        self.assertEqual(seen["errors"], [])
        self.assertEqual(seen["frames"], 3, "both outputs should draw the app")
        self.assertEqual(seen["module"], "tpu_v5e_pallas_matmul")
        self.assertEqual(seen["title"], "tpu_v5e_pallas_matmul · bufscope")
        self.assertGreater(seen["ink"], 0.005, "the second output's HBM diagram is blank")
        self.assertEqual(seen["requests"], [], "the page made requests")
        self.assertEqual(fallback["frames"], 1)
        self.assertIsNone(fallback["module"])

    def test_show_of_two_dumps_compares_them(self):
        old = needs_shared(self, os.path.join(os.path.dirname(TPU_AOT), "jax0.6.2-libtpu0.0.17"))
        a = bufscope.Dump(stem_files(old, "tpu_v5e_lm_scan_remat"))
        b = bufscope.Dump(stem_files(TPU_AOT, "tpu_v5e_lm_scan_remat"))
        expected = json.loads(cargo("diff", "--json", old, TPU_AOT).stdout)
        d = bufscope.diff(a, b)
        # The figures of the folders' diff for this module (not its source lines: the
        # folders hold the HLO text, these Dumps only the four dump files).
        def figures(modules):
            return [[{k: v for k, v in s.items() if k not in ("changes", "groups", "one_side")} for s in m["spaces"]]
                    for m in modules]

        self.assertEqual(figures(d["modules"]),
                         figures([m for m in expected["modules"] if m["base_name"] == "tpu_v5e_lm_scan_remat"]))
        self.assertEqual(len(d["modules"][0]["spaces"]), 4)
        report = bufscope.show([a, b], embed=True)
        self.assertEqual(report.compare, d)
        view = report._repr_html_()
        self.assertLess(view.index("base peak"), view.index("<iframe"))
        space0 = d["modules"][0]["spaces"][0]
        self.assertIn(bufscope._notebook._bytes(space0["new_peak_bytes"]), view)
        # Both dumps are in the page, each file once: libtpu 0.0.17 wrote two files for the
        # module (no values, no live ranges), 0.0.50 four.
        self.assertEqual((len(a.paths), len(b.paths)), (2, 4))
        self.assertEqual(len(re.findall(r'id="bufscope-dump-\d+"', report.page)), 6)
        # A side is one dump: two folders are not.
        with self.assertRaises(ValueError):
            bufscope.diff([old, TPU_AOT], b)
        # A growth gate is a result here, not an error.
        self.assertIn("modules", bufscope.diff(old, TPU_AOT, max_growth="0"))


class StaticView(unittest.TestCase):
    def test_an_oom_dumps_static_view_has_the_capacity_verdict_and_the_message(self):
        folder = needs_shared(self, TPU_AOT)
        files = stem_files(folder, "tpu_v5e_lm_scan_remat_OOM") + [os.path.join(folder, "tpu_v5e_lm_scan_remat_OOM.error.txt")]
        d = bufscope.Dump(files)
        with open(files[-1], encoding="utf-8") as f:
            d.error = f.read().strip()
        view = d._repr_html_()
        cap = bufscope.summary(files)["modules"][0]["memory_spaces"][0]["answers"]["capacity"]
        self.assertFalse(cap["fits"])
        self.assertIn(html.escape(cap["sentence"]), view)
        self.assertIn("CompileTimeHbmOom", view)
        self.assertIn("the compile failed: RESOURCE_EXHAUSTED", repr(d))
        self.assertNotIn("<script", view)
        self.assertEqual(bufscope.render_png(files)[:8], b"\x89PNG\r\n\x1a\n")


class Metadata(unittest.TestCase):
    def test_version_and_metadata(self):
        from importlib.metadata import metadata

        self.assertEqual(f"bufscope {bufscope.__version__}\n".encode(), cargo("--version").stdout)
        meta = metadata("bufscope")
        self.assertEqual(meta["Version"], bufscope.__version__)
        self.assertTrue(meta["Summary"].startswith("Viewer for XLA buffer-assignment dumps"), meta["Summary"])
        self.assertEqual(meta.get("License-Expression") or meta.get("License"), "Apache-2.0")
        self.assertEqual(meta["Requires-Python"], ">=3.9")
        self.assertIn("Framework :: Jupyter", meta.get_all("Classifier"))
        self.assertEqual(meta.get_all("Provides-Extra"), ["jax"])
        (jax,) = meta.get_all("Requires-Dist")
        self.assertRegex(jax.replace(" ", ""), r'^jax(>=0\.4\.30,<0\.13|<0\.13,>=0\.4\.30);extra==(["\'])jax\2$')


if __name__ == "__main__":
    unittest.main()
