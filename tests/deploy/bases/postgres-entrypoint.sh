#!/bin/sh
# The official postgres image's first start, in short: initdb with POSTGRES_USER as the superuser and
# POSTGRES_PASSWORD (scram), create POSTGRES_DB, accept password logins from the network; then run postgres.
set -eu
if [ ! -s "$PGDATA/PG_VERSION" ]; then
    : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD is required}"
    user="${POSTGRES_USER:-postgres}"
    pwfile=$(mktemp)
    printf '%s\n' "$POSTGRES_PASSWORD" > "$pwfile"
    initdb -D "$PGDATA" -U "$user" --pwfile="$pwfile" --auth-local=trust --auth-host=scram-sha-256 >/dev/null
    rm -f "$pwfile"
    echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
    pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start >/dev/null
    db="${POSTGRES_DB:-$user}"
    if [ "$db" != postgres ]; then createdb -U "$user" "$db"; fi
    pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
fi
if [ "$1" = postgres ]; then
    shift
    exec postgres -D "$PGDATA" -c listen_addresses='*' "$@"
fi
exec "$@"
