"""The generic report machinery: one document, rendered as Markdown, HTML and console text."""

from __future__ import annotations

import io
import re
from html.parser import HTMLParser

import numpy as np
import pytest
from hypothesis import given, strategies as st

from ortops.reporting import (Bullets, Cell, Code, Details, Difference, Document, Grid, Heading, PairSummary, Paragraph,
                              Table, TopicCount, console, html, markdown, summary_blocks)


class _Page(HTMLParser):
    """Collects what a self-contained page must not have, and its tables' cells."""

    def __init__(self):
        super().__init__()
        self.external, self.tables, self._cell, self.cells = [], 0, None, []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("src", "href"):
            if attrs.get(key) and not attrs[key].startswith("#"):
                self.external.append((tag, attrs[key]))
        if tag == "link":
            self.external.append((tag, attrs))
        if tag == "table":
            self.tables += 1
        if tag == "td":
            self._cell = (attrs.get("data-status"), [])

    def handle_data(self, data):
        if self._cell is not None:
            self._cell[1].append(data)

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.cells.append((self._cell[0], "".join(self._cell[1])))
            self._cell = None


def _document() -> Document:
    pairs = [PairSummary("a vs b", {"agree": 3, "explained": 1}, [TopicCount("nan", 1, "NaN <order> | here")])]
    return Document("demo <report>").add(
        Heading("Summary"), *summary_blocks(pairs),
        Grid(["topic", "runtime"], [[Cell("ties"), Cell("2 explained", status="explained")]],
             legend=[("explained", "a known divergence")]),
        Table(["name", "n"], [["x|y", 3], ["<script>", 10]], id="cases", interactive=True, filter_columns=["name"]),
        Details("case one", [Paragraph("`code` and **bold**"), Code("a | b\n<c>")], status="unexplained"),
    )


def test_markdown_keeps_every_cell_whole_and_escapes_pipes():
    text = markdown.render(_document())
    assert text.startswith("# demo \\<report>\n")  # no raw HTML
    assert "| x\\|y | 3 |" in text
    assert "NaN \\<order> | here" in text  # a bullet, not a table cell: | needs no escaping
    assert "| a vs b | 4 | 3 | 1 | 0 | 0 |" in text
    assert "```\na | b\n<c>\n```" in text


def test_markdown_names_inject_no_line_and_no_html():
    """Names in a report may hold newlines, '#' and markup: each block stays one line, and raw
    HTML is escaped outside code (compare.md grew headings and <script> from an output name)."""
    name = "out\n# injected\n<script>x</script>"
    doc = Document(f"compare {name}", [Heading(name), Paragraph(f"see `{name}` and {name}"), Bullets([name]),
                                       Details(name, [Paragraph(name)]),
                                       Table(["name", "path"], [[Cell(name, code=True), "a\\b"]])])
    text = markdown.render(doc)
    assert [line for line in text.splitlines() if line.startswith("# ")] == [
        "# compare out # injected \\<script>x\\</script>"]
    assert re.findall(r"(?<!\\)<script>", text.replace("`out # injected <script>x</script>`", "")) == []
    assert "| `out # injected <script>x</script>` | a\\\\b |" in text  # code keeps its backslashes as they are
    # A backtick run without its closing run of the same length is no code span (as GitHub reads
    # it); a backslash, a link, an image and an entity are text too.
    for name in ("`<img src=x onerror=alert(1)>``", "x\\<img src=x>", "![t](https://e.example/p.png)[c](j)",
                 "&lt;b&gt;"):
        rendered = markdown.render(Document("t", [Paragraph(f"see `{name}` then"), Bullets([name]),
                                                  Table(["n"], [[name]])]))
        body = rendered.split("\n", 2)[2].replace(f"`{name}`", "")  # code: shown as it is
        assert "<img" not in body.replace("\\<img", ""), body
        assert "](" not in body.replace("\\](", ""), body
        assert "&lt;" not in body.replace("\\&lt;", ""), body


def test_html_is_self_contained_escaped_and_coloured():
    page = html.render(_document())
    parser = _Page()
    parser.feed(page)
    assert parser.external == []
    assert page.count("<script>") == 1  # the page's own script; the cell's <script> is escaped
    assert "&lt;script&gt;" in page
    assert ("explained", "2 explained") in parser.cells
    assert parser.tables == 3
    assert 'class="interactive"' in page and 'id="cases-filters"' in page
    assert re.search(r"\.st-explained\{background:#[0-9a-f]{6}\}", page)


