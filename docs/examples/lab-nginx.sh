#!/bin/sh
# lab-nginx.sh — nginx as the server of `speedy lab run` (docs/lab.md, "Other servers"):
#
#   speedy lab run --write-site SITE --server-cmd 'exec sh docs/examples/lab-nginx.sh "$@"' ...
#
# Arguments as `speedy lab run` passes them: $1 plan (unused), $2 certificate chain, $3
# key, $4 port (443 means TLS), $5 the page's --write-site directory, $6 the load's own
# directory. Writes $6/nginx.conf and runs nginx in the foreground, one process, errors on
# stderr (the load's server.log). One server block serves every host of the page from
# $5/<host>/ by the Host header, so the same configuration works in multi-domain runs
# (one address per host, all of them listened on) and single-domain runs (one address,
# the recorded host names in Host); $5/replay-site.map sends the request targets that are
# not plain file names (queries, escapes, "/" → index.html) to their files.
# $NGINX names the nginx binary (default: nginx on $PATH). tests/lab/nginx_baseline.sh
# runs this file.
set -eu
chain=$2 key=$3 port=$4 site=$5 dir=$6
[ -n "$site" ] || { echo "lab-nginx.sh: no site directory (run with --write-site)" >&2; exit 1; }
if [ "$port" = 443 ]; then
  # As speedyd in the lab: TLS 1.2, no resumption (every load is cold). The lab's TLS 1.3
  # variant (--tls-version 1.3) needs "TLSv1.2 TLSv1.3" here.
  listen="listen 443 ssl;
    ssl_certificate $chain;
    ssl_certificate_key $key;
    ssl_protocols TLSv1.2;
    ssl_session_cache off;
    ssl_session_tickets off;"
else
  listen="listen $port;"
fi
# Content-Type by extension from the installation's mime.types, where there is one.
nginx=${NGINX:-nginx}
conf_path=$("$nginx" -V 2>&1 | sed -n 's/.*--conf-path=\([^ ]*\).*/\1/p')
types=
[ -n "$conf_path" ] && [ -f "${conf_path%/*}/mime.types" ] && types="include ${conf_path%/*}/mime.types;"
mkdir -p "$dir/nginx-temp"
cat >"$dir/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
pid $dir/nginx.pid;
error_log stderr;
events { worker_connections 512; }
http {
  access_log off;
  client_body_temp_path $dir/nginx-temp/body;
  proxy_temp_path $dir/nginx-temp/proxy;
  fastcgi_temp_path $dir/nginx-temp/fastcgi;
  uwsgi_temp_path $dir/nginx-temp/uwsgi;
  scgi_temp_path $dir/nginx-temp/scgi;
  $types
  default_type application/octet-stream;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 120s;
  keepalive_requests 10000;
  server_tokens off;
  map_hash_bucket_size 256;
  map "\$host\$request_uri" \$replay_file {
    default "/\$host\$uri";
    include $site/replay-site.map;
  }
  server {
    $listen
    root $site;
    location / { try_files \$replay_file =404; }
  }
}
CONF
exec "$nginx" -c "$dir/nginx.conf" -p "$dir" -e stderr
