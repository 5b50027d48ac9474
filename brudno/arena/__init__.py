"""Engines against engines: matches, the referee, statistics, openings and EPD suites."""
