"""Lazy SMP: one search spread over several processes that share a transposition table.

CPython's GIL runs one thread's bytecode at a time, so a parallel search needs processes.
Lazy SMP (Daniel Homan's 2013 idea, Stockfish's scheme since 2015) is the one parallel
alpha-beta that needs no communication beyond the table: every helper searches the same
root with its own iterative deepening, the table they all write (:mod:`engine.tt`, shared
and lock-free) hands each the others' results, and helpers that skip some depths
(:mod:`engine.smp.helper`) fan out to different parts of the tree.

* :mod:`engine.smp.scoreboard`: the few words the processes share besides the table (which
  search is stopped, how many nodes each helper has counted).
* :mod:`engine.smp.messages`: what goes over the pipes (typed dataclasses).
* :mod:`engine.smp.helper`: a helper process's main loop.
* :mod:`engine.smp.pool`: the main search's side: starting, steering and reaping helpers.
* :mod:`engine.smp.searcher`: :class:`~engine.smp.searcher.ParallelSearcher`, a drop-in
  :class:`~engine.search.Searcher` with a ``Threads`` setting.
"""
