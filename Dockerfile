# Brudno as a network service: many UCI sessions over TCP (docs/deploy.md).
#
#   docker build -t brudno .
#   docker run -d -p 4000:4000 -e BRUDNO_TOKEN="$(openssl rand -hex 24)" brudno
#
# Without a registry, make the base from Debian's packages (docker/make-base-image python) and
# pass it: --build-arg PYTHON_IMAGE=brudno-base/python:3.11-bookworm.
#
# The server binds 0.0.0.0 inside the container, which it only does with a token: it reads
# BRUDNO_TOKEN (or the file named by BRUDNO_TOKEN_FILE, e.g. a secret) and exits with an error
# when neither is set.  `docker run -i --rm brudno uci` gives the plain stdio engine instead,
# `brudno mqtt ...` a fleet worker; one health check (`brudno healthcheck`) fits all three.

ARG PYTHON_IMAGE=python:3.11-slim-bookworm

# Build stage: install the package (and its dependencies) into a virtual environment, so the
# runtime stage gets one self-contained directory and no build tools.  The install compiles
# the engine's hot modules with mypyc (setup.py), which needs a C compiler here only.
FROM ${PYTHON_IMAGE} AS build
ENV PIP_DISABLE_PIP_VERSION_CHECK=1
# The compiler comes with the base image's Debian release; pinning its version would only
# break the build at that release's next point update.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY pyproject.toml setup.py README.md ./
COPY brudno ./brudno
COPY engine ./engine
COPY games ./games
COPY protocol ./protocol
RUN python -m venv /opt/brudno \
    && /opt/brudno/bin/pip install --no-cache-dir . \
    && /opt/brudno/bin/brudno --version

FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="brudno" \
      org.opencontainers.image.description="UCI game engine server (chess, tic-tac-toe, Connect Four) over TCP" \
      org.opencontainers.image.licenses="GPL-3.0-or-later"
ENV PATH=/opt/brudno/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
# tini is PID 1: it reaps orphaned processes and passes signals on to brudno.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends tini \
    && rm -rf /var/lib/apt/lists/* \
    && useradd --system --user-group --uid 10001 --no-create-home --shell /usr/sbin/nologin brudno
COPY --from=build /opt/brudno /opt/brudno
USER 10001:10001
WORKDIR /tmp
EXPOSE 4000
# Checks whatever brudno runs here: a server answers `isready` (a full one counts as
# healthy), a worker is online, the stdio engine is alive (brudno/commands/healthcheck.py).
HEALTHCHECK --interval=30s --timeout=10s --start-period=20s --retries=3 \
    CMD ["brudno", "healthcheck"]
ENTRYPOINT ["tini", "--", "brudno"]
CMD ["serve", "--host", "0.0.0.0", "--port", "4000"]
