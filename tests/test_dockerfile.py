"""What can be checked about the container image without a Docker engine.

The Dockerfile is parsed here (instructions, stages, exec-form JSON) and every command it
names is run through the real argument parser; the build context is computed from
``.dockerignore`` with Docker's matching rules; and the image's install step is rehearsed by
installing that context into a fresh virtual environment and running the image's CMD and
HEALTHCHECK from it.  ``hadolint Dockerfile`` runs in ``.ci/run``.
"""

from __future__ import annotations

import asyncio
import importlib.metadata
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from brudno.cli import SUBCOMMANDS, Run, build_parser, main
from brudno.commands.serve import TOKEN_ENV
from protocol.transports.tcp.config import ServerConfig, ServerConfigError
from tests.support.paths import REPO

HANG_TIMEOUT = 120.0


def _run_of(subcommand: str) -> Run:
    """The function ``brudno SUBCOMMAND`` runs, as the command's own table loads it."""
    (spec,) = [spec for spec in SUBCOMMANDS if spec.name == subcommand]
    return spec.load()[1]


@dataclass
class Stage:
    image: str
    name: str | None
    instructions: list[tuple[str, str]] = field(default_factory=list)

    def all(self, keyword: str) -> list[str]:
        return [rest for word, rest in self.instructions if word == keyword]

    def one(self, keyword: str) -> str:
        found = self.all(keyword)
        assert len(found) == 1, f"expected one {keyword} in stage {self.name}, got {found}"
        return found[0]


def _instructions(text: str) -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction: comments dropped, continuations joined."""
    result: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.startswith("#"):
            continue  # a comment inside a continued instruction
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        whole = (pending + line).strip()
        pending = ""
        word, _, rest = whole.partition(" ")
        result.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return result


def _stages() -> list[Stage]:
    args: dict[str, str] = {}
    stages: list[Stage] = []
    for word, rest in _instructions((REPO / "Dockerfile").read_text()):
        if word == "ARG" and not stages:
            name, _, default = rest.partition("=")
            args[name] = default
        elif word == "FROM":
            image = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], rest.split()[0])
            parts = rest.split()
            name = parts[2] if len(parts) == 3 and parts[1].upper() == "AS" else None
            stages.append(Stage(image, name))
        else:
            assert stages, f"{word} before FROM"
            stages[-1].instructions.append((word, rest))
    return stages


def _exec_form(text: str) -> list[str]:
    value = json.loads(text)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
    return value


def _healthcheck_command(stage: Stage) -> list[str]:
    text = stage.one("HEALTHCHECK")
    options, _, command = text.partition(" CMD ")
    assert options.startswith("--") and command, text
    return _exec_form(command)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _pyproject() -> dict[str, object]:
    return tomllib.loads((REPO / "pyproject.toml").read_text())


# -- .dockerignore ---------------------------------------------------------------------------
def _pattern(text: str) -> re.Pattern[str]:
    """Docker's pattern syntax (Go filepath.Match plus ``**``) as a regular expression."""
    out = ""
    i = 0
    while i < len(text):
        if text.startswith("**/", i):
            out += "(?:.*/)?"  # any number of directories, including none
            i += 3
        elif text.startswith("**", i):
            out += ".*"
            i += 2
        elif text[i] == "*":
            out += "[^/]*"
            i += 1
        elif text[i] == "?":
            out += "[^/]"
            i += 1
        elif text[i] == "[":
            end = text.index("]", i)
            out += "[" + text[i + 1 : end].replace("!", "^", 1) + "]"
            i = end + 1
        else:
            out += re.escape(text[i])
            i += 1
    return re.compile(out)


