# Stand-in for postgres:16-alpine from Debian bookworm's `postgresql` (15): the official image's interface that
# docker-compose.team.yml uses: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB, data in
# /var/lib/postgresql/data (a volume), pg_isready on PATH, listening on 5432 with password authentication.
FROM webhost-test/debian:bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends postgresql \
    && rm -rf /var/lib/apt/lists/* \
    && install -d -o postgres -g postgres -m 700 /var/lib/postgresql/data \
    && install -d -o postgres -g postgres -m 2775 /var/run/postgresql
COPY postgres-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
STOPSIGNAL SIGINT
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["postgres"]
