"""Engines against engines (and against positions): the library side of ``brudno match``,
``brudno epd`` and ``brudno tune data``; the command lines are :mod:`brudno.commands`.

A match is :mod:`~brudno.arena.settings` → :mod:`~brudno.arena.schedule` → games played by
:mod:`~brudno.arena.match` between :mod:`~brudno.arena.players`, judged by
:mod:`~brudno.arena.referee`, :mod:`~brudno.arena.clock` and
:mod:`~brudno.arena.adjudication`, from :mod:`~brudno.arena.openings`, tallied in
:mod:`~brudno.arena.results` with :mod:`~brudno.arena.stats`' numbers.  Positions are judged
by :mod:`~brudno.arena.epd` (test suites) and labelled by :mod:`~brudno.arena.tuning_data`.
"""
