"""Declared options and ``setoption`` validation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engine.lab.classic import UCI_ALGORITHMS
from engine.skill import EloScale
from protocol.errors import ProtocolError
from protocol.uci.engine import default_specs
from protocol.uci.options import (
    Button,
    Check,
    Combo,
    OptionError,
    Options,
    OptionSpec,
    Spin,
    String,
    UnknownOptionError,
)

VARIANTS = ("chess", "tictactoe", "connect4")


@pytest.fixture
def options() -> Options:
    return Options(default_specs(VARIANTS))


def test_strength_options_are_declared_over_the_measured_elo_range_only() -> None:
    scale = EloScale(((1400, 0.0), (1700, 12.0)), reference="test")
    specs = {spec.name: spec for spec in default_specs(VARIANTS, scale)}
    assert specs["UCI_LimitStrength"] == Check("UCI_LimitStrength", False)
    assert specs["UCI_Elo"] == Spin("UCI_Elo", 1400, 1400, 1700)
    assert "UCI_Elo" not in {spec.name for spec in default_specs(VARIANTS)}


def test_default_specs_declare_the_documented_options() -> None:
    assert default_specs(VARIANTS) == (
        Spin("Hash", 16, 1, 4096),
        Spin("Threads", 1, 1, 64),
        Spin("MultiPV", 1, 1, 256),
        Check("Ponder", False),
        Spin("Move Overhead", 30, 0, 5000),
        Button("Clear Hash"),
        Combo("UCI_Variant", "chess", VARIANTS),
        Check("UCI_Chess960", False),
        Check("UCI_ShowWDL", False),
        Check("UCI_AnalyseMode", False),
        String("UCI_Opponent", ""),
        Combo(
            "Algorithm",
            "pvs",
            (
                "pvs",
                "pvs-no-nullmove",
                "pvs-no-lmr",
                "pvs-no-futility",
                "pvs-no-see",
                "pvs-no-checkext",
                "pvs-no-tteval",
                "pvs-no-qstteval",
                "pvs-no-probcut",
                "pvs-no-historylmr",
                "pvs-no-improving",
                "pvs-no-singular",
                "pvs-no-razoring",
                "pvs-countermove",
                "pvs-fallingtime",
                *UCI_ALGORITHMS,
            ),
        ),
        String("EvalFile", ""),
        String("SyzygyPath", ""),
        Spin("SyzygyProbeDepth", 1, 1, 100),
        Check("Syzygy50MoveRule", True),
        Spin("SyzygyProbeLimit", 7, 0, 7),
        Check("OwnBook", False),
        String("BookFile", ""),
        Spin("BookDepth", 16, 1, 255),
        Spin("BookSeed", 0, 0, 2**31 - 1),
        Spin("Skill Level", 20, 0, 20),
    )


def test_variant_default_falls_back_to_the_first_variant_without_chess() -> None:
    combo = default_specs(["tictactoe", "connect4"])[6]
    assert combo == Combo("UCI_Variant", "tictactoe", ("tictactoe", "connect4"))


def test_default_specs_need_a_variant() -> None:
    with pytest.raises(ValueError, match="variant"):
        default_specs([])


def test_defaults_are_the_initial_values(options: Options) -> None:
    assert options.values() == {
        "Hash": 16,
        "Threads": 1,
        "MultiPV": 1,
        "Ponder": False,
        "Move Overhead": 30,
        "UCI_Variant": "chess",
        "UCI_Chess960": False,
        "UCI_ShowWDL": False,
        "UCI_AnalyseMode": False,
        "UCI_Opponent": "",
        "Algorithm": "pvs",
        "EvalFile": "",
        "SyzygyPath": "",
        "SyzygyProbeDepth": 1,
        "Syzygy50MoveRule": True,
        "SyzygyProbeLimit": 7,
        "OwnBook": False,
        "BookFile": "",
        "BookDepth": 16,
        "BookSeed": 0,
        "Skill Level": 20,
    }


# name as sent, value as sent, declared name, stored value
ACCEPTED: list[tuple[str, str | None, str, int | bool | str]] = [
    ("Hash", "64", "Hash", 64),
    ("hash", "1", "Hash", 1),
    ("HASH", "4096", "Hash", 4096),
    ("Hash", " 128 ", "Hash", 128),
    ("Hash", "+32", "Hash", 32),
    ("Move Overhead", "0", "Move Overhead", 0),
    ("move  overhead", "5000", "Move Overhead", 5000),
    ("MultiPV", "256", "MultiPV", 256),
    ("Threads", "1", "Threads", 1),
    ("Ponder", "true", "Ponder", True),
    ("ponder", "TRUE", "Ponder", True),
    ("UCI_ShowWDL", "True", "UCI_ShowWDL", True),
    ("UCI_Chess960", "false", "UCI_Chess960", False),
    ("UCI_Variant", "tictactoe", "UCI_Variant", "tictactoe"),
    ("uci_variant", "TicTacToe", "UCI_Variant", "tictactoe"),
    ("UCI_Variant", "Connect4", "UCI_Variant", "connect4"),
    (
        "UCI_Opponent",
        "GM 2800  human  Magnus Carlsen",
        "UCI_Opponent",
        "GM 2800  human  Magnus Carlsen",
    ),
    ("UCI_Opponent", "", "UCI_Opponent", ""),
    ("UCI_Opponent", "<empty>", "UCI_Opponent", ""),
    ("UCI_Opponent", None, "UCI_Opponent", ""),
]


@pytest.mark.parametrize(("name", "value", "declared", "stored"), ACCEPTED)
def test_set_accepts(
    options: Options, name: str, value: str | None, declared: str, stored: int | bool | str
) -> None:
    spec = options.set(name, value)
    assert spec.name == declared
    assert options[declared] == stored
    assert options[name] == stored
    assert type(options[declared]) is type(stored)


# name as sent, value as sent, exact error message
REJECTED: list[tuple[str, str | None, str]] = [
    ("Hash", "99999", "Hash: 99999 is out of range 1..4096"),
    ("Hash", "0", "Hash: 0 is out of range 1..4096"),
    ("Hash", "-5", "Hash: -5 is out of range 1..4096"),
    ("Hash", "big", "Hash: 'big' is not an integer"),
    ("Hash", "16.5", "Hash: '16.5' is not an integer"),
    ("Hash", "1_024", "Hash: '1_024' is not an integer"),
    ("Hash", "", "Hash: '' is not an integer"),
    ("Hash", None, "Hash: missing value"),
    ("Threads", "65", "Threads: 65 is out of range 1..64"),
    ("Threads", "0", "Threads: 0 is out of range 1..64"),
    ("Move Overhead", "-1", "Move Overhead: -1 is out of range 0..5000"),
    ("MultiPV", "257", "MultiPV: 257 is out of range 1..256"),
    ("Ponder", "yes", "Ponder: 'yes' is not 'true' or 'false'"),
    ("Ponder", "1", "Ponder: '1' is not 'true' or 'false'"),
    ("UCI_ShowWDL", None, "UCI_ShowWDL: missing value"),
    ("UCI_Variant", "go", "UCI_Variant: 'go' is not one of chess, tictactoe, connect4"),
    ("UCI_Variant", None, "UCI_Variant: missing value"),
    ("Contempt", "24", "unknown option 'Contempt'"),
    ("Hash Size", "24", "unknown option 'Hash Size'"),
]


@pytest.mark.parametrize(("name", "value", "message"), REJECTED)
def test_set_rejects_and_changes_nothing(
    options: Options, name: str, value: str | None, message: str
) -> None:
    before = options.values()
    with pytest.raises(OptionError) as caught:
        options.set(name, value)
    assert str(caught.value) == message
    assert options.values() == before


def test_option_error_carries_the_option_and_the_value(options: Options) -> None:
    with pytest.raises(OptionError) as caught:
        options.set("hash", "99999")
    assert (caught.value.option, caught.value.value) == ("Hash", "99999")
    assert isinstance(caught.value, ValueError)
    assert isinstance(caught.value, ProtocolError)


def test_unknown_names_are_both_option_and_key_errors(options: Options) -> None:
    with pytest.raises(UnknownOptionError) as caught:
        options["Contempt"]
    assert isinstance(caught.value, KeyError)
    assert isinstance(caught.value, OptionError)
    assert str(caught.value) == "unknown option 'Contempt'"
    assert "contempt" not in options
    assert "move overhead" in options
    assert 16 not in options


def test_button_returns_its_spec_and_stores_nothing(options: Options) -> None:
    before = options.values()
    assert options.set("clear hash", None) == Button("Clear Hash")
    assert options.set("Clear Hash", "whatever") == Button("Clear Hash")
    assert options.values() == before
    with pytest.raises(KeyError, match="button"):
        options["Clear Hash"]


def test_a_rejected_value_keeps_the_previous_one(options: Options) -> None:
    options.set("Hash", "256")
    with pytest.raises(OptionError):
        options.set("Hash", "100000")
    assert options.get_int("Hash") == 256


def test_typed_accessors(options: Options) -> None:
    options.set("Ponder", "true")
    options.set("UCI_Opponent", "none 1800 computer Brudno")
    assert options.get_int("hash") == 16
    assert options.get_bool("ponder") is True
    assert options.get_str("uci_variant") == "chess"
    assert options.get_str("UCI_Opponent") == "none 1800 computer Brudno"
    with pytest.raises(TypeError):
        options.get_int("Ponder")  # a bool is not an integer option
    with pytest.raises(TypeError):
        options.get_bool("Hash")
    with pytest.raises(TypeError):
        options.get_str("Hash")


def test_specs_keep_declaration_order(options: Options) -> None:
    assert options.specs == default_specs(VARIANTS)
    assert options.spec("multipv") == Spin("MultiPV", 1, 1, 256)


BAD_SPECS: list[tuple[list[OptionSpec], str]] = [
    ([Spin("Hash", 1, 1, 8), Check("hash", False)], "declared twice"),
]


@pytest.mark.parametrize(("specs", "message"), BAD_SPECS)
def test_options_reject_duplicate_names(specs: list[OptionSpec], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Options(specs)


@pytest.mark.parametrize(
    "build",
    [
        lambda: Spin("Hash", 0, 1, 8),
        lambda: Spin("", 1, 1, 8),
        lambda: Check("Use value", True),
        lambda: Button(" Clear Hash"),
        lambda: String("Two  Spaces", ""),
        lambda: Combo("Style", "wild", ("solid", "risky")),
        lambda: Combo("Style", "solid", ("solid", "Solid")),
        lambda: Combo("Style", "solid", ("solid", "var")),
        lambda: Combo("Style", "solid", ("solid", "very risky")),
    ],
)
def test_inconsistent_declarations_are_programming_errors(build: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        build()
