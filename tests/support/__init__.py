"""Test helpers shared across the suite: the UCI transcript driver, TCP and MQTT fixtures,
a scripted fake engine and a toy game.  Imported as ``tests.support.<module>``."""
