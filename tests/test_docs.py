"""The guide stays true: docs/uci.md against the real engine's `uci` answer, and every
relative link in README.md and docs/*.md against the files (and headings) it names.

docs/uci.md's option table has one row per option, `| name | type | default | range | … |`,
and its `Algorithm` section one bullet per value, ``- `value`: …``.  The test reads the
engine's declarations from the `uci` listing of the real `brudno` process, so it keeps
working whichever way the options are declared inside.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import REPO

HANG = 120.0
"""Only a guard against a hung process; the `uci` answer itself is immediate."""

UCI_PAGE = REPO / "docs" / "uci.md"
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


@dataclass(frozen=True)
class Declared:
    """One `option name … type …` line of the engine's `uci` answer."""

    name: str
    kind: str
    default: str | None
    low: str | None
    high: str | None
    values: tuple[str, ...]


def parse_option(line: str) -> Declared:
    match = re.fullmatch(r"option name (.+?) type (\w+)(.*)", line)
    assert match is not None, line
    name, kind, rest = match.groups()
    fields: dict[str, str] = {}
    values: list[str] = []
    # The keywords split the rest; a value may hold spaces (a string default).
    parts = re.split(r" (default|min|max|var) ", " " + rest.strip() + " ")
    for keyword, value in zip(parts[1::2], parts[2::2], strict=True):
        if keyword == "var":
            values.append(value.strip())
        else:
            fields[keyword] = value.strip()
    return Declared(
        name, kind, fields.get("default"), fields.get("min"), fields.get("max"), tuple(values)
    )


@pytest.fixture(scope="module")
def declared(brudno: list[str]) -> dict[str, Declared]:
    done = subprocess.run(
        brudno, input="uci\nquit\n", capture_output=True, text=True, timeout=HANG, check=False
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "uciok" in lines, done.stdout
    options = [parse_option(line) for line in lines if line.startswith("option name ")]
    assert options, done.stdout
    return {option.name: option for option in options}


def section(text: str, heading: str) -> str:
    """The body of the `## heading` (or `###`) section, up to the next heading of its level."""
    match = re.search(rf"^(#+) {re.escape(heading)}\s*$", text, re.MULTILINE)
    assert match is not None, f"docs/uci.md has no section {heading!r}"
    level = len(match.group(1))
    rest = text[match.end() :]
    end = re.search(rf"^#{{1,{level}}} ", rest, re.MULTILINE)
    return rest if end is None else rest[: end.start()]


def cell(text: str) -> str:
    return text.strip().strip("`").strip()


def documented_options() -> dict[str, list[str]]:
    """The option table's rows by option name: [type, default, range, meaning]."""
    rows: dict[str, list[str]] = {}
    for line in section(UCI_PAGE.read_text(encoding="utf-8"), "Options").splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [cell(c) for c in line.strip().strip("|").split("|")]
        if cells[0] == "option":
            continue
        assert cells[0] not in rows, f"{cells[0]} documented twice"
        rows[cells[0]] = cells[1:]
    return rows


def expected_range(option: Declared) -> str:
    if option.kind == "spin":
        return f"{option.low}..{option.high}"
    if option.kind == "combo" and option.name != "Algorithm":
        return ", ".join(option.values)
    return ""


def test_every_declared_option_is_documented_with_its_default_and_range(
    declared: dict[str, Declared],
) -> None:
    rows = documented_options()
    assert sorted(set(declared) - set(rows)) == [], "declared but not in docs/uci.md"
    assert sorted(set(rows) - set(declared)) == [], "in docs/uci.md but not declared"
    wrong = []
    for name, option in declared.items():
        kind, default, span = rows[name][:3]
        default_wanted = option.default if option.default is not None else ""
        if (kind, default, span) != (option.kind, default_wanted, expected_range(option)):
            wrong.append(
                f"{name}: documented {(kind, default, span)}, engine says "
                f"{(option.kind, default_wanted, expected_range(option))}"
            )
    assert wrong == []


def test_every_algorithm_value_is_documented_once(declared: dict[str, Declared]) -> None:
    body = section(UCI_PAGE.read_text(encoding="utf-8"), "Algorithm values")
    listed = re.findall(r"^- `([^`]+)`", body, re.MULTILINE)
    assert len(listed) == len(set(listed)), "an Algorithm value is listed twice"
    assert sorted(listed) == sorted(declared["Algorithm"].values)


LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def relative_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [
        target
        for target in LINK.findall(text)
        if not re.match(r"[a-z][a-z0-9+.-]*:", target) and not target.startswith("#")
    ]


def anchors(page: Path) -> set[str]:
    """The heading anchors GitHub makes: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    headings = re.findall(r"^#+ (.+?)\s*$", text, re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_relative_links_point_at_files_that_exist(page: Path) -> None:
    broken = []
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        linked = page.parent / path
        missing_heading = anchor and linked.suffix == ".md" and anchor not in anchors(linked)
        if not linked.exists() or missing_heading:
            broken.append(target)
    assert broken == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_links_within_a_page_point_at_its_headings(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    local = [m[1:] for m in LINK.findall(text) if m.startswith("#")]
    assert [a for a in local if a not in anchors(page)] == []


def test_the_link_check_sees_links() -> None:
    """The check above must be able to fail: it finds links and skips only URLs and anchors."""
    readme_links = relative_links(REPO / "README.md")
    assert "docs/uci.md" in readme_links
    assert "options" in anchors(UCI_PAGE)
    assert "compiling-mypyc-and-brudno_pure_python" in anchors(REPO / "docs" / "development.md")
    assert not [t for t in readme_links if t.startswith(("http:", "https:", "#"))]
