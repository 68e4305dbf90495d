# webhost: the host page and the app sandbox in one process, run as a non-root user.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

# Node is here only so stdio servers started with `npx` work inside the container.
RUN apt-get update \
    && apt-get install -y --no-install-recommends nodejs npm curl \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md requirements.lock ./
COPY webhost ./webhost
COPY sandbox_proxy ./sandbox_proxy
RUN pip install -c requirements.lock .

RUN useradd --create-home --uid 10001 webhost \
    && mkdir -p /data && chown webhost:webhost /data
USER webhost
WORKDIR /home/webhost

EXPOSE 8700 8701
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \
    CMD curl -fsS http://127.0.0.1:8700/healthz || exit 1

# Inside the container webhost must listen on every interface so the published ports reach it;
# docker-compose.yml publishes them on the host's loopback only.
ENTRYPOINT ["webhost", "serve", "--host", "0.0.0.0", "--allow-remote", "--data-dir", "/data"]
CMD []
