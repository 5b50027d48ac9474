"""The Brudno application: the ``brudno`` command and the arena that plays engines against
each other.  The only package that parses command lines, installs signal handlers and prints
to a terminal."""
