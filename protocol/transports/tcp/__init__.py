"""UCI sessions over TCP: one per connection, searching in worker processes.

``server`` (the server and its connections), ``config`` (settings, the token rule), ``sink``
(bounded output), ``lines`` (bounded input), ``pending_auth`` (connections not yet
authenticated), ``memory`` (the Hash budget), ``wire`` (what clients recognise).  Nothing is
imported here, so a client that needs only ``wire`` does not load the server.
"""
