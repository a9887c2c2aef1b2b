"""bufscope.jax with JAX for the CPU from PyPI (the venv tests/python/run.sh keeps, the wheel
installed in it): dumps of two functions in one process, no XLA_FLAGS, each module's peaks
as `bufscope summary --json` of its files gives them; and a persistent-cache hit bypassed."""

import json
import os
import tempfile
import unittest

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
        frame = bufscope.jax.show(mlp, self.x, self.x, self.x, height=640)._repr_html_()
        self.assertTrue(frame.startswith('<iframe srcdoc="'), frame[:80])
        self.assertIn("height: 640px", frame)
        self.assertIn("bufscope-dump-0", frame)


if __name__ == "__main__":
    unittest.main()
