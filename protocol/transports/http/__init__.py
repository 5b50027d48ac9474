"""Operating a service over HTTP: Prometheus metrics, health probes and a live status page.

``brudno serve`` and ``brudno mqtt`` start it with ``--metrics-port``.  The pieces:
``config`` (settings and the loopback-or-token rule), ``auth`` (who may see what),
``metrics`` (the Prometheus registry of one service), ``tap`` (what one session is doing,
noted from its lines), ``monitor`` (the sessions of one service: the observer the transports
feed), ``board`` (positions as SVG), ``status`` (the page's data model), ``feed`` (the page's
server-sent events), ``server`` (the HTTP routes), ``assets/`` (the page itself, served from
here: no CDN).  Nothing is imported here, so the transports load none of it unless asked.
"""
