"""Where the repository and the shared test data are (``../shared/data`` beside the checkout;
read from there, never copied into the project)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data"
