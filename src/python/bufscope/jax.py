"""A dump straight from a jitted function, with no `XLA_FLAGS` and no new process.

    import bufscope.jax
    d = bufscope.jax.dump(train_step, params, batch)   # compiles, dumps, picks the module
    d.summary()["modules"][0]["memory_spaces"][0]["peak_live_bytes"]
    d.show()                                           # in a notebook
    s = bufscope.jax.sweep(train_step, lambda b: (params, batch_of(b)), [8, 16, 32])
    s.answer["spaces"][0]["model"]                     # the peak as a form of the batch

`dump` lowers `jax.jit(fn, …)` for the arguments (arrays, or `jax.ShapeDtypeStruct`s, with
shardings on devices or on a `jax.experimental.topologies` topology for ahead-of-time TPU
compiles on a CPU host) and compiles it once with XLA's dump options given for that compile
alone (`compiler_options`), into a folder of its own. It works any number of times in one
process, whatever the backend. Those options are left out of JAX's persistent compilation
cache key, and a cache hit writes no dump: when that cache is on, it is turned off for this
compile and on again after. `sweep` does that once per value of one dimension and gives
`bufscope.sweep` of the dumps: which batch (sequence, number of layers) fits.
Needs jax: `pip install 'bufscope[jax]'`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
import warnings
from typing import Any, Callable, Iterable

try:
    import jax as _jax
except ImportError as _e:  # pragma: no cover - the message is the point
    raise ImportError(
        "bufscope.jax needs JAX: `pip install 'bufscope[jax]'` gives JAX for the CPU; for a "
        "GPU or TPU install JAX for it as its installation guide says "
        "(`pip install 'jax[cuda12]'`, `pip install 'jax[tpu]'`), then import bufscope.jax again"
    ) from _e

from bufscope import DEFAULT_HEIGHT, Dump, Report, Sweep
from bufscope import sweep as _sweep_folders

__all__ = ["dump", "show", "sweep", "DUMP_OPTIONS", "CompileError", "CompileErrorWarning"]


class CompileErrorWarning(UserWarning):
    """The compile failed after buffer assignment (an out-of-memory TPU compile): the dump
    was kept, with the compiler's message in `Dump.error`."""


class CompileError(RuntimeError):
    """`dump(..., on_error="raise")`: the compile failed after buffer assignment; the dump
    that XLA wrote first is `.dump`, the compiler's exception the cause."""

    def __init__(self, message: str, dump: Dump):
        super().__init__(message)
        self.dump = dump

#: XLA's options for the compile, besides `xla_dump_to`: the HLO as text (which writes the
#: buffer assignment, its values, the live ranges and the memory-usage report beside the
#: optimised module), no proto, no per-pass dumps, every module of this compile.
DUMP_OPTIONS = {
    "xla_dump_hlo_as_text": True,
    "xla_dump_hlo_as_proto": False,
    "xla_dump_hlo_pass_re": "",
    "xla_dump_hlo_module_re": ".*",
}

#: The files of a module that bufscope reads, by the end of their names; the rest of what
#: XLA writes (the HLO before optimisations, LLVM IR, object files, debug options) goes.
KEPT = (
    "-buffer-assignment.txt",
    "-buffer-assignment-values.txt",
    "-live-range.txt",
    "-memory-usage-report.txt",
    "after_optimizations.txt",
)

_MODULE = re.compile(r"^(module_(\d+)\.([^.]+))\.")


