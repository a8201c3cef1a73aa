"""Render a :class:`~ortops.reporting.document.Document` as one self-contained HTML page: inline
CSS and JavaScript, no network when viewed. Interactive tables get a text filter, a drop-down per
``filter_columns`` entry and sortable columns (numbers by ``Cell.sort``); a Grid colours cells by
status (:data:`COLOURS`). All text is escaped; element ids are unique.
"""

from __future__ import annotations

import html as _html
import re
from typing import Sequence

from .document import Block, Bullets, Cell, Code, Details, Document, Grid, Heading, Paragraph, Table

__all__ = ["render", "escape", "inline", "COLOURS"]

#: Background colour of a cell by status (verdicts first; anything else is uncoloured).
COLOURS = {
    "agree": "#d5f0dc",
    "explained": "#fff1bf",
    "skipped": "#e4e6ea",
    "unexplained": "#f8cfd3",
    "none": "#ffffff",
}

_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;max-width:1500px;
 padding:0 1em;color:#1d2127;line-height:1.4}
h1{font-size:1.6em}h2{font-size:1.3em;border-bottom:1px solid #ccd;padding-bottom:.2em;margin-top:1.6em}
h3{font-size:1.1em}code,pre{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,monospace;font-size:.88em}
code{background:#f2f3f5;padding:0 .25em;border-radius:3px}
pre{background:#f6f7f9;border:1px solid #e0e3e8;padding:.6em;overflow-x:auto;white-space:pre}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:.9em}
th,td{border:1px solid #cfd4dc;padding:.25em .5em;vertical-align:top;text-align:left}
th{background:#eef0f4;position:sticky;top:0}
table.interactive th{cursor:pointer;user-select:none}
table.interactive th.asc::after{content:' \\25B2'}table.interactive th.desc::after{content:' \\25BC'}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.grid td{min-width:7em}.grid td.rowhead{font-weight:600;background:#f6f7f9}
.filters{margin:.3em 0;display:flex;gap:.6em;flex-wrap:wrap;align-items:center;font-size:.9em}
.filters input{min-width:18em;padding:.2em}.count{color:#555}
details{border:1px solid #dde;border-radius:4px;margin:.3em 0;padding:.2em .6em}
details>summary{cursor:pointer;font-weight:600}
.legend span{display:inline-block;padding:0 .5em;margin-right:.4em;border:1px solid #cfd4dc}
"""

_JS = r"""
(function(){
function key(td){var s=td.getAttribute('data-sort');if(s!==null&&s!==''&&!isNaN(+s))return [0,+s];
 return [1,(s!==null?s:td.textContent).toLowerCase()];}
function cmp(a,b){if(a[0]!==b[0])return a[0]-b[0];return a[1]<b[1]?-1:a[1]>b[1]?1:0;}
document.querySelectorAll('table.interactive').forEach(function(t){
 var body=t.tBodies[0],heads=t.tHead.rows[0].cells,box=document.getElementById(t.id+'-filters');
 Array.prototype.forEach.call(heads,function(th,i){th.addEventListener('click',function(){
  var dir=th.classList.contains('asc')?-1:1;
  Array.prototype.forEach.call(heads,function(h){h.classList.remove('asc','desc');});
  th.classList.add(dir>0?'asc':'desc');
  var rows=Array.prototype.slice.call(body.rows);
  rows.sort(function(a,b){return dir*cmp(key(a.cells[i]),key(b.cells[i]));});
  rows.forEach(function(r){body.appendChild(r);});});});
 if(!box)return;
 var text=box.querySelector('input'),selects=box.querySelectorAll('select'),count=box.querySelector('.count');
 function apply(){var q=text.value.toLowerCase(),shown=0;
  Array.prototype.forEach.call(body.rows,function(r){var ok=!q||r.textContent.toLowerCase().indexOf(q)>=0;
   Array.prototype.forEach.call(selects,function(s){var c=+s.getAttribute('data-col');
    if(s.value&&r.cells[c].textContent.trim()!==s.value)ok=false;});
   r.style.display=ok?'':'none';if(ok)shown++;});
  count.textContent=shown+' of '+body.rows.length+' rows';}
 text.addEventListener('input',apply);
 Array.prototype.forEach.call(selects,function(s){s.addEventListener('change',apply);});apply();});
})();
"""


def escape(text: object) -> str:
    """``text`` escaped for HTML (``&``, ``<``, ``>`` and both quotes)."""
    return _html.escape(str(text), quote=True)


_BOLD = re.compile(r"\*\*(.+?)\*\*")


def inline(text: str) -> str:
    """``text`` escaped, with ``**bold**`` -> ``<strong>`` and ```code``` -> ``<code>``."""
    parts = re.split(r"`([^`]+)`", str(text))  # the odd parts are code
    return "".join(f"<code>{escape(part)}</code>" if i % 2 else _BOLD.sub(r"<strong>\1</strong>", escape(part))
                   for i, part in enumerate(parts))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _td(c: Cell, *, rowhead: bool = False) -> str:
    classes = []
    if c.status:
        classes.append(f"st-{_slug(c.status)}")
    if isinstance(c.sort, (int, float)) and not isinstance(c.sort, bool):
        classes.append("num")
    if rowhead:
        classes.append("rowhead")
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    if c.sort is not None:
        attrs += f' data-sort="{escape(c.sort)}"'
    if c.status:
        attrs += f' data-status="{escape(c.status)}"'
    text = escape(c.text).replace("\n", "<br>")
    return f"<td{attrs}>{f'<code>{text}</code>' if c.code and c.text else text}</td>"


class _Ids:
    """Element ids of one page, each used once."""

    def __init__(self):
        self.used: set[str] = set()
        self.tables = 0

    def take(self, base: str) -> str:
        ident, n = base, 1
        while ident in self.used:
            n += 1
            ident = f"{base}-{n}"
        self.used.add(ident)
        return ident


def _table(block: Table, ids: _Ids) -> str:
    ids.tables += 1
    ident = ids.take(_slug(block.id) if block.id else f"table-{ids.tables}")
    rows = block.cells()
    classes = ["interactive"] if block.interactive else []
    if isinstance(block, Grid):
        classes.append("grid")
    out = []
    if block.caption:
        out.append(f"<p>{inline(block.caption)}</p>")
    if block.interactive:
        selects = []
        for name in block.filter_columns:
            if name not in block.columns:
                continue
            col = list(block.columns).index(name)
            values = sorted({r[col].text for r in rows if r[col].text})
            options = "".join(f'<option value="{escape(v)}">{escape(v)}</option>' for v in values)
            selects.append(f'<label>{escape(name)} <select data-col="{col}"><option value="">all</option>'
                           f"{options}</select></label>")
        out.append(f'<div class="filters" id="{ident}-filters"><input type="search" placeholder="filter rows" '
                   f'aria-label="filter rows">{"".join(selects)}<span class="count"></span></div>')
    class_attr = ' class="' + " ".join(classes) + '"' if classes else ""
    out.append(f'<table id="{ident}"{class_attr}>')
    out.append("<thead><tr>" + "".join(f"<th>{escape(c)}</th>" for c in block.columns) + "</tr></thead><tbody>")
    for row in rows:
        out.append("<tr>" + "".join(_td(c, rowhead=isinstance(block, Grid) and i == 0) for i, c in enumerate(row))
                   + "</tr>")
    out.append("</tbody></table>")
    if isinstance(block, Grid) and block.legend:
        out.append('<p class="legend">' + "".join(
            f'<span class="st-{_slug(s)}">{escape(s)}</span>{escape(what)} ' for s, what in block.legend) + "</p>")
    return "\n".join(out)


def _blocks(items: Sequence[Block], ids: _Ids) -> str:
    out = []
    for block in items:
        if isinstance(block, Heading):
            level = max(1, min(6, block.level))
            out.append(f'<h{level} id="{ids.take("h-" + _slug(block.text))}">{inline(block.text)}</h{level}>')
        elif isinstance(block, Paragraph):
            out.append(f"<p>{inline(block.text)}</p>")
        elif isinstance(block, Bullets):
            out.append("<ul>" + "".join(f"<li>{inline(i)}</li>" for i in block.items) + "</ul>")
        elif isinstance(block, Code):
            out.append(f"<pre>{escape(block.text)}</pre>")
        elif isinstance(block, Table):
            out.append(_table(block, ids))
        elif isinstance(block, Details):
            status = f' class="st-{_slug(block.status)}"' if block.status else ""
            ident = f' id="{ids.take(_slug(block.id))}"' if block.id else ""
            out.append(f"<details{ident}{' open' if block.open else ''}><summary>"
                       f"<span{status}>{inline(block.title)}</span></summary>")
            out.append(_blocks(block.blocks, ids))
            out.append("</details>")
        else:
            raise TypeError(f"not a report block: {type(block).__name__}")
    return "\n".join(out)


def render(document: Document) -> str:
    """The whole document as one HTML page (a string), with inline CSS and JavaScript."""
    status_css = "".join(f".st-{_slug(s)}{{background:{c}}}" for s, c in COLOURS.items())
    body = _blocks(document.blocks, _Ids())
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
        f"<title>{escape(document.title)}</title>\n<style>{_CSS}{status_css}</style></head>\n<body>\n"
        f"<h1>{inline(document.title)}</h1>\n{body}\n<script>{_JS}</script>\n</body></html>\n"
    )
