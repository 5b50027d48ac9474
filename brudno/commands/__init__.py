"""One module per ``brudno`` subcommand: argparse, then a library call."""
