"""The docs stand on their own: a user's clone has no ``../shared``, so nothing may cite it."""

from __future__ import annotations

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


def test_divergences_doc_names_versions_on_every_row():
    text = (ROOT / "docs" / "divergences.md").read_text()
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("| what")]
    assert len(rows) >= 20
    for row in rows:
        observed = row.split("|")[2]
        assert re.search(r"\d", observed), row