def test_html_ids_are_unique_even_when_a_heading_and_a_table_share_a_name():
    page = html.render(Document("t").add(Heading("Cases"), Table(["a"], [[1]], id="cases", interactive=True),
                                         Heading("Cases"), Table(["a"], [[2]], id="cases", interactive=True)))
    ids = re.findall(r' id="([^"]+)"', page)
    assert len(ids) == len(set(ids)) == 6
    assert 'id="cases"' in page and 'id="cases-filters"' in page and 'id="cases-2-filters"' in page


def test_plain_console_writes_whole_unwrapped_lines():
    out = io.StringIO()
    con = console.make_console(out, plain=True)
    long = "reason " * 60
    console.print_table(con, Table(["name", "reason"], [["a-very-long-source-name-" * 4, long]]))
    console.print_pairs(con, "demo", [PairSummary("a vs b", {"agree": 2, "unexplained": 1})])
    lines = out.getvalue().splitlines()
    assert any(long.strip() in line and "a-very-long-source-name-" * 4 in line for line in lines)
    assert 'demo pair="a vs b" cases=3 agree=2 explained=0 skipped=0 unexplained=1' in lines
    assert "\x1b" not in out.getvalue()


@given(st.lists(st.integers(-3, 3), min_size=1, max_size=20), st.data())
def test_difference_finds_the_first_differing_position(left, data):
    a = np.array(left)
    b = a.copy()
    changed = sorted(set(data.draw(st.lists(st.integers(0, a.size - 1), max_size=a.size))))
    b[changed] += 7
    d = Difference.of("out", "x", a, "y", b)
    assert d.mismatches == len(changed)
    assert d.first_index == ((changed[0],) if changed else None)
    if changed:
        assert (d.left_at, d.right_at) == (str(a[changed[0]]), str(b[changed[0]]))
    assert Difference.from_json(d.to_json()) == d


def test_difference_nan_equals_nan_and_shapes_may_differ():
    assert Difference.of("v", "x", np.array([np.nan, 1.0]), "y", np.array([np.nan, 1.0])).mismatches == 0
    d = Difference.of("v", "x", np.zeros(3), "y", np.zeros(4))
    assert d.first_index is None and "shapes differ" in d.first_position


def test_difference_with_a_tolerance_counts_only_what_lies_outside_it():
    left, right = np.array([1.0, 2.0, 3.0]), np.array([1.0 + 1e-9, 2.5, 3.0])
    exact = Difference.of("v", "x", left, "y", right)
    assert exact.mismatches == 2 and exact.first_index == (0,)
    loose = Difference.of("v", "x", left, "y", right, atol=1e-6)
    assert loose.mismatches == 1 and loose.first_index == (1,) and loose.max_abs_diff == 0.5
    assert Difference.from_json(loose.to_json()) == loose


def test_reports_are_never_left_half_written(tmp_path):
    """A failure while moving the files in (a folder where a file goes) left `.NAME.PID.partial`
    files behind."""
    from ortops.reporting import write_files

    (tmp_path / "b.html").mkdir()
    with pytest.raises(OSError):
        write_files({tmp_path / "a.md": "new a", tmp_path / "b.html": "new b", tmp_path / "c.json": "new c"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.md", "b.html"]
    assert (tmp_path / "a.md").read_text() == "new a"


@pytest.mark.parametrize("name, shown", [("# x", "\\# x"), ("> x", "\\> x"), ("- x", "\\- x"), ("1. x", "1\\. x"),
                                         ("12) x", "12\\) x"), ("***", "\\***"), ("~~~ x", "\\~~~ x"),
                                         ("    x", "x"), ("**bold** text", "**bold** text")])
def test_a_name_at_the_start_of_a_line_opens_no_block(name, shown):
    """A paragraph that starts with a name (an unexplained output's explanation does) became a
    heading, a quote, a list, a rule, a fence that swallowed the rest, or indented code."""
    text = markdown.render(Document("t", [Paragraph(name), Bullets([name])]))
    assert text.split("\n")[2:5] == [shown, "", f"- {shown}"], text