def _context_files() -> list[Path]:
    """The files `docker build .` would send, per .dockerignore (last matching rule wins; a
    rule matching a parent directory applies to everything below it)."""
    rules = []
    for raw in (REPO / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        rules.append((negated, _pattern(os.path.normpath(body.strip("/")))))
    kept = []
    for path in sorted(REPO.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(REPO).as_posix()
        parts = relative.split("/")
        candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
        excluded = False
        for negated, rule in rules:
            if any(rule.fullmatch(candidate) for candidate in candidates):
                excluded = not negated
        if not excluded:
            kept.append(Path(relative))
    return kept


# -- the tests -------------------------------------------------------------------------------
def test_image_is_slim_python_satisfying_the_project() -> None:
    stages = _stages()
    final = stages[-1]
    match = re.fullmatch(r"python:(\d+\.\d+)(?:\.\d+)?-slim(?:-\w+)?", final.image)
    assert match, f"final image {final.image!r} is not a slim Python image"
    requires = _pyproject()["project"]["requires-python"]  # type: ignore[index]
    assert SpecifierSet(requires).contains(match[1]), (match[1], requires)
    for stage in stages[:-1]:  # a venv built elsewhere only runs on the same interpreter
        assert stage.image == final.image


def test_runs_as_a_non_root_user_that_the_image_creates() -> None:
    final = _stages()[-1]
    user = final.one("USER").split(":")[0]
    assert user not in ("root", "0")
    created = " ".join(final.all("RUN"))
    assert "useradd" in created and f"--uid {user}" in created


def test_entrypoint_is_the_installed_brudno_command_under_tini() -> None:
    final = _stages()[-1]
    assert _exec_form(final.one("ENTRYPOINT")) == ["tini", "--", "brudno"]
    assert re.search(r"apt-get install .*\btini\b", " ".join(final.all("RUN")))
    scripts = _pyproject()["project"]["scripts"]  # type: ignore[index]
    assert scripts["brudno"] == "brudno.cli:main"  # type: ignore[index]
    (entry,) = importlib.metadata.entry_points(group="console_scripts", name="brudno")
    assert entry.load() is main
    assert shutil.which("brudno") or Path(sys.executable).with_name("brudno").exists()


def test_cmd_and_healthcheck_are_real_subcommands_on_the_exposed_port() -> None:
    final = _stages()[-1]
    (port,) = {int(p) for p in final.one("EXPOSE").split()}
    parser = build_parser()

    cmd = _exec_form(final.one("CMD"))
    assert cmd == ["serve", "--host", "0.0.0.0", "--port", "4000"]
    args = parser.parse_args(cmd)
    assert args.run is _run_of("serve") and args.port == port
    # 0.0.0.0 is only served with a token, which the image takes from the environment.
    with pytest.raises(ServerConfigError):
        ServerConfig(host=args.host, port=args.port).check()
    assert args.token_env == TOKEN_ENV
    assert TOKEN_ENV not in " ".join(rest for _, rest in final.instructions)

    # One check for every mode: it reads what the container's brudno runs (its port, token
    # sources, status file) from that process's command line.
    assert _healthcheck_command(final) == ["brudno", "healthcheck"]
    assert parser.parse_args(["healthcheck"]).run is _run_of("healthcheck")


def test_build_context_holds_the_package_and_nothing_else() -> None:
    files = {p.as_posix() for p in _context_files()}
    build = _stages()[0]
    for source in (s for rest in build.all("COPY") for s in rest.split()[:-1]):
        assert any(f == source or f.startswith(source.rstrip("/") + "/") for f in files), source
    packages = _pyproject()["tool"]["setuptools"]["packages"]["find"]["include"]  # type: ignore[index]
    for package in (p.rstrip("*") for p in packages):  # type: ignore[union-attr]
        assert f"{package}/__init__.py" in files
        assert f"{package}/py.typed" in files
    assert "games/data/chess_weights.json" in files  # package data travels too
    assert {"pyproject.toml", "setup.py", "README.md"} <= files
    for unwanted in ("tests/", ".git/", "bench/", ".ci/", "__pycache__/", ".egg-info/"):
        assert not any(unwanted in f"/{f}" or f.startswith(unwanted) for f in files), unwanted
    # Extensions built in place by an editable install stay out: the image compiles its own.
    assert not any(f.endswith(".so") for f in files)


def test_compose_runs_a_real_serve_command() -> None:
    text = (REPO / "compose.yaml").read_text()
    match = re.search(r"command:\s*(\[[^\]]*\])", text)
    assert match, "compose.yaml has no command list"
    command = json.loads(match[1])
    args = build_parser().parse_args(command)
    assert args.run is _run_of("serve") and args.host == "0.0.0.0"
    assert "${BRUDNO_TOKEN:?" in text  # compose refuses to start without a token


@pytest.mark.slow
def test_image_install_step_rehearsed_in_a_fresh_venv(tmp_path: Path) -> None:
    """Install the build context the way the image does (``pip install .``, non-editable)
    into a new virtual environment, then run the image's CMD and HEALTHCHECK from it.

    Dependencies come from the running interpreter (``--system-site-packages``), so the test
    needs no download beyond what pip's build isolation fetches (setuptools, as in the
    image); the check that Brudno itself is imported from the venv keeps that honest."""
    context = tmp_path / "context"
    for relative in _context_files():
        target = context / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / relative, target)
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)],
        check=True,
        timeout=HANG_TIMEOUT,
    )
    python = venv / "bin" / "python"
    subprocess.run(
        [str(python), "-m", "pip", "install", "--no-input", "-q", str(context)],
        check=True,
        timeout=HANG_TIMEOUT * 3,
    )
    where = subprocess.run(
        [
            str(python),
            "-c",
            "import protocol; from games.registry import GAMES; "
            "print(protocol.__file__); print(GAMES['chess'].new().fen())",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=HANG_TIMEOUT,
        cwd=tmp_path,
    ).stdout.splitlines()
    assert where[0].startswith(str(venv)), where
    assert where[1].startswith("rnbqkbnr/pppppppp")  # package data (weights) installed

    final = _stages()[-1]
    cmd = _exec_form(final.one("CMD"))
    cmd[cmd.index("--port") + 1] = str(_free_port())  # the health check needs a fixed port
    env = {k: v for k, v in os.environ.items() if not k.startswith(TOKEN_ENV)}
    env.update({TOKEN_ENV: "rehearsal-token", "PATH": f"{venv / 'bin'}:{env['PATH']}"})
    asyncio.run(_serve_and_check_health(venv, cmd, _healthcheck_command(final), env, tmp_path))


async def _serve_and_check_health(
    venv: Path, cmd: list[str], health: list[str], env: dict[str, str], cwd: Path
) -> None:
    server = await asyncio.create_subprocess_exec(
        str(venv / "bin" / "brudno"), *cmd, stderr=asyncio.subprocess.PIPE, env=env, cwd=cwd
    )
    assert server.stderr is not None
    try:
        port = None
        seen: list[bytes] = []
        while port is None:
            line = await asyncio.wait_for(server.stderr.readline(), HANG_TIMEOUT)
            assert line, f"serve exited before listening: {seen}"
            seen.append(line)
            if found := re.search(rb"event=listening address=\S+:(\d+)", line):
                port = int(found[1])
        assert port == int(cmd[cmd.index("--port") + 1])
        # Outside a container PID 1 is not brudno: point the check at the server.
        probe = [str(venv / "bin" / health[0]), *health[1:], "--pid", str(server.pid)]
        checker = await asyncio.create_subprocess_exec(*probe, env=env, cwd=cwd)
        assert await asyncio.wait_for(checker.wait(), HANG_TIMEOUT) == 0
        wrong = await asyncio.create_subprocess_exec(
            *probe,
            env={**env, TOKEN_ENV: "wrong"},
            cwd=cwd,
            stderr=asyncio.subprocess.DEVNULL,
        )
        assert await asyncio.wait_for(wrong.wait(), HANG_TIMEOUT) == 1
        server.send_signal(signal.SIGTERM)
        await asyncio.wait_for(server.stderr.read(), HANG_TIMEOUT)
        assert await asyncio.wait_for(server.wait(), HANG_TIMEOUT) == 0
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
