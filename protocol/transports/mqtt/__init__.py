"""A fleet of search workers behind an MQTT 5 broker, and the client that asks them.

One concept per module, each importing only those listed before it: ``errors`` (settings
refused, a broker that refuses us), ``topics`` (the topic tree), ``wire`` (reply statuses,
presence, properties, the job key), ``backoff`` (reconnection delays), ``connection`` (one
live connection, manual PUBACKs), ``broker`` (URL and settings, building a client), ``jobs``
(checking a job, collecting its replies), ``slots`` (search processes kept across jobs),
``config`` (a worker's settings), ``worker`` (intake, duplicates, replies) and ``ask`` (the
client).

None parses a command line, reads the environment, prints or handles signals: ``brudno mqtt``
and ``brudno mqtt-ask`` (:mod:`brudno.commands.mqtt`, :mod:`brudno.commands.mqtt_ask`) do,
and hand these modules a config dataclass.  Workers reconnect by themselves; a job whose
worker vanished is re-sent by the client (:mod:`protocol.transports.mqtt.ask`), since not
every broker hands it to another worker.

Why, and what each broker does: docs/deploy.md, *When a worker or the broker goes away* and
*Why the services are built as they are*.
"""