def dump(
    fn: Callable[..., Any],
    *args: Any,
    static_argnums: int | tuple[int, ...] | None = None,
    folder: str | None = None,
    label: str | None = None,
    on_error: str = "warn",
    **jit_kwargs: Any,
) -> Dump:
    """Compiles `jax.jit(fn, static_argnums=…, **jit_kwargs)` for `args` with XLA dumping into
    a new subfolder of `folder` (a new temporary folder by default) and returns the compiled
    module's `Dump`.

    The subfolder is named `label` or, without one, by the module and the time
    (`jit_step-20261206-181502`), with `-2`, `-3`, … when taken, so that the dumps of a sweep
    can share `folder`. Nothing outside it is touched: inside it, what XLA wrote besides the
    files bufscope reads is removed.

    A function already jitted is lowered as it is when no jit option is given; anything
    else that is not callable is a `TypeError`. A compile that fails after buffer
    assignment (out of memory on a TPU) still gives its dump, with the compiler's message
    in `Dump.error`, in its `repr` and static view, and beside the dump as `*.error.txt`
    (which bufscope reads as the OOM message of the module: the capacity it names is
    judged); `on_error="warn"` (the default) warns (`CompileErrorWarning`) and returns the
    dump, `"raise"` raises `CompileError` holding it. One that fails before raises.
    """
    if on_error not in ("warn", "raise"):
        raise ValueError(f'on_error is "warn" or "raise", not {on_error!r}')
    _check_callable(fn)
    if static_argnums is None and not jit_kwargs and hasattr(fn, "lower"):
        jitted = fn
    else:
        if static_argnums is not None:
            jit_kwargs["static_argnums"] = static_argnums
        jitted = _jax.jit(fn, **jit_kwargs)
    lowered = jitted.lower(*args)
    name = _module_name(lowered)
    if folder is None:
        folder = tempfile.mkdtemp(prefix="bufscope-jax-")
    else:
        folder = _new_subfolder(folder, label or f"{name or 'module'}-{time.strftime('%Y%m%d-%H%M%S')}")
    error = None
    with _persistent_cache_off():
        try:
            lowered.compile(compiler_options={"xla_dump_to": folder, **DUMP_OPTIONS})
        except Exception as e:  # noqa: BLE001 - the dump may still be there (OOM)
            error = e
    try:
        prefix = _pick(folder, name)
    except FileNotFoundError:
        # No dump: the folder this call made goes, with what XLA wrote into it.
        shutil.rmtree(folder, ignore_errors=True)
        if error is not None:
            raise error
        raise
    paths = _keep(folder, prefix)
    d = Dump(paths, module=prefix.split(".", 1)[1], folder=folder)
    if error is None:
        return d
    d.error = str(error) or type(error).__name__
    # Beside the dump, named as the module's files: what the command line and the page
    # pair with it as its out-of-memory message.
    error_file = os.path.join(folder, prefix + ".error.txt")
    with open(error_file, "w", encoding="utf-8") as f:
        f.write(d.error + "\n")
    d.paths = sorted(d.paths + [error_file])
    message = f"the compile of {d.module} failed after buffer assignment; its dump is in {folder}: {d.error}"
    if on_error == "raise":
        raise CompileError(message, d) from error
    warnings.warn(message, CompileErrorWarning, stacklevel=2)
    return d


def _check_callable(fn: Any) -> None:
    """A clear `TypeError` for what `jax.jit` cannot take: JAX's own stages (pass the
    function instead) and what is not callable."""
    stages = getattr(_jax, "stages", None)
    for stage in ("Lowered", "Compiled"):
        cls = getattr(stages, stage, None)
        if cls is not None and isinstance(fn, cls):
            raise TypeError(
                f"bufscope.jax.dump takes the function (or its jax.jit), not a jax.stages.{stage}: "
                "it lowers and compiles it itself, with XLA's dump options"
            )
    if not callable(fn):
        raise TypeError(
            f"bufscope.jax.dump takes a function or a jax.jit-wrapped one, not {type(fn).__name__} ({fn!r:.80})"
        )


def show(fn: Callable[..., Any], *args: Any, height: int = DEFAULT_HEIGHT, embed: bool | None = None,
         **kwargs: Any) -> Report:
    """`dump(fn, *args, **kwargs).show(height=height, embed=embed)`: the compiled module in
    the notebook."""
    return dump(fn, *args, **kwargs).show(height=height, embed=embed)


