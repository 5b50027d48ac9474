"""A fleet of search workers behind an MQTT 5 broker, and the client that asks them.

Where one server is not enough, many workers share the jobs that clients publish to an MQTT 5
broker (Mosquitto on one machine, an EMQX or HiveMQ cluster for bigger fleets).  One concept
per module, each importing only those listed before it:

* :mod:`~protocol.transports.mqtt.errors` — settings refused, a broker that refuses us.
* :mod:`~protocol.transports.mqtt.topics` — the topic tree: jobs, shared subscription, presence.
* :mod:`~protocol.transports.mqtt.wire` — reply statuses, presence, properties, the job key.
* :mod:`~protocol.transports.mqtt.backoff` — reconnection delays.
* :mod:`~protocol.transports.mqtt.connection` — one live connection; manual PUBACKs.
* :mod:`~protocol.transports.mqtt.broker` — broker URL and settings; building a client.
* :mod:`~protocol.transports.mqtt.jobs` — checking a job, collecting its replies.
* :mod:`~protocol.transports.mqtt.slots` — search processes kept across jobs.
* :mod:`~protocol.transports.mqtt.config` — a worker's settings.
* :mod:`~protocol.transports.mqtt.worker` — the worker: intake, duplicates, replies.
* :mod:`~protocol.transports.mqtt.ask` — the client: publish jobs, collect the answers.

None parses a command line, reads the environment, prints or handles signals: the commands
``brudno mqtt`` and ``brudno mqtt-ask`` (:mod:`brudno.commands.mqtt`,
:mod:`brudno.commands.mqtt_ask`) do, and hand these modules a config dataclass.

Lost workers and brokers.  A worker reconnects with exponential backoff, resubscribes,
republishes its presence and re-sends terminal replies that could not be published while the
broker was away.  What happens to a job whose worker vanished depends on the broker: the MQTT
5 spec says a broker *should* re-send an unacknowledged shared-subscription message to another
member of the group when the session ends (EMQX and HiveMQ do), but Mosquitto 2.0 drops it.
So the client side closes the gap itself (:mod:`protocol.transports.mqtt.ask`): it watches the
presence of the worker that accepted its job and re-sends the job when that worker goes
``offline`` (its Will), or when no worker accepted it within a while; the worker's memory of
recent jobs makes the resend harmless.  With a session expiry > 0 (and a stable worker id) a
worker's session, its subscription and its unacknowledged jobs outlive a dropped connection
or a restart of the worker, and the broker redelivers them when it comes back — at the price
that jobs routed to a dead worker's session wait there until it returns or the session
expires.  The default (0) suits fleets whose workers come and go.
"""
