"""The docs stand on their own and say what the code does.

A user's clone has no ``../shared``, so nothing may cite it. The README is an entry point of at
most 300 lines that keeps CI's two quick-start commands byte for byte; every link between the
pages resolves (files and ``#anchors``); every public name and every CLI option is documented on
a page the README links; the divergence tables are generated from ``ortops.divergences``."""

from __future__ import annotations

import argparse
import importlib.util
import pathlib
import re

from ortops import cli

ROOT = pathlib.Path(__file__).resolve().parent.parent
_CITES_SHARED = re.compile(r"FINDINGS|shared/seeds|\.\./shared")
README = ROOT / "README.md"
#: The two quick-start commands, each alone in its own code block (``.ci/run`` runs the second).
QUICK_START = ('pip install ".[ocr]" && ortops conformance', 'pip install -e ".[test,ocr,openvino]" && pytest')


def _pages() -> list[pathlib.Path]:
    return [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]


def _shipped_texts():
    yield from _pages()
    yield from sorted((ROOT / "ortops").rglob("*.py"))
    yield from sorted((ROOT / "scripts").glob("*.py"))


def test_nothing_shipped_cites_the_developers_shared_folder():
    cited = [f"{path.relative_to(ROOT)}:{n}" for path in _shipped_texts()
             for n, line in enumerate(path.read_text().splitlines(), 1) if _CITES_SHARED.search(line)]
    assert not cited


def test_readme_is_an_entry_point_of_at_most_300_lines():
    assert len(README.read_text().splitlines()) <= 300


def test_readme_keeps_both_quick_start_commands_each_in_its_own_code_block():
    blocks = re.findall(r"^```bash\n(.*?)^```$", README.read_text(), re.S | re.M)
    for command in QUICK_START:
        assert command + "\n" in blocks, command
    ci = (ROOT / ".ci" / "run").read_text()
    assert QUICK_START[1] in ci


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(path: pathlib.Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", path.read_text(), flags=re.S | re.M)
    return {_slug(m) for m in re.findall(r"^#+ (.+)$", text, re.M)}


def test_links_between_the_pages_resolve_with_their_anchors():
    broken = []
    for page in _pages():
        for target in re.findall(r"\]\(([^)\s]+)\)", page.read_text()):
            if "://" in target:
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            if not path.exists():
                broken.append(f"{page.name}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.name}: {target} (no such heading)")
    assert not broken


def _linked_from_readme() -> list[pathlib.Path]:
    targets = re.findall(r"\]\((docs/[^)#\s]+\.md)", README.read_text())
    assert targets
    return [README, *sorted({ROOT / t for t in targets})]


def test_every_page_of_docs_is_linked_from_the_readme():
    linked = set(_linked_from_readme())
    assert not [p.name for p in sorted((ROOT / "docs").glob("*.md")) if p not in linked]


#: The public names the README documented before the docs were split: each must stay documented.
PUBLIC_NAMES = (
    "ortops.InferenceSession(", "ortops.OpError", "ortops.session_options(", "ortops.prepare_model(",
    "ortops.capture_errors(", "ortops.register()", "ortops.lower(", "LoweringReport", "session.lowering",
    "ortops.reference.top_k", ".scatter_elements_update", ".arg_max", "ortops.builder", "top_k_model",
    "onnx_top_k_model", "top_k_side_by_side", "onnx_top_k(version", "append_nodes(", "register_schemas()",
    "ortops.ocr", "ortops.interop.openvino", "ortops.compare.compare(", "ortops.compare.write_reports(",
)


def test_every_public_name_is_documented_on_a_page_the_readme_links():
    text = "\n".join(p.read_text() for p in _linked_from_readme())
    assert not [name for name in PUBLIC_NAMES if name not in text]


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings if s not in ("-h", "--help")}


def test_every_cli_command_and_option_is_in_the_cli_page():
    from ortops import bench

    text = (ROOT / "docs" / "cli.md").read_text()
    parser = cli.build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    missing = [f"ortops {name}" for name in commands if f"## `ortops {name}" not in text]
    per_command = {name: _options(sub) for name, sub in commands.items()}
    per_command["bench"] = _options(bench.build_parser())
    for name, options in per_command.items():
        section = text.split(f"## `ortops {name}", 1)[-1].split("\n## ", 1)[0]
        missing += [f"ortops {name} {option}" for option in sorted(options) if f"`{option}" not in section]
    missing += [option for option in sorted(_options(parser)) if option not in text]
    assert not missing


def test_exit_statuses_are_documented_where_the_commands_are():
    text = (ROOT / "docs" / "cli.md").read_text()
    for command in ("conformance", "compare", "lower", "install-oracle"):
        assert f"| exit status of `ortops {command}` | meaning |" in text, command
    readme = README.read_text()
    for verdict in ("agree", "explained", "skipped", "unexplained"):
        assert f"| `{verdict}` |" in readme, verdict


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
