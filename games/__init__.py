"""Game adapters: legal moves, make/unmake, keys, features and weights.

Games import only the engine's contract (and python-chess).  The registry of variants is
:mod:`games.registry`, written out explicitly; importing a game module has no side effects.
"""
