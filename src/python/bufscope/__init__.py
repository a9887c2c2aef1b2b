"""bufscope from Python: a viewer for XLA buffer-assignment dumps.

The wheel carries the `bufscope` command-line binary (run it as `bufscope …` or
`python -m bufscope …`); this package calls it:

- `summary(paths)`: `bufscope summary --json` as a dict;
- `sweep(compilations)`: `bufscope sweep --json`, several compilations of one program that
  vary one dimension, as a table of rows (`pandas.DataFrame(table)`) with the whole answer
  in `.answer`;
- `html(paths)`: one self-contained page, the app with the dumps inside (`bufscope html`),
  which opens from disk, offline, and makes no request;
- `show(paths_or_dump)`: that page in a notebook (`_repr_html_`, an `<iframe srcdoc>`; the
  later outputs of a kernel draw their dumps in the app the first one put on the page);
  `show([a, b])` of two `Dump`s: both, under a table of `diff(a, b)`;
- `diff(base, new)`: `bufscope diff --json` as a dict;
- a `Dump` shows itself statically (`_repr_html_`: a table and a PNG, for any viewer);
- `bufscope.jax.dump(fn, *args)`: a dump straight from a jitted function (needs jax:
  `pip install 'bufscope[jax]'`); `bufscope.jax.sweep(fn, make_args, values)`: one per
  value of a dimension, as `sweep` of them.

`paths` is a dump file or folder, or a list of them, or a `Dump`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sysconfig
import tempfile
from typing import Iterable, Union

from bufscope import _notebook

__all__ = ["Dump", "Report", "BufscopeError", "Sweep", "summary", "sweep", "diff", "html", "show", "render_png", "find_bufscope_bin",
           "__version__"]


def _version() -> str:
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # pragma: no cover - Python 3.7
        return "unknown"
    try:
        return version("bufscope")
    except PackageNotFoundError:  # a checkout on sys.path, not installed
        return "unknown"


#: The installed wheel's version, the binary's (`bufscope --version`).
__version__ = _version()

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
    # First `pip install --target DIR`'s DIR/bin, beside this package (absent otherwise): a
    # package on PYTHONPATH runs its own binary, not one an environment below it holds.
    places = [os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "bin"),
              sysconfig.get_path("scripts")]
    user_scheme = {"posix": "posix_user", "nt": "nt_user"}.get(os.name)
    if user_scheme in sysconfig.get_scheme_names():
        places.append(sysconfig.get_path("scripts", scheme=user_scheme))
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
        # picks the dump files (and an `.error.txt`) from it, not the HLO text.
        return [paths.folder] if paths.folder else list(paths.paths)
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    out = [p for item in paths for p in _paths(item)]
    if not out:
        raise ValueError("no dump file or folder given")
    return out


def _run(args: list[str], ok: tuple = (0,)) -> bytes:
    done = subprocess.run([find_bufscope_bin(), *args], capture_output=True)
    if done.returncode not in ok or not done.stdout and done.returncode != 0:
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


def diff(base: Paths, new: Paths, *, max_growth: str | None = None, top: int | None = None) -> dict:
    """`bufscope diff --json BASE NEW`: the modules of the two paired by name, and per memory
    space both peaks, the change and what changed at the peaks. `max_growth` ("5%",
    "64MiB") is reported on, not raised: the binary's exit status 1 is a result here. Each
    side is one dump: a file, a folder, or the files of one module (a `Dump`)."""
    args = ["diff", "--json"]
    if max_growth is not None:
        args += ["--max-growth", str(max_growth)]
    if top is not None:
        args += ["--top", str(int(top))]
    with tempfile.TemporaryDirectory(prefix="bufscope-diff-") as tmp:
        sides = [_one_path(_paths(side), os.path.join(tmp, name)) for side, name in ((base, "base"), (new, "new"))]
        return json.loads(_run([*args, "--", *sides], ok=(0, 1)))


def _one_path(paths: list[str], folder: str) -> str:
    """One path for the binary's `diff`, which takes one a side: a file or folder as it is;
    several files (a `Dump` of one module) as `folder`, made to hold links to them."""
    if len(paths) == 1:
        return paths[0]
    os.mkdir(folder)
    for p in paths:
        link = os.path.join(folder, os.path.basename(p))
        if os.path.isdir(p) or os.path.lexists(link):
            raise ValueError("diff compares one dump (a file, a folder or the files of one module) with another")
        os.symlink(os.path.abspath(p), link)
    return folder


def render_png(paths: Paths, *, width: int = 480, module: str | None = None) -> bytes:
    """`bufscope render --png`: the module's drawing (each memory space's occupied bytes
    and blocks) as a PNG without text."""
    args = ["render", "--png", "-", "--width", str(int(width))]
    if module is not None:
        args += ["--module", module]
    return _run([*args, "--", *_paths(paths)])


class Sweep(list):
    """`bufscope sweep --json` as rows, one per memory space and value: `space`, `value`,
    `peak_live_bytes`, `kind` (`measured` or `predicted`), `failed`, `pinned`;
    `pandas.DataFrame(sweep)` makes it a frame. `.answer` is the whole JSON (`varied`, each
    space's `model`, `largest_fitting`, `first_not_fitting`, `pinned`, `sentence`, categories).
    From `bufscope.jax.sweep`, `.dumps` is the `Dump` of each value and `.folder` theirs."""

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
        self.dumps: list = []
        self.folder: str | None = None

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
    """A page of `html()`, shown in a notebook (`_repr_html_`): the first in a kernel (or
    with `embed=True`) as an `<iframe srcdoc>` holding the app (about 2 MB); the later ones
    hold only their dumps and draw them in the app the first left on the page, else show
    their static view (a table and a PNG). `compare`: a `diff()` shown above the app."""

    def __init__(self, page: str, height: int = DEFAULT_HEIGHT, *, embed: bool | None = None,
                 paths: list | None = None, compare: dict | None = None):
        self.page = page
        self.height = int(height)
        self.embed = embed
        self.paths = paths
        self.compare = compare

    def _repr_html_(self) -> str:
        global _app_on_page
        head = _notebook.diff_view(self.compare) if self.compare is not None else ""
        if self.embed or (self.embed is None and not _app_on_page):
            _app_on_page = True
            return head + _notebook.embedded(self.page, self.height)
        fallback = _static(self.paths, title="bufscope") if self.paths else ""
        return head + _notebook.referencing(self.page, self.height, fallback)

    def save(self, path: PathLike) -> str:
        """Writes the page to `path` (to send, or to open in a browser) and returns it."""
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.page)
        return os.fspath(path)

    def __repr__(self) -> str:
        return f"<bufscope.Report: a page of {len(self.page) // 1024} KiB; save() it or show it in a notebook>"


#: Whether an output of this kernel holds the app (`Report._repr_html_`).
_app_on_page = False


def show(paths_or_dump: Paths, *, height: int = DEFAULT_HEIGHT, embed: bool | None = None) -> Report:
    """The dumps in the app, in the notebook: the diagrams, answers and compare, with no
    server and no network. Outside a notebook, `.save("report.html")` it.

    `show([a, b])` of two `Dump`s: both in the app, under the table of `diff(a, b)`.
    `embed=True` puts the whole app in this output even when an earlier one holds it."""
    compare = None
    if isinstance(paths_or_dump, (list, tuple)) and len(paths_or_dump) == 2 and all(
        isinstance(d, Dump) for d in paths_or_dump
    ):
        compare = diff(*paths_or_dump)
    return Report(html(paths_or_dump), height, embed=embed, paths=_paths(paths_or_dump), compare=compare)


def _static(paths: Paths, *, title: str, error: str | None = None) -> str:
    """The static view of dumps (`_notebook.static_view`); a failure of the binary is shown
    in it, never raised: a notebook's output should not be a traceback."""
    summary_, png, problem = None, None, None
    try:
        summary_ = summary(paths, top=5)
        png = render_png(paths)
    except (BufscopeError, OSError, ValueError) as e:
        problem = str(e)
    return _notebook.static_view(summary_, png, title=title, error=error, problem=problem)


class Dump:
    """Dump files of one or more modules (what `bufscope.jax.dump` returns)."""

    def __init__(self, paths: Iterable[PathLike], *, module: str | None = None, folder: str | None = None):
        self.paths = [os.fspath(p) for p in paths]
        #: The module's name, as XLA named it (`jit_f`), when one was compiled for it.
        self.module = module
        #: The folder the files are in, when bufscope made it.
        self.folder = folder
        #: The compiler's message when the compile failed after buffer assignment (an OOM);
        #: it is also in the folder as `*.error.txt`, which bufscope reads beside the dump.
        self.error: str | None = None

    def summary(self, **options) -> dict:
        return summary(self, **options)

    def html(self) -> str:
        return html(self)

    def show(self, *, height: int = DEFAULT_HEIGHT, embed: bool | None = None) -> Report:
        return show(self, height=height, embed=embed)

    def _repr_html_(self) -> str:
        return _static(self, title=f"bufscope.Dump: {self._what()}", error=self.error)

    def _what(self) -> str:
        what = f"module {self.module}, " if self.module else ""
        where = self.folder or (os.path.dirname(self.paths[0]) if self.paths else "?")
        return f"{what}{len(self.paths)} files in {where}"

    def __repr__(self) -> str:
        failed = f"; the compile failed: {self.error.splitlines()[0]}" if self.error else ""
        return f"<bufscope.Dump: {self._what()}{failed}>"
