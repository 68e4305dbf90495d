# Stand-in for python:3.11-slim, built from Debian bookworm's own packages (public image registries are out of
# reach in CI). It keeps the official image's conventions the project's Dockerfile relies on: `python`, `pip`
# on PATH in /usr/local/bin, `pip install` into the system interpreter (no PEP 668 marker), console scripts in
# /usr/local/bin, ca-certificates present, apt usable.
FROM webhost-test/debian:bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-pip python3-venv ca-certificates \
    && rm -rf /var/lib/apt/lists/* \
    && rm -f /usr/lib/python3.*/EXTERNALLY-MANAGED \
    && ln -s /usr/bin/python3 /usr/local/bin/python \
    && ln -s /usr/bin/python3 /usr/local/bin/python3 \
    && ln -s /usr/bin/pip3 /usr/local/bin/pip
# The machine's trust store (scripts/test-deploy copies it beside this file): pip and npm inside builds trust
# what this machine trusts, a TLS-inspecting proxy's certificate included.
COPY ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
ENV LANG=C.UTF-8
CMD ["python3"]
