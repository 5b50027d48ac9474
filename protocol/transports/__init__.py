"""Carriers of UCI text: stdio, TCP, MQTT, and the stdio-to-TCP bridge.  Each only moves
lines between a channel and a session."""
