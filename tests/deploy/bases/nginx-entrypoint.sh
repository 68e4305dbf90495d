#!/bin/sh
# The nginx images' entry point: run /docker-entrypoint.d/*.sh, then nginx.
set -e
if [ "$1" = nginx ]; then
    for script in /docker-entrypoint.d/*.sh; do
        [ -x "$script" ] && "$script"
    done
fi
exec "$@"
