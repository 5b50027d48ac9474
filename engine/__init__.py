"""Brudno's game-agnostic search engine.

Imports neither ``games`` nor ``protocol``: games implement :class:`engine.game.Game`, the
protocol layer calls :class:`engine.search.Searcher` (or a classic algorithm's searcher from
:mod:`engine.lab.classic`); both iterate under the one :class:`engine.driver.Driver`.
"""
