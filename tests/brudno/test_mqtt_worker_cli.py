"""``brudno mqtt`` as a command: the broker options and where the password comes from, bad
settings, a broker that refuses the login, the compose file's worker, ``--eval-file-dir``."""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from brudno.cli import build_parser, main
from brudno.commands import mqtt
from brudno.commands.mqtt import add_broker_arguments, broker_from_args
from protocol.transports.mqtt.errors import MqttConfigError
from tests.support.mosquitto_fixture import Mosquitto, secure_mosquitto
from tests.support.paths import REPO


def _broker_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_broker_arguments(parser)
    return parser.parse_args(list(argv))


def test_password_comes_from_the_environment_never_the_command_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("FLEET_SECRET", "s3cret")
    settings = broker_from_args(
        _broker_args(
            "--broker", "mqtts://b:8883", "--username", "bot", "--password-env", "FLEET_SECRET"
        )
    )
    assert (settings.host, settings.port, settings.tls) == ("b", 8883, True)
    assert (settings.username, settings.password) == ("bot", "s3cret")
    assert "s3cret" not in repr(settings)

    monkeypatch.setenv("BRUDNO_MQTT_PASSWORD", "default-var")
    settings = broker_from_args(_broker_args("--username", "bot"))
    assert settings.password == "default-var"

    with pytest.raises(MqttConfigError, match="MISSING_VAR"):
        broker_from_args(_broker_args("--username", "bot", "--password-env", "MISSING_VAR"))
    with pytest.raises(MqttConfigError, match="user name"):
        broker_from_args(_broker_args("--password-env", "FLEET_SECRET"))
    with pytest.raises(MqttConfigError, match="TLS"):
        broker_from_args(_broker_args("--cafile", "ca.pem"))
    assert broker_from_args(_broker_args("--tls", "--cafile", "ca.pem")).tls


def test_worker_command_refuses_bad_settings(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["mqtt", "--broker", "http://example:80"]) == 2
    assert "bad broker URL" in capsys.readouterr().err
    assert main(["mqtt", "--prefix", "a/#"]) == 2
    assert "bad topic prefix" in capsys.readouterr().err
    assert main(["mqtt", "--tls", "--cafile", "/nonexistent/ca.pem"]) == 2
    assert "No such file" in capsys.readouterr().err


@pytest.fixture
def secure_broker(tmp_path: Path) -> Iterator[Mosquitto]:
    with secure_mosquitto(tmp_path) as broker:
        yield broker


def test_worker_command_with_a_wrong_password(
    secure_broker: Mosquitto,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BRUDNO_MQTT_PASSWORD", "wrong")
    code = main(
        [
            "mqtt",
            "--broker",
            f"mqtts://127.0.0.1:{secure_broker.port}",
            "--cafile",
            str(tmp_path / "ca.pem"),
            "--username",
            "bot",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "refused the login" in err, err


def test_compose_fleet_runs_a_real_worker_command() -> None:
    text = (REPO / "compose.yaml").read_text(encoding="utf-8")
    worker = text[text.index("\n  worker:") :]
    match = re.search(r"command:\s*(\[[^\]]*\])", worker)
    assert match, "the worker service has no command list"
    args = build_parser().parse_args(json.loads(match[1]))
    assert args.run is mqtt.run
    assert args.broker == "mqtt://mosquitto:1883"
    assert args.status_file is not None  # the image's health check reads it (tests/container)
    assert "depends_on: [mosquitto]" in worker


def test_worker_eval_file_dir_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An unusable ``--eval-file-dir`` is a startup error.  (What the directory means for the
    jobs: tests/protocol/transports/test_mqtt_worker.py.)"""
    missing = tmp_path / "nowhere"
    assert main(["mqtt", "--eval-file-dir", str(missing)]) == 2
    assert capsys.readouterr().err == f"brudno mqtt: --eval-file-dir: {missing} does not exist\n"
    args = build_parser().parse_args(["mqtt", "--eval-file-dir", str(tmp_path)])
    assert args.eval_file_dir == tmp_path


def test_worker_reply_prefixes_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    """``--reply-prefix`` widens where replies may go, never into the fleet's own trees.
    (What it means for the jobs: tests/protocol/transports/test_mqtt_hostile.py.)"""
    assert main(["mqtt", "--reply-prefix", "brudno/workers/"]) == 2
    assert "inside brudno/jobs/ or brudno/workers/" in capsys.readouterr().err
    args = build_parser().parse_args(
        ["mqtt", "--reply-prefix", "apps/chess", "--reply-prefix", "brudno/replies"]
    )
    assert mqtt.worker_config(args).reply_topics().allowed == ("apps/chess/", "brudno/replies/")
