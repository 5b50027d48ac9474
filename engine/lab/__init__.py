"""The textbook algorithms (minimax to SSS*/DUAL*, expectiminimax) and the synthetic trees
they are measured on: readable reference code with exact node counts, for ``brudno lab``."""
