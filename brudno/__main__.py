"""``python -m brudno`` is the same as the ``brudno`` command."""

from brudno.cli import main

raise SystemExit(main())
