"""Text in, text out: the UCI protocol, engine sessions and their transports.

The only layer that may import both ``engine`` and ``games``; it never searches itself.
"""
