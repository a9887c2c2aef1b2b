"""What bufscope shows in a notebook: the static view (a table and a PNG, which any viewer
shows: an untrusted notebook, GitHub, nbviewer) and the app's outputs, the first holding
the app (~2 MB) and the later ones only their dumps, drawn with the app the first one left
on the page (`window.__bufscope_app`), else their static view."""

from __future__ import annotations

import base64
import hashlib
import html as _html
import itertools
import json
import re
import secrets

#: A data block of `bufscope html` (src/cli/html.rs): one dump file, gzipped, in base64.
_BLOCK = re.compile(r'<script type="application/gzip" id="bufscope-dump-\d+"[^>]*>[^<]*</script>\n?')
_TITLE = re.compile(r"<title>[^<]*</title>")
#: The ids of this process's outputs: a prefix of its own (a notebook's page may hold the
#: outputs of earlier kernels), then a count.
_PREFIX = secrets.token_hex(4)
_ids = (f"{_PREFIX}-{n}" for n in itertools.count())


def _bytes(n: float | None) -> str:
    """Bytes as the page writes them (binary units, one decimal)."""
    if n is None:
        return "–"
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover


def _e(text: object) -> str:
    return _html.escape(str(text), quote=True)


_STYLE = "border-collapse: collapse; font: 12px/1.4 system-ui, sans-serif; margin: 4px 0"
_CELL = "padding: 2px 8px; border-bottom: 1px solid #8883; white-space: nowrap; text-align: {}"


def _table(head: list[str], rows: list[list[str]], right: set[int] = frozenset()) -> str:
    def row(cells, tag):
        return "<tr>" + "".join(
            f'<{tag} style="{_CELL.format("right" if i in right else "left")}">{c}</{tag}>' for i, c in enumerate(cells)
        ) + "</tr>"

    return f'<table style="{_STYLE}">' + row(head, "th") + "".join(row(r, "td") for r in rows) + "</table>"


def static_view(summary: dict | None, png: bytes | None, *, title: str, error: str | None = None,
                problem: str | None = None, top: int = 5) -> str:
    """The dump as static HTML: per module, each memory space's peak (and its capacity
    verdict when one is known: an OOM message read beside the dump), what is live at the
    peak of memory space 0 by op_name, and the drawing as a PNG."""
    parts = [f'<div class="bufscope-static" style="font: 13px system-ui, sans-serif"><b>{_e(title)}</b>']
    if error:
        parts.append(f'<pre style="color: #b00; white-space: pre-wrap; margin: 4px 0">{_e(error)}</pre>')
    if problem:
        parts.append(f'<p style="color: #b00">{_e(problem)}</p>')
    for m in (summary or {}).get("modules", []):
        rows, verdicts = [], []
        for s in m["memory_spaces"]:
            cap = (s.get("answers") or {}).get("capacity")
            rows.append([_e(s["color"]), _bytes(s["peak_live_bytes"]), _e(s["peak_time"]), _bytes(s["allocated_bytes"]),
                         _e(s["values"]), "fits" if cap and cap.get("fits") else ("over" if cap else "")])
            if cap:
                verdicts.append(f'<p style="margin: 2px 0">memory space {_e(s["color"])}: {_e(cap["sentence"])}</p>')
        parts.append(f'<div style="margin-top: 6px">module <code>{_e(m["name"])}</code>, '
                     f'{_e(m["schedule_length"])} steps</div>')
        parts.append(_table(["space", "peak live", "at step", "allocated", "values", "capacity"], rows, {1, 2, 3, 4}))
        parts.extend(verdicts)
        spaces = m["memory_spaces"]
        groups = ((spaces[0].get("answers") or {}).get("op_name_groups") or [])[:top] if spaces else []
        if groups:
            parts.append(_table(
                [f"live at step {_e(spaces[0]['peak_time'])} of space {_e(spaces[0]['color'])}, by op_name", "bytes", "share", "values"],
                [[f"<code>{_e(g['path'])}</code>", _bytes(g["bytes"]), f"{g['percent']:.1f} %", _e(g["count"])] for g in groups],
                {1, 2, 3},
            ))
    if png:
        parts.append(f'<img alt="the occupied bytes and blocks of each memory space" style="max-width: 480px; '
                     f'display: block" src="data:image/png;base64,{base64.b64encode(png).decode("ascii")}">')
    parts.append("</div>")
    return "".join(parts)


