"""The docs stand on their own: a user's clone has no ``../shared``, so nothing may cite it."""

from __future__ import annotations

import importlib.util
import pathlib
import re

from ortops import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
_CITES_SHARED = re.compile(r"FINDINGS|shared/seeds|\.\./shared")


def _shipped_texts():
    yield ROOT / "README.md"
    yield from sorted((ROOT / "docs").glob("*.md"))
    yield from sorted((ROOT / "ortops").rglob("*.py"))
    yield from sorted((ROOT / "scripts").glob("*.py"))


def test_nothing_shipped_cites_the_developers_shared_folder():
    cited = [f"{path.relative_to(ROOT)}:{n}" for path in _shipped_texts()
             for n, line in enumerate(path.read_text().splitlines(), 1) if _CITES_SHARED.search(line)]
    assert not cited


def test_readme_links_resolve_inside_the_repository():
    readme = (ROOT / "README.md").read_text()
    for target in re.findall(r"\]\(([^)#]+)\)", readme):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_report_cites_nothing_outside_the_repository(tmp_path):
    assert cli.main(["conformance", "--ops", "TopK", "--sources", "seed-example", "--no-progress",
                     "--out", str(tmp_path)]) == 0
    assert not _CITES_SHARED.search((tmp_path / "report.md").read_text())


def _table_rows(text: str, column: str):
    """``(row, cell)`` for each body row of every Markdown table in ``text`` that has ``column``."""
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if not (line.startswith("| ") and n + 1 < len(lines) and lines[n + 1].startswith("|---")):
            continue
        header = [c.strip() for c in line.strip("|").split("|")]
        if column not in header:
            continue
        at = header.index(column)
        for row in lines[n + 2:]:
            if not row.startswith("|"):
                break
            yield row, [c.strip() for c in re.split(r"(?<!\\)\|", row.strip("|"))][at]


def test_divergences_doc_names_versions_on_every_row():
    rows = list(_table_rows((ROOT / "docs" / "divergences.md").read_text(), "observed with"))
    assert len(rows) >= 40
    for row, observed in rows:
        assert re.search(r"\d", observed), row


def _divergence_tables():
    spec = importlib.util.spec_from_file_location("divergence_tables", ROOT / "scripts" / "divergence_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_generated_divergence_tables_are_current():
    """The docs' divergence tables are ortops.divergences' rows: run scripts/divergence_tables.py."""
    tables = _divergence_tables()
    pages = {path.name: path for path in tables.pages()}
    assert {"divergences.md", "ops.md"} <= set(pages)
    for name, path in pages.items():
        text = path.read_text()
        assert tables.render(text) == text, f"docs/{name} is stale: run python scripts/divergence_tables.py"


def test_generated_tables_hold_every_row_of_the_table_and_catch_a_hand_edit():
    from ortops import divergences

    tables = _divergence_tables()
    text = (ROOT / "docs" / "divergences.md").read_text()
    for row in divergences.DIVERGENCES:
        assert tables._cell(row.reason) in text, row
    for topic in divergences.TOPICS:
        assert f"| `{topic.key}` | {tables._cell(topic.what)} |" in text, topic
    edited = text.replace(tables._cell(divergences.DIVERGENCES[0].reason), "edited by hand", 1)
    assert edited != text and tables.render(edited) == text
