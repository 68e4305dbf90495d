#!/bin/sh
# As the nginx images' 20-envsubst-on-templates.sh: each /etc/nginx/templates/X.template becomes
# /etc/nginx/conf.d/X with only the variables matching NGINX_ENVSUBST_FILTER (all, when unset) substituted.
set -e
template_dir="${NGINX_ENVSUBST_TEMPLATE_DIR:-/etc/nginx/templates}"
suffix="${NGINX_ENVSUBST_TEMPLATE_SUFFIX:-.template}"
output_dir="${NGINX_ENVSUBST_OUTPUT_DIR:-/etc/nginx/conf.d}"
filter="${NGINX_ENVSUBST_FILTER:-}"
[ -d "$template_dir" ] || exit 0
defined_envs=$(printf '${%s} ' $(awk "END { for (name in ENVIRON) { print ( name ~ /${filter}/ ) ? name : \"\" } }" < /dev/null))
find "$template_dir" -follow -type f -name "*$suffix" -print | while read -r template; do
    relative_path="${template#"$template_dir/"}"
    output_path="$output_dir/${relative_path%"$suffix"}"
    mkdir -p "$(dirname "$output_path")"
    echo "$0: rendering $template to $output_path"
    envsubst "$defined_envs" < "$template" > "$output_path"
done
