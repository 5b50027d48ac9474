"""The lab: the classic algorithms run side by side on one tree or position, and what each
one cost (``brudno lab``; docs/lab.md).

* :mod:`~brudno.lab.sources` — what is searched: a synthetic tree or a game position;
* :mod:`~brudno.lab.runs` — running the algorithms (:func:`~brudno.lab.runs.run_lab`,
  :func:`~brudno.lab.runs.run_parallel`) into rows;
* :mod:`~brudno.lab.reports` — the rows as a table, Markdown, CSV or a plot.
"""
