"""bufscope.jax with JAX for the CPU from PyPI (the venv tests/python/run.sh keeps, the wheel
installed in it): dumps of two functions in one process, no XLA_FLAGS, each module's peaks
as `bufscope summary --json` of its files gives them; and a persistent-cache hit bypassed."""

import base64
import json
import os
import re
import tempfile
import unittest
import warnings
from unittest import mock

import jax
import jax.numpy as jnp

import bufscope
import bufscope.jax
from common import cargo

N = 256
# One f32[256,256] array: 262,144 bytes.
ARRAY = N * N * 4


def mlp(x, w1, w2):
    return jnp.tanh(x @ w1) @ w2


def scan_sum(x, n):
    def body(c, _):
        return jnp.sin(c) * 2.0 + c, None

    return jax.lax.scan(body, x, None, length=n)[0].sum()


def peaks(summary: dict) -> dict:
    return {
        m["name"]: [(s["color"], s["peak_live_bytes"]) for s in m["memory_spaces"]]
        for m in summary["modules"]
    }


class Dumps(unittest.TestCase):
    def setUp(self):
        self.assertNotIn("XLA_FLAGS", os.environ, "the point is to need no XLA_FLAGS")
        self.x = jnp.ones((N, N), jnp.float32)

    def test_the_package_and_binary_are_this_wheels(self):
        # run.sh installs the wheel into a folder of its own, first on PYTHONPATH: the
        # venv with jax is shared, and may hold another checkout's bufscope.
        under_test = os.environ.get("BUFSCOPE_UNDER_TEST")
        if not under_test:
            self.skipTest("BUFSCOPE_UNDER_TEST unset: not run by tests/python/run.sh")
        self.assertTrue(bufscope.__file__.startswith(under_test + os.sep), bufscope.__file__)
        self.assertEqual(bufscope.find_bufscope_bin(), os.path.join(under_test, "bin", "bufscope"))

    def test_two_functions_in_one_process_give_two_modules_whose_peaks_the_binary_reads(self):
        a = bufscope.jax.dump(mlp, self.x, self.x, self.x)
        b = bufscope.jax.dump(scan_sum, self.x, 5, static_argnums=1)
        self.assertEqual((a.module, b.module), ("jit_mlp", "jit_scan_sum"))
        self.assertNotEqual(a.folder, b.folder)
        for d in (a, b):
            names = sorted(os.path.basename(p).split(".", 2)[2] for p in d.paths)
            # What bufscope reads, and the HLO text; nothing else is kept.
            self.assertEqual(names, [
                "cpu_after_optimizations-buffer-assignment-values.txt",
                "cpu_after_optimizations-buffer-assignment.txt",
                "cpu_after_optimizations-live-range.txt",
                "cpu_after_optimizations-memory-usage-report.txt",
                "cpu_after_optimizations.txt",
            ])
            self.assertEqual(sorted(os.listdir(d.folder)), sorted(os.path.basename(p) for p in d.paths))
            expected = cargo("summary", "--json", d.folder)
            self.assertEqual(expected.returncode, 0, expected.stderr)
            self.assertEqual(peaks(d.summary()), peaks(json.loads(expected.stdout)))
        (pa,), (pb,) = peaks(a.summary()).values(), peaks(b.summary()).values()
        # mlp: the three parameters (live throughout) and the output are 4 arrays at least,
        # and tanh(x @ w1) adds a fifth at the peak unless XLA writes it over the output.
        self.assertGreaterEqual(pa[0][1], 4 * ARRAY)
        self.assertLessEqual(pa[0][1], 6 * ARRAY)
        # scan_sum: the carry (and its next value) and the parameter; the output is 4 bytes.
        self.assertGreaterEqual(pb[0][1], ARRAY)
        self.assertLess(pb[0][1], pa[0][1])
        # The same function again: a dump of its own, the same peak.
        again = bufscope.jax.dump(mlp, self.x, self.x, self.x)
        self.assertNotEqual(again.folder, a.folder)
        self.assertEqual(list(peaks(again.summary()).values()), [pa])

    def test_dumps_into_a_users_folder_touch_nothing_of_theirs(self):
        with tempfile.TemporaryDirectory() as tmp:
            mine = os.path.join(tmp, "notes.txt")
            with open(mine, "w") as f:
                f.write("keep me")
            os.makedirs(os.path.join(tmp, "src", "pkg"))
            with open(os.path.join(tmp, "src", "pkg", "model.py"), "w") as f:
                f.write("x = 1")
            # XLA's leftovers from an earlier run, which bufscope did not write this time.
            with open(os.path.join(tmp, "module_0001.jit_old.cpu_after_optimizations.txt"), "w") as f:
                f.write("HloModule jit_old")
            before = sorted(os.listdir(tmp))
            a = bufscope.jax.dump(mlp, self.x, self.x, self.x, folder=tmp)
            b = bufscope.jax.dump(mlp, self.x, self.x, self.x, folder=tmp)
            c = bufscope.jax.dump(mlp, self.x, self.x, self.x, folder=tmp, label="lr 1e-3/run")
            with open(mine) as f:
                self.assertEqual(f.read(), "keep me")
            with open(os.path.join(tmp, "src", "pkg", "model.py")) as f:
                self.assertEqual(f.read(), "x = 1")
            # Each dump in a new subfolder of its own, beside what was there.
            subfolders = {a.folder, b.folder, c.folder}
            self.assertEqual(len(subfolders), 3)
            self.assertEqual({os.path.dirname(s) for s in subfolders}, {tmp})
            self.assertEqual(sorted(os.listdir(tmp)), sorted(before + [os.path.basename(s) for s in subfolders]))
            self.assertTrue(os.path.basename(a.folder).startswith("jit_mlp-"), a.folder)
            self.assertEqual(os.path.basename(c.folder), "lr_1e-3_run")
            for d in (a, b, c):
                self.assertEqual(sorted(os.listdir(d.folder)), sorted(os.path.basename(p) for p in d.paths))
                self.assertEqual(len(d.paths), 5)
            self.assertEqual(list(peaks(a.summary()).values()), list(peaks(b.summary()).values()))

    def test_a_persistent_cache_hit_still_dumps(self):
        with tempfile.TemporaryDirectory() as cache:
            old = (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs,
                   jax.config.jax_persistent_cache_min_entry_size_bytes)
            jax.config.update("jax_compilation_cache_dir", cache)
            jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
            jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
            try:
                from jax.experimental.compilation_cache import compilation_cache as cc

                cc.reset_cache()

                def cubed(x):
                    return x * x * x + 1.0

                # Fills the cache: the next compile of the same program would be a hit,
                # since JAX leaves XLA's dump options out of the key.
                jax.jit(cubed).lower(self.x).compile()
                self.assertTrue(os.listdir(cache), "nothing was written to the persistent cache")
                d = bufscope.jax.dump(cubed, self.x)
                self.assertEqual(d.module, "jit_cubed")
                self.assertTrue(any(p.endswith("-buffer-assignment.txt") for p in d.paths))
                # The cache is on again after the dump.
                self.assertTrue(jax.config.jax_enable_compilation_cache)
            finally:
                jax.config.update("jax_compilation_cache_dir", old[0])
                jax.config.update("jax_persistent_cache_min_compile_time_secs", old[1])
                jax.config.update("jax_persistent_cache_min_entry_size_bytes", old[2])
                cc.reset_cache()

    def test_show_gives_the_notebook_view(self):
        frame = bufscope.jax.show(mlp, self.x, self.x, self.x, height=640, embed=True)._repr_html_()
        self.assertTrue(frame.startswith('<iframe id="bufscope-app-'), frame[:80])
        self.assertIn(' srcdoc="', frame)
        self.assertIn("height: 640px", frame)
        self.assertIn("bufscope-dump-0", frame)


