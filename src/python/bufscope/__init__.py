"""bufscope from Python: a viewer for XLA buffer-assignment dumps.

The wheel carries the `bufscope` command-line binary (run it as `bufscope …` or
`python -m bufscope …`); this package calls it:

- `summary(paths)`: `bufscope summary --json` as a dict;
- `sweep(compilations)`: `bufscope sweep --json`, several compilations of one program that
  vary one dimension, as a table of rows (`pandas.DataFrame(table)`) with the whole answer
  in `.answer`;
- `html(paths)`: one self-contained page, the app with the dumps inside (`bufscope html`),
  which opens from disk, offline, and makes no request;
- `show(paths_or_dump)`: that page in a notebook (`_repr_html_`, an `<iframe srcdoc>`);
- `bufscope.jax.dump(fn, *args)`: a dump straight from a jitted function (needs jax:
  `pip install 'bufscope[jax]'`).

`paths` is a dump file or folder, or a list of them, or a `Dump`.
"""

from __future__ import annotations

import html as _html
import json
import os
import subprocess
import sysconfig
from typing import Iterable, Union

__all__ = ["Dump", "Report", "BufscopeError", "Sweep", "summary", "sweep", "html", "show", "find_bufscope_bin"]

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Iterable[PathLike], "Dump"]

#: The notebook view's height in CSS pixels unless `show(..., height=)` says otherwise: the
#: module's bar, its diagrams and the top of the dock below them.
DEFAULT_HEIGHT = 760


class BufscopeError(RuntimeError):
    """The binary failed: what it said on stderr."""


def find_bufscope_bin() -> str:
    """The `bufscope` binary this package was installed with (the wheel's script)."""
    exe = "bufscope" + (sysconfig.get_config_var("EXE") or "")
    places = [sysconfig.get_path("scripts")]
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme in sysconfig.get_scheme_names():
        places.append(sysconfig.get_path("scripts", scheme=user_scheme))
    # `pip install --target DIR` puts scripts in DIR/bin, beside the package.
    places.append(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"))
    for place in places:
        candidate = os.path.join(place, exe)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(
        f"the bufscope binary is not where pip installs it ({', '.join(places)}): "
        "reinstall with `pip install --force-reinstall bufscope`"
    )


def _paths(paths: Paths) -> list[str]:
    if isinstance(paths, Dump):
        # Its folder, when bufscope made it, holds this module's files alone: the binary
        # picks the dump files from it (not the HLO text, read by name only).
        return [paths.folder] if paths.folder else list(paths.paths)
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    out = [os.fspath(p) for p in paths]
    if not out:
        raise ValueError("no dump file or folder given")
    return out


def _run(args: list[str]) -> bytes:
    done = subprocess.run([find_bufscope_bin(), *args], capture_output=True)
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()
        raise BufscopeError(message or f"bufscope {args[0]} exited with {done.returncode}")
    return done.stdout


def summary(paths: Paths, *, capacity: str | None = None, top: int | None = None) -> dict:
    """`bufscope summary --json` of the dump files or folders: every module's key figures,
    per memory space its peak and what the live bytes there are made of."""
    args = ["summary", "--json"]
    if capacity is not None:
        args += ["--capacity", str(capacity)]
    if top is not None:
        args += ["--top", str(int(top))]
    return json.loads(_run([*args, "--", *_paths(paths)]))


class Sweep(list):
    """`bufscope sweep --json` as rows, one per memory space and value: `space`, `value`,
    `peak_live_bytes`, `kind` (`measured` or `predicted`), `failed`, `pinned`;
    `pandas.DataFrame(sweep)` makes it a frame. `.answer` is the whole JSON (`varied`, each
    space's `model`, `largest_fitting`, `first_not_fitting`, `pinned`, `sentence`, categories)."""

    def __init__(self, answer: dict):
        rows = []
        for space in answer.get("spaces", []):
            for p in space["points"]:
                rows.append({"space": space["label"], "value": p["value"], "peak_live_bytes": p["peak_live_bytes"],
                             "kind": "measured", "failed": p["failed"], "pinned": p["pinned"]})
            for p in space["at"]:
                rows.append({"space": space["label"], "value": p["value"], "peak_live_bytes": p["peak_live_bytes"],
                             "kind": "predicted", "failed": False, "pinned": False})
        super().__init__(rows)
        self.answer = answer

    @property
    def varied(self) -> dict:
        """`{"what": "parameter tokens, dim 0", "values": [...]}`."""
        return self.answer["varied"]


def sweep(compilations: Iterable[PathLike], *, capacity: str | None = None, at: Iterable[int] = ()) -> Sweep:
    """`bufscope sweep --json`: each of `compilations` one compile of the same program (a dump
    folder, or a dump file with its run's files beside it); the one dimension they vary, each
    memory space's peak fitted against it, predicted at each of `at`, and with `capacity`
    (`"v5e"`, `"16GiB"`) the largest value that fits. Two dimensions varying raise
    `BufscopeError` naming both."""
    args = ["sweep", "--json"]
    if capacity is not None:
        args += ["--capacity", str(capacity)]
    for v in at:
        args += ["--at", str(int(v))]
    return Sweep(json.loads(_run([*args, "--", *_paths(compilations)])))


def html(paths: Paths) -> str:
    """One self-contained page (`bufscope html`): the app with the dumps inside, opening
    straight on them, from disk or an e-mail, offline, making no request."""
    return _run(["html", "-o", "-", "--", *_paths(paths)]).decode("utf-8")


class Report:
    """A page of `html()`, shown in a notebook as an `<iframe srcdoc>` (`_repr_html_`)."""

    def __init__(self, page: str, height: int = DEFAULT_HEIGHT):
        self.page = page
        self.height = int(height)

    def _repr_html_(self) -> str:
        return (
            f'<iframe srcdoc="{_html.escape(self.page, quote=True)}" title="bufscope" '
            f'style="width: 100%; height: {self.height}px; border: 1px solid #8884; '
            f'border-radius: 4px" allow="clipboard-write"></iframe>'
        )

    def save(self, path: PathLike) -> str:
        """Writes the page to `path` (to send, or to open in a browser) and returns it."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.page)
        return os.fspath(path)

    def __repr__(self) -> str:
        return f"<bufscope.Report: a page of {len(self.page) // 1024} KiB; save() it or show it in a notebook>"


def show(paths_or_dump: Paths, *, height: int = DEFAULT_HEIGHT) -> Report:
    """The dumps in the app, in the notebook: the diagrams, answers and compare, with no
    server and no network. Outside a notebook, `.save("report.html")` it."""
    return Report(html(paths_or_dump), height)


class Dump:
    """Dump files of one or more modules (what `bufscope.jax.dump` returns)."""

    def __init__(self, paths: Iterable[PathLike], *, module: str | None = None, folder: str | None = None):
        self.paths = [os.fspath(p) for p in paths]
        #: The module's name, as XLA named it (`jit_f`), when one was compiled for it.
        self.module = module
        #: The folder the files are in, when bufscope made it.
        self.folder = folder
        #: The compiler's message when the compile failed after buffer assignment (an OOM).
        self.error: str | None = None

    def summary(self, **options) -> dict:
        return summary(self, **options)

    def html(self) -> str:
        return html(self)

    def show(self, *, height: int = DEFAULT_HEIGHT) -> Report:
        return show(self, height=height)

    def __repr__(self) -> str:
        what = f"module {self.module}, " if self.module else ""
        return f"<bufscope.Dump: {what}{len(self.paths)} files in {self.folder or os.path.dirname(self.paths[0])}>"