def sweep(
    fn: Callable[..., Any],
    make_args: Callable[[Any], Any],
    values: Iterable[Any],
    *,
    folder: str | None = None,
    capacity: str | None = None,
    at: Iterable[int] = (),
    label: str | None = None,
    on_error: str = "warn",
    **jit_kwargs: Any,
) -> Sweep:
    """Compiles `fn` once per value of one dimension and returns `bufscope.sweep` of the
    dumps: the dimension that varies, each memory space's peak fitted against it (constant,
    linear or quadratic), predicted at each of `at`, and with `capacity` (`"v5e"`,
    `"16GiB"`) the largest value that fits.

    For each `v` in `values` (two at least), `make_args(v)` gives the arguments: a tuple of
    them, or the one argument (arrays, or `jax.ShapeDtypeStruct`s: nothing is allocated).
    Each is compiled by `dump` (`static_argnums=` and other `jax.jit` options pass on) into
    a subfolder of `folder` (a new temporary folder by default) named `LABEL-v`, `LABEL`
    being `label` or the function's name. The result also holds `.dumps`, the `Dump` of
    each value in order, and `.folder`.

    A compile that fails after buffer assignment (out of memory on a TPU) is kept as a point
    that does not fit, its message beside its dump as `*.error.txt`: `on_error="warn"` (the
    default) warns (`CompileErrorWarning`) for each, `"keep"` says nothing, `"raise"` raises
    `CompileError` at the first. One that fails before raises, naming the value; so does
    the binary (`BufscopeError`) when no one dimension, or two, vary.
    """
    if on_error not in ("warn", "keep", "raise"):
        raise ValueError(f'on_error is "warn", "keep" or "raise", not {on_error!r}')
    values = list(values)
    if len(values) < 2:
        raise ValueError(f"a sweep compiles two values at least, not {len(values)}")
    _check_callable(fn)
    folder = tempfile.mkdtemp(prefix="bufscope-sweep-") if folder is None else folder
    label = label or getattr(fn, "__name__", None) or "sweep"
    dumps = []
    for v in values:
        args = make_args(v)
        args = args if isinstance(args, tuple) else (args,)
        try:
            d = dump(fn, *args, folder=folder, label=f"{label}-{v}", on_error="raise", **jit_kwargs)
        except CompileError as e:
            if on_error == "raise":
                raise
            d = e.dump
            if on_error == "warn":
                warnings.warn(f"value {v}: {e}", CompileErrorWarning, stacklevel=2)
        except Exception as e:
            if hasattr(e, "add_note"):  # Python 3.11
                e.add_note(f"bufscope.jax.sweep: compiling {label} for the value {v!r}")
            raise
        dumps.append(d)
    result = _sweep_folders([d.folder for d in dumps], capacity=capacity, at=at)
    result.dumps, result.folder = dumps, folder
    return result


def _new_subfolder(parent: str, name: str) -> str:
    """A folder made now in `parent` (made if missing) and named `name` (`-2`, `-3`, … when
    taken): the only place this dump writes into and removes from."""
    name = re.sub(r"[^\w.+=-]+", "_", name).strip("._") or "dump"
    os.makedirs(parent, exist_ok=True)
    for n in range(1, 10_000):
        path = os.path.join(parent, name if n == 1 else f"{name}-{n}")
        try:
            os.mkdir(path)
        except FileExistsError:
            continue
        return path
    raise FileExistsError(f"{parent} has 9,999 folders named {name}-N: give dump() another label=")


def _module_name(lowered: Any) -> str | None:
    """The name JAX gave the module (`jit_f`), from the first line of its StableHLO text."""
    try:
        first = lowered.as_text().split("\n", 1)[0]
    except Exception:  # noqa: BLE001 - only a preference among several modules
        return None
    m = re.match(r"\s*module @([\w.$-]+)", first)
    return m.group(1) if m else None


def _pick(folder: str, name: str | None) -> str:
    """The `module_NNNN.NAME` of the module compiled: among those with a buffer assignment,
    the one named as JAX named it, else the last."""
    found = {}
    for f in os.listdir(folder):
        m = _MODULE.match(f)
        if m and f.endswith("-buffer-assignment.txt"):
            found[m.group(1)] = (int(m.group(2)), m.group(3))
    if not found:
        raise FileNotFoundError(
            f"XLA wrote no buffer assignment into {folder}: this backend or JAX version may "
            "not dump with per-compile options"
        )
    named = [p for p, (_, n) in found.items() if name is not None and n.rstrip("_") == name.rstrip("_")]
    return max(named or found, key=lambda p: found[p][0])


def _keep(folder: str, prefix: str) -> list[str]:
    """The files of `prefix` that bufscope reads, in name order; every other file goes.
    `folder` is the one this call made (`_new_subfolder` or `mkdtemp`): XLA's output alone."""
    kept = []
    for f in sorted(os.listdir(folder)):
        path = os.path.join(folder, f)
        if f.startswith(prefix + ".") and f.endswith(KEPT) and "before_optimizations" not in f:
            kept.append(path)
        elif os.path.isdir(path):
            shutil.rmtree(path, ignore_errors=True)
        else:
            os.remove(path)
    return kept


@contextlib.contextmanager
def _persistent_cache_off():
    """JAX's persistent compilation cache off for the block when it is on, and reset on
    either side (it decides whether it is used once, then remembers)."""
    from jax._src import compilation_cache as cc  # the public module re-exports reset_cache only

    if not cc.is_persistent_cache_enabled():
        yield
        return
    _jax.config.update("jax_enable_compilation_cache", False)
    cc.reset_cache()
    try:
        yield
    finally:
        _jax.config.update("jax_enable_compilation_cache", True)
        cc.reset_cache()