def diff_view(diff: dict) -> str:
    """`bufscope diff --json` as a static table: per module pair and memory space, the two
    peaks and the change."""
    rows = []
    for m in diff.get("modules", []):
        for s in m["spaces"]:
            rows.append([f"<code>{_e(m['base_name'])}</code> → <code>{_e(m['new_name'])}</code>", _e(s["color"]),
                         _bytes(s["base_peak_bytes"]), _bytes(s["new_peak_bytes"]),
                         ("+" if s["delta_bytes"] > 0 else "") + _bytes(s["delta_bytes"]),
                         f"{s['delta_percent']:+.1f} %" if s.get("delta_percent") is not None else ""])
    lonely = [f"only in the base: {_e(', '.join(diff.get('unpaired_base', [])))}" if diff.get("unpaired_base") else "",
              f"only in the new: {_e(', '.join(diff.get('unpaired_new', [])))}" if diff.get("unpaired_new") else ""]
    return (_table(["modules (base → new)", "space", "base peak", "new peak", "change", ""], rows, {1, 2, 3, 4, 5})
            + "".join(f"<p>{x}</p>" for x in lonely if x))


# What the scripts look for, in JavaScript, with no `<` (written `\x3c`): a script's text
# holds none, so no notebook's HTML sanitiser or parser can read a tag into it.
_JS_BLOCK = r'/\x3cscript type="application\/gzip" id="bufscope-dump-\d+"[^>]*>[^\x3c]*\x3c\/script>\n?/g'
_JS_TITLE = r"/\x3ctitle>[^\x3c]*\x3c\/title>/"
_JS_PLAIN_TITLE = r"'\x3ctitle>bufscope\x3c/title>'"


def _frame_style(height: int) -> str:
    return f"width: 100%; height: {int(height)}px; border: 1px solid #8884; border-radius: 4px"


def split(page: str) -> tuple[str, str, str, str]:
    """A page of `bufscope html` as (the app alone, a key naming it, its data blocks, its
    title): the app is the same for every page of one binary."""
    blocks = "".join(_BLOCK.findall(page))
    app = _TITLE.sub("<title>bufscope</title>", _BLOCK.sub("", page), count=1)
    title = (_TITLE.search(page) or _TITLE.search("<title>bufscope</title>")).group(0)
    return app, hashlib.sha256(app.encode("utf-8")).hexdigest()[:16], blocks, title


def embedded(page: str, height: int) -> str:
    """The app with its dumps in an `<iframe srcdoc>`, and a script that keeps the app alone
    on the page's window for the outputs after it (where scripts run)."""
    n = next(_ids)
    _, key, _, _ = split(page)
    keep = (
        "(function(){var f=document.getElementById('bufscope-app-%s');if(!f)return;"
        "var a=window.__bufscope_app=window.__bufscope_app||{};"
        "a['%s']=f.getAttribute('srcdoc').replace(%s,'').replace(%s,%s);})();"
        % (n, key, _JS_BLOCK, _JS_TITLE, _JS_PLAIN_TITLE)
    )
    return (
        f'<iframe id="bufscope-app-{n}" srcdoc="{_html.escape(page, quote=True)}" title="bufscope" '
        f'style="{_frame_style(height)}" allow="clipboard-write"></iframe><script>{keep}</script>'
    )


def referencing(page: str, height: int, fallback: str) -> str:
    """An output that holds only its dumps: drawn in the app the first output left on the
    window (`embedded`), else `fallback` (a static view) with a sentence saying why."""
    n = next(_ids)
    _, key, blocks, title = split(page)
    # No `<` in a script's text (`\u003c` is JSON's own escape for it).
    data = json.dumps({"blocks": blocks, "title": title}).replace("<", "\\u003c")
    note = ("<p style=\"font: 12px system-ui; color: #666\">The app is drawn here when this notebook's first "
            "bufscope view is on the page and scripts run (a trusted notebook); "
            "<code>show(..., embed=True)</code> puts the whole app in this output.</p>")
    draw = (
        "(function(){var app=(window.__bufscope_app||{})['%s'];var el=document.getElementById('bufscope-out-%s');"
        "if(!app||!el)return;var d=JSON.parse(document.getElementById('bufscope-data-%s').textContent);"
        "var i=app.lastIndexOf('\\x3c/body>');if(i<0)return;"
        "var f=document.createElement('iframe');f.title='bufscope';f.setAttribute('allow','clipboard-write');"
        "f.style.cssText='%s';f.srcdoc=(app.slice(0,i)+d.blocks+app.slice(i)).replace(%s,d.title);"
        "el.replaceWith(f);})();" % (key, n, n, _frame_style(height), _JS_PLAIN_TITLE)
    )
    return (
        f'<div id="bufscope-out-{n}">{fallback}{note}</div>'
        f'<script type="application/json" id="bufscope-data-{n}">{data}</script><script>{draw}</script>'
    )
