"""``scripts/test``, the README's test command: what can be checked without installing.

The README's second command is the line ``.ci/run`` runs; the script's table of system tools
covers every tool the tests look up; and where it may not install, the script names the
missing Debian packages and stops with an error before pip or pytest (never a skip).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "test"
OWN_COMMANDS = {"brudno"}
"""Commands the package itself installs (console scripts), not system tools."""


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", text, re.DOTALL)]


def script_table() -> dict[str, str]:
    """The script's ``tool package`` table."""
    block = re.search(r'^TOOLS="\n(.*?)^"', SCRIPT.read_text(encoding="utf-8"), re.M | re.S)
    assert block is not None, "scripts/test has no TOOLS table"
    return dict(line.split() for line in block.group(1).splitlines() if line.strip())


def tools_the_tests_look_up() -> set[str]:
    """Every ``shutil.which("…")`` name and every ``/usr/…/tool`` path in tests/, outside the
    container tests (their Docker is .ci/run's own step) and this file (whose sandbox links a
    few coreutils)."""
    found: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        if (
            "container" in path.relative_to(ROOT / "tests").parts
            or path == Path(__file__).resolve()
        ):
            continue
        text = path.read_text(encoding="utf-8")
        found.update(re.findall(r'shutil\.which\("([\w.-]+)"\)', text))
        found.update(re.findall(r'"/usr/(?:s?bin|games)/([\w.-]+)"', text))
    return found - OWN_COMMANDS


def test_readme_second_command_is_the_line_ci_runs() -> None:
    commands = readme_commands()
    assert commands[1] == "scripts/test"
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert commands[1] in ci_lines
    assert os.access(SCRIPT, os.X_OK)


def test_script_table_covers_every_tool_the_tests_look_up() -> None:
    wanted = tools_the_tests_look_up()
    assert {"mosquitto", "mosquitto_passwd", "stockfish", "chromium", "chromedriver"} <= wanted
    assert wanted - script_table().keys() == set()


def _sandbox(tmp_path: Path, uid: str) -> tuple[Path, Path]:
    """A PATH of bash, dirname, env, a fake ``id -u`` and a fake ``python`` that records ``-m`` runs
    (``python -c``, the headers check, passes); and the file the fakes record calls in."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "env"):
        real = shutil.which(tool)
        assert real is not None, f"{tool} is needed to run scripts/test"
        (bin_dir / tool).symlink_to(real)
    calls = tmp_path / "calls"
    _fake(bin_dir, "id", f'[ "$1" = -u ] && echo {uid}')
    _fake(bin_dir, "python", f'[ "$1" = -m ] && echo "python $*" >> {calls}; exit 0')
    return bin_dir, calls


def _run(bin_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bin_dir / "bash"), str(SCRIPT), "-x", "tests/engine"],
        cwd=bin_dir.parent,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _fake(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    path.chmod(0o755)


@pytest.mark.parametrize(
    ("uid", "with_apt_get", "forbid"),
    [("1000", True, False), ("0", True, True), ("0", False, False)],
    ids=["not-root-no-sudo", "root-but-forbidden", "no-apt-get"],
)
def test_script_names_missing_packages_and_fails_when_it_cannot_install(
    tmp_path: Path, uid: str, *, with_apt_get: bool, forbid: bool
) -> None:
    bin_dir, calls = _sandbox(tmp_path, uid)
    if with_apt_get:
        _fake(bin_dir, "apt-get", f'echo "apt-get $*" >> {calls}; exit 1')
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "BRUDNO_TOOL_DIRS": ""}
    if forbid:
        env["BRUDNO_NO_INSTALL"] = "1"

    result = _run(bin_dir, env)

    assert result.returncode == 1, result.stdout + result.stderr
    named = re.search(r"missing system packages: (.*)", result.stdout)
    assert named is not None, result.stdout
    assert set(named.group(1).split()) == {*script_table().values(), "gcc"}
    assert "cannot install them" in result.stderr
    assert re.search(r"apt-get install -y [\w -]*\bchromium-driver\b", result.stderr)
    assert not calls.exists(), f"ran {calls.read_text(encoding='utf-8')!r}"


@pytest.mark.parametrize("uid", ["0", "1000"], ids=["root", "sudo"])
def test_script_installs_missing_packages_then_the_package_then_runs_pytest(
    tmp_path: Path, uid: str
) -> None:
    bin_dir, calls = _sandbox(tmp_path, uid)
    system = tmp_path / "system"
    system.mkdir()
    made = " ".join(str(system / tool) for tool in [*script_table(), "cc"])
    _fake(
        bin_dir,
        "apt-get",
        f'echo "apt-get $*" >> {calls}\n'
        f'[ "$1" = install ] && for t in {made}; do printf "" > $t; chmod +x $t; done; exit 0',
    )
    (bin_dir / "chmod").symlink_to(str(shutil.which("chmod")))
    if uid != "0":
        _fake(bin_dir, "sudo", f'echo "sudo $1" >> {calls}; exec "$@"')
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "BRUDNO_TOOL_DIRS": str(system)}

    result = _run(bin_dir, env)

    assert result.returncode == 0, result.stdout + result.stderr
    packages = {*script_table().values(), "gcc"}
    said = re.search(r"installing with apt-get: (.*)", result.stdout)
    assert said is not None, result.stdout
    assert set(said.group(1).split()) == packages
    ran = calls.read_text(encoding="utf-8").splitlines()
    if uid != "0":
        assert ran[0] == "sudo env" and ran[2] == "sudo env"
        ran = [line for line in ran if not line.startswith("sudo")]
    assert ran[0] == "apt-get update -qq"
    assert ran[1].startswith("apt-get install -y -qq ")
    assert set(ran[1].split()[4:]) == packages
    assert ran[2:] == ["python -m pip install -e .[test]", "python -m pytest -x tests/engine"]
