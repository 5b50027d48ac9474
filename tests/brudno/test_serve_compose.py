"""compose.yaml's memory limit for `brudno serve` follows docs/deploy.md's own formula.

Issue 12: the file said ``mem_limit: 2g`` for ``--max-sessions 32 --max-memory-mb 1024``,
which the formula puts at 2,404 MiB.  The formula is read from the document and the options
from the service's command (through the real argument parser), so changing either one
without the other fails here.  (PyYAML is not a test dependency: the file is read with
regular expressions, as tests/test_dockerfile.py reads it.)
"""

from __future__ import annotations

import json
import re

from brudno.cli import build_parser
from brudno.commands import serve
from tests.support.paths import REPO

FORMULA = re.compile(
    r"limit \u2265 `--max-memory-mb` \+ (\d+) MiB \u00d7 `--max-sessions` \+ (\d+) MiB"
)
UNITS = {
    "": 1,
    "b": 1,
    "k": 1 << 10,
    "kb": 1 << 10,
    "m": 1 << 20,
    "mb": 1 << 20,
    "g": 1 << 30,
    "gb": 1 << 30,
}


def _service(text: str, name: str) -> str:
    """The lines of one service under ``services:`` (up to the next service)."""
    match = re.search(rf"^  {re.escape(name)}:\n((?:(?:    .*|\s*)\n)*)", text, re.MULTILINE)
    assert match, f"compose.yaml has no service {name!r}"
    return match[1]


def _mebibytes(value: str) -> float:
    """A Compose byte value (``2404m``, ``2g``, ``2.5g``, ``2520000000``) in MiB."""
    match = re.fullmatch(r"(\d+(?:\.\d+)?)([a-z]*)", value.strip().strip("\"'").lower())
    assert match and match[2] in UNITS, f"not a byte value: {value!r}"
    return float(match[1]) * UNITS[match[2]] / (1 << 20)


def test_compose_memory_limit_follows_the_documented_formula() -> None:
    compose = (REPO / "compose.yaml").read_text()
    deploy = (REPO / "docs" / "deploy.md").read_text()
    service = _service(compose, "brudno")

    command = re.search(r"command:\s*(\[[^\]]*\])", service)
    assert command, "the brudno service has no command list"
    args = build_parser().parse_args(json.loads(command[1]))
    assert args.run is serve.run

    formula = FORMULA.search(deploy)
    assert formula, "docs/deploy.md no longer states the memory formula"
    per_session, base = int(formula[1]), int(formula[2])
    needed = args.max_memory_mb + per_session * args.max_sessions + base

    limit = re.search(r"^\s*mem_limit:\s*(\S+)", service, re.MULTILINE)
    assert limit, "the brudno service has no mem_limit"
    assert needed <= _mebibytes(limit[1]) < needed * 1.25, (limit[1], needed)

    # The document quotes the same figure for the same options.
    assert f"{needed:,} MiB" in deploy
    assert f"`--max-sessions {args.max_sessions} --max-memory-mb {args.max_memory_mb}`" in (
        deploy.replace("\n", " ")
    )


def test_byte_values() -> None:
    assert _mebibytes("2g") == 2048
    assert _mebibytes("2404m") == 2404
    assert _mebibytes("2.5g") == 2560
    assert _mebibytes(str(3 << 20)) == 3
