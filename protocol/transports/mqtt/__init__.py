"""A fleet of search workers behind an MQTT 5 broker, and the client that asks them."""