# An E1000 message as a TPU compile gives it, with a capacity below mlp's peak (about
# 1.25 MiB on the CPU), so that bufscope judges the peak over it.
OOM = ("RESOURCE_EXHAUSTED: E1000: CompileTimeHbmOom: Ran out of memory on HBM, the total memory "
       "required for HLO temporaries (1.25M) exceeds available HBM (1.00M). HLO module: jit_mlp.")


class FakeOom(Exception):
    """Stands for jaxlib's XlaRuntimeError."""


def compile_then_fail(real):
    """`Lowered.compile` that compiles (XLA writes the dump) and then fails as an
    out-of-memory TPU compile does, after buffer assignment."""
    def compile(self, *args, **kwargs):
        real(self, *args, **kwargs)
        raise FakeOom(OOM)
    return compile


class CompileErrors(unittest.TestCase):
    def setUp(self):
        self.x = jnp.ones((N, N), jnp.float32)

    def test_a_failure_after_buffer_assignment_keeps_the_dump_and_warns(self):
        real = jax.stages.Lowered.compile
        with mock.patch.object(jax.stages.Lowered, "compile", compile_then_fail(real)):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                d = bufscope.jax.dump(mlp, self.x, self.x, self.x)
            with self.assertRaises(bufscope.jax.CompileError) as raised:
                bufscope.jax.dump(mlp, self.x, self.x, self.x, on_error="raise")
        self.assertEqual([w.category for w in caught], [bufscope.jax.CompileErrorWarning])
        self.assertIn("CompileTimeHbmOom", str(caught[0].message))
        self.assertEqual(d.error, OOM)
        self.assertIn("the compile failed: RESOURCE_EXHAUSTED: E1000", repr(d))
        # Beside the dump as its module's `.error.txt`, which bufscope reads as its OOM message.
        errors = [p for p in d.paths if p.endswith(".error.txt")]
        self.assertEqual(len(errors), 1)
        self.assertTrue(os.path.basename(errors[0]).startswith("module_"), errors)
        s = d.summary()
        self.assertEqual([(m["module"], m["code"]) for m in s["oom_messages"]], [("jit_mlp", "E1000")])
        cap = s["modules"][0]["memory_spaces"][0]["answers"]["capacity"]
        self.assertFalse(cap["fits"], cap)
        self.assertIn("from the error message", cap["sentence"])
        # The static view says it too.
        view = d._repr_html_()
        self.assertIn("CompileTimeHbmOom", view)
        self.assertIn(html_escape(cap["sentence"]), view)
        # on_error="raise": the same dump, on the exception, caused by the compiler's.
        self.assertIsInstance(raised.exception.__cause__, FakeOom)
        self.assertEqual(raised.exception.dump.error, OOM)
        self.assertNotEqual(raised.exception.dump.folder, d.folder)
        self.assertTrue(os.path.exists(raised.exception.dump.paths[0]))

    def test_a_failure_before_buffer_assignment_raises_it(self):
        def fail(self, *args, **kwargs):
            raise FakeOom("INVALID_ARGUMENT: before any buffer assignment")

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(jax.stages.Lowered, "compile", fail):
            with self.assertRaises(FakeOom):
                bufscope.jax.dump(mlp, self.x, self.x, self.x, folder=tmp)
            # The subfolder it made for the dump went with it; nothing else was there.
            self.assertEqual(os.listdir(tmp), [])

    def test_what_is_no_function_is_a_type_error_saying_so(self):
        lowered = jax.jit(mlp).lower(self.x, self.x, self.x)
        for wrong, words in (
            (5, "not int"),
            ("mlp", "not str"),
            (lowered, "not a jax.stages.Lowered"),
            (lowered.compile(), "not a jax.stages.Compiled"),
        ):
            with self.assertRaises(TypeError) as caught:
                bufscope.jax.dump(wrong, self.x)
            self.assertIn(words, str(caught.exception))
        with self.assertRaises(ValueError):
            bufscope.jax.dump(mlp, self.x, self.x, self.x, on_error="ignore")


