"""``python -m protocol`` is the same as the ``brudno`` command."""

from protocol.cli import main

raise SystemExit(main())
