# Stand-in for nginxinc/nginx-unprivileged:1.27-alpine from Debian bookworm's `nginx`: runs as uid 101, listens
# on 8080 inside, includes /etc/nginx/conf.d/*.conf, and renders /etc/nginx/templates/*.template into conf.d with
# envsubst at start (limited by NGINX_ENVSUBST_FILTER), through the same /docker-entrypoint.d mechanism.
FROM webhost-test/debian:bookworm
RUN apt-get update \
    && apt-get install -y --no-install-recommends nginx-light gettext-base wget \
    && rm -rf /var/lib/apt/lists/* /etc/nginx/sites-enabled/* /etc/nginx/conf.d/* \
    && groupadd --gid 101 nginx && useradd --uid 101 --gid 101 --no-create-home --shell /bin/false nginx \
    && install -d -o 101 -g 101 /etc/nginx/conf.d /etc/nginx/templates /var/cache/nginx /docker-entrypoint.d
COPY nginx.conf /etc/nginx/nginx.conf
COPY nginx-entrypoint.sh /docker-entrypoint.sh
COPY nginx-envsubst-on-templates.sh /docker-entrypoint.d/20-envsubst-on-templates.sh
USER 101
EXPOSE 8080
STOPSIGNAL SIGQUIT
ENTRYPOINT ["/docker-entrypoint.sh"]
CMD ["nginx", "-g", "daemon off;"]
