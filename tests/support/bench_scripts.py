"""Import a script of ``bench/`` as a module, for tests of its functions (the scripts are
run as files, so ``bench/`` is not a package)."""

from __future__ import annotations

import importlib
import sys
from types import ModuleType

from tests.support.paths import REPO


def import_bench_script(name: str) -> ModuleType:
    """``bench/<name>.py`` imported as the module ``name``."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(REPO / "bench"))
