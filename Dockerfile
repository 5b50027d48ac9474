# Brudno UCI engine.  The image runs `brudno` (UCI on stdio) by default:
#   docker build -t brudno . && docker run -i --rm brudno
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
COPY pyproject.toml README.md ./
COPY engine ./engine
COPY games ./games
COPY protocol ./protocol
RUN pip install --no-cache-dir . \
    && useradd --create-home --uid 10001 brudno

USER brudno
ENTRYPOINT ["brudno"]
CMD ["uci"]
