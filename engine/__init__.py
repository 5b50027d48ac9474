"""Brudno's game-agnostic search engine.

Imports neither ``games`` nor ``protocol``: games implement :class:`engine.game.Game`, the
protocol layer calls :class:`engine.search.Searcher`.
"""
