"""argparse value types shared by the subcommands, so every tool words its complaints alike."""

from __future__ import annotations

import argparse
import math


def _integer(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None


def positive_int(text: str) -> int:
    value = _integer(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    return value


def non_negative_int(text: str) -> int:
    value = _integer(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def seconds(text: str) -> float:
    """A duration in seconds, 0 or more (fractions allowed)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must not be negative: {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A finite duration in seconds above 0 (a timeout of 0, a negative one or ``nan`` would
    end everything at once)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a positive number of seconds: {text!r}")
    return value


def fraction(text: str) -> float:
    """A number from 0 to 1 (a weight, a share)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be from 0 to 1: {text!r}")
    return value


def name_value(text: str) -> tuple[str, str]:
    """``NAME=VALUE`` (a UCI option for an engine) as ``(NAME, VALUE)``, both stripped.

    The value may be empty (``EvalFile=``) or hold ``=`` itself; the name may not be empty.
    The one place that splits such words, whether argparse calls it as a ``type`` or a
    command checks a list later (the error is then re-worded as that command's own)."""
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {text!r}")
    return name.strip(), value.strip()
