"""The UCI language: parsing, formatting, options, and the session state machine with the
runners where its searches run."""
