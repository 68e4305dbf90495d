# webhost: the host page and the app sandbox in one process, run as a non-root user (docs/deploy.md).
#
#   docker build -t webhost:latest .
#   docker build --build-arg WITH_NODE=0 -t webhost:latest .          # without Node (no `npx` servers): smaller
#   docker build --build-arg EXTRA_CA_CERTS="$(cat proxy-ca.pem)" .     # behind a TLS-inspecting proxy
#   docker build --build-arg VERSION=0.1.0 .                            # the image's version label
#
# Two stages: the first installs the package into a virtual environment and trims it (debug symbols stripped from
# the compiled extensions, pip and setuptools removed); the image keeps only that environment, so the source
# tree, pip's build files and binutils stay behind.

# PEM certificates added to the trust store before anything is downloaded: a build behind a proxy that inspects
# TLS needs its certificate for pip and apt-get (and npm, and the servers webhost later starts). Both stages.
ARG EXTRA_CA_CERTS=""

FROM python:3.11-slim AS build
ARG EXTRA_CA_CERTS
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_CERT=/etc/ssl/certs/ca-certificates.crt
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" >> /etc/ssl/certs/ca-certificates.crt; \
    fi \
    && apt-get update \
    && apt-get install -y --no-install-recommends binutils \
    && rm -rf /var/lib/apt/lists/*
# .dockerignore lets in only what the package needs.
COPY . /src/
# The wheels' extensions ship with debug symbols (uvloop's 13 MB is 1.6 MB without); the .pyc files stay, since a
# read-only root filesystem could not cache them and every start would compile everything again.
RUN python -m venv /opt/venv \
    && /opt/venv/bin/pip install -c /src/requirements.lock /src \
    && /opt/venv/bin/pip uninstall -y pip setuptools \
    && find /opt/venv -name '*.so*' -type f -exec strip --strip-unneeded {} +

FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH \
    NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt \
    HOME=/home/webhost \
    npm_config_cache=/tmp/npm-cache

# Inside the container webhost must listen on every interface so the published ports reach it;
# docker-compose.yml publishes them on the host's loopback only. /data is webhost's (a volume); /tmp is the only
# other place it writes, so the root filesystem may be read-only.
EXPOSE 8700 8701
# Python rather than curl: one package fewer in the image.
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8700/healthz', timeout=2).status != 200)"]
ENTRYPOINT ["webhost", "serve", "--host", "0.0.0.0", "--allow-remote", "--data-dir", "/data"]
CMD []
WORKDIR /home/webhost

ARG EXTRA_CA_CERTS
RUN if [ -n "$EXTRA_CA_CERTS" ]; then \
        printf '%s\n' "$EXTRA_CA_CERTS" >> /etc/ssl/certs/ca-certificates.crt; \
    fi \
    && useradd --create-home --uid 10001 webhost \
    && mkdir -p /data && chown webhost:webhost /data

ARG VERSION=unknown
LABEL org.opencontainers.image.title="webhost" \
      org.opencontainers.image.version="$VERSION"

# Every instruction after a large layer costs a copy of the whole filesystem on some storage drivers (vfs), so
# the settings come first and the two large layers (the environment, Node) last.
COPY --from=build /opt/venv /opt/venv

# Node only so stdio servers started with `npx` work inside the container; WITH_NODE=0 leaves it out. Last, so
# both variants share every layer above.
ARG WITH_NODE=1
RUN if [ "$WITH_NODE" = 1 ]; then \
        apt-get update \
        && apt-get install -y --no-install-recommends nodejs npm \
        && rm -rf /var/lib/apt/lists/*; \
    fi
USER webhost