def wide(x, w):
    """A batch of rows through a 512×64 weight and back: x and the output grow with the
    batch, the weight (131,072 bytes) does not."""
    h = jnp.tanh(x @ w)
    return (h * h.sum(axis=0)) @ w.T


def wide_args(batch):
    return (jax.ShapeDtypeStruct((batch, 512), jnp.float32), jax.ShapeDtypeStruct((512, 64), jnp.float32))


BATCHES = [64, 128, 256]


class Sweeps(unittest.TestCase):
    def test_a_sweep_over_three_batch_sizes_is_bufscope_sweep_of_its_dumps(self):
        with tempfile.TemporaryDirectory() as tmp:
            s = bufscope.jax.sweep(wide, wide_args, BATCHES, folder=tmp, at=[512])
            folders = [d.folder for d in s.dumps]
            self.assertEqual(s.folder, tmp)
            self.assertEqual([os.path.basename(f) for f in folders], [f"wide-{b}" for b in BATCHES])
            self.assertEqual(sorted(os.listdir(tmp)), sorted(os.path.basename(f) for f in folders))
            for d in s.dumps:
                self.assertEqual(d.module, "jit_wide")
                self.assertEqual(sorted(os.listdir(d.folder)), sorted(os.path.basename(p) for p in d.paths))
                self.assertTrue(any(p.endswith("-buffer-assignment.txt") for p in d.paths), d.paths)
            self.assertEqual(s.varied, {"what": "parameter x, dim 0", "values": BATCHES})
            # The same answer as the package's sweep and the cargo-built binary's of the folders.
            self.assertEqual(s.answer, bufscope.sweep(folders, at=[512]).answer)
            expected = cargo("sweep", "--json", "--at", "512", *folders)
            self.assertEqual(expected.returncode, 0, expected.stderr)
            self.assertEqual(s.answer, json.loads(expected.stdout))
            (space,) = s.answer["spaces"]
            # The weight, and per row of the batch x and the output (512 f32 each).
            model = space["model"]
            self.assertEqual(model["form"], "linear")
            self.assertAlmostEqual(model["coefficients"][0], 512 * 64 * 4, delta=1)
            self.assertAlmostEqual(model["coefficients"][1], 2 * 512 * 4, delta=1e-6)
            self.assertEqual([p["peak_live_bytes"] for p in space["points"]], [512 * 64 * 4 + 4096 * b for b in BATCHES])
            self.assertEqual(space["at"], [{"value": 512, "peak_live_bytes": 512 * 64 * 4 + 4096 * 512}])
            self.assertEqual([(r["value"], r["kind"]) for r in s], [(b, "measured") for b in BATCHES] + [(512, "predicted")])

    def test_a_point_out_of_memory_is_kept_as_one_that_does_not_fit(self):
        real = jax.stages.Lowered.compile
        calls = []

        def third_fails(self, *args, **kwargs):
            calls.append(1)
            return (compile_then_fail(real) if len(calls) % 3 == 0 else real)(self, *args, **kwargs)

        with mock.patch.object(jax.stages.Lowered, "compile", third_fails):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                s = bufscope.jax.sweep(wide, wide_args, BATCHES, capacity="1MiB")
                quiet = bufscope.jax.sweep(wide, wide_args, BATCHES, capacity="1MiB", on_error="keep")
            with self.assertRaises(bufscope.jax.CompileError):
                bufscope.jax.sweep(wide, wide_args, BATCHES, on_error="raise")
        self.assertEqual([w.category for w in caught], [bufscope.jax.CompileErrorWarning])
        self.assertIn("value 256", str(caught[0].message))
        self.assertEqual([d.error for d in s.dumps], [None, None, OOM])
        self.assertTrue(os.path.exists(os.path.join(s.dumps[2].folder, os.path.basename(s.dumps[2].paths[0]))))
        (space,) = s.answer["spaces"]
        self.assertEqual([p["failed"] for p in space["points"]], [False, False, True])
        # 128 compiled and 256 did not; between, the line (exact here) crosses 1 MiB at 224.
        self.assertEqual((space["largest_fitting"], space["first_not_fitting"]), ((2**20 - 512 * 64 * 4) // 4096, 225))
        self.assertEqual(s.answer, bufscope.sweep([d.folder for d in s.dumps], capacity="1MiB").answer)
        self.assertEqual(quiet.answer["spaces"][0]["points"], space["points"])

    def test_wrong_arguments_say_so(self):
        with self.assertRaises(ValueError):
            bufscope.jax.sweep(wide, wide_args, [64])
        with self.assertRaises(ValueError):
            bufscope.jax.sweep(wide, wide_args, BATCHES, on_error="ignore")
        # Nothing varies: the binary says so, naming no dimension.
        with self.assertRaises(bufscope.BufscopeError) as caught:
            bufscope.jax.sweep(wide, lambda b: wide_args(64), BATCHES)
        self.assertIn("nothing varies", str(caught.exception))

    def test_a_failure_before_buffer_assignment_raises_naming_the_value(self):
        def fail(self, *args, **kwargs):
            raise FakeOom("INVALID_ARGUMENT: before any buffer assignment")

        with tempfile.TemporaryDirectory() as tmp, mock.patch.object(jax.stages.Lowered, "compile", fail):
            with self.assertRaises(FakeOom) as caught:
                bufscope.jax.sweep(wide, wide_args, BATCHES, folder=tmp, label="w")
            self.assertEqual(os.listdir(tmp), [])
        if hasattr(caught.exception, "add_note"):  # Python 3.11
            self.assertEqual(caught.exception.__notes__, ["bufscope.jax.sweep: compiling w for the value 64"])


class StaticView(unittest.TestCase):
    def test_a_dumps_static_view_has_its_peaks_and_a_png(self):
        x = jnp.ones((N, N), jnp.float32)
        d = bufscope.jax.dump(mlp, x, x, x)
        view = d._repr_html_()
        (space,) = d.summary()["modules"][0]["memory_spaces"]
        self.assertIn("<table", view)
        self.assertIn(bufscope._notebook._bytes(space["peak_live_bytes"]), view)
        self.assertIn(f">{space['peak_time']}<", view)
        groups = space["answers"]["op_name_groups"]
        self.assertTrue(groups)
        self.assertIn(html_escape(groups[0]["path"]), view)
        png = base64.b64decode(re.search(r'src="data:image/png;base64,([^"]+)"', view).group(1))
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertLess(len(png), 64 * 1024)
        # No script: what an untrusted notebook, GitHub or nbviewer show whole.
        self.assertNotIn("<script", view)


def html_escape(text: str) -> str:
    import html

    return html.escape(text, quote=True)


if __name__ == "__main__":
    unittest.main()
