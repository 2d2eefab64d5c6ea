#!/usr/bin/env bash
# Starts Debian's nginx as a remote build cache on 127.0.0.1:<port>: plain HTTP GET/HEAD/PUT
# on <url>/cas/<hex> and <url>/ac/<hex> (the Bazel HTTP cache convention) through nginx's
# built-in WebDAV module. Used by tests/cache_remote.rs, and handy for trying a shared
# cache by hand:
#
#   scripts/nginx-cache-server.sh [--tls] <root-dir> <port> [token]
#   agent-bundle build --remote-cache http://127.0.0.1:<port>/cache ...
#   kill "$(cat <root-dir>/nginx.pid)"
#
# With --tls it serves https instead, with a certificate for 127.0.0.1 and localhost from a
# throwaway CA it makes with openssl: pass `--remote-cache-ca <root-dir>/tls/ca.pem`.
#
# Everything lives under <root-dir>: nginx.conf, nginx.pid, logs/, tmp/ and the entries in
# store/ (so <url>/cache/cas/<hex> is store/cache/cas/<hex>). PUT and DELETE need
# `Authorization: Bearer <token>` (default token: secret); reads need nothing. nginx runs
# daemonized; the script returns once it accepts connections and prints its pid.
# Needs `apt-get install -y nginx` (Debian's build has --with-http_dav_module).
set -euo pipefail

tls=false
if [[ ${1:-} == --tls ]]; then
    tls=true
    shift
fi
if [[ $# -lt 2 || $# -gt 3 ]]; then
    echo "usage: $0 [--tls] <root-dir> <port> [token]" >&2
    exit 2
fi
port=$2
token=${3:-secret}
if [[ ! $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
    echo "$0: bad port: $port" >&2
    exit 2
fi
if [[ ! $token =~ ^[A-Za-z0-9._~+/=-]+$ ]]; then
    echo "$0: the token may only use A-Z a-z 0-9 . _ ~ + / = -" >&2
    exit 2
fi

nginx=$(command -v nginx || true)
if [[ -z $nginx && -x /usr/sbin/nginx ]]; then
    nginx=/usr/sbin/nginx
fi
if [[ -z $nginx ]]; then
    echo "$0: nginx is not installed; run: apt-get install -y nginx" >&2
    exit 127
fi

mkdir -p "$1"
root=$(cd "$1" && pwd)
mkdir -p "$root/store" "$root/logs" "$root"/tmp/{body,proxy,fastcgi,uwsgi,scgi}
rm -f "$root/nginx.pid"

listen="listen 127.0.0.1:$port;"
if $tls; then
    # A CA, and a server certificate it signs (rustls refuses a self-signed leaf as its
    # own root); both valid for two days.
    tls_dir=$root/tls
    mkdir -p "$tls_dir"
    key_options=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
    openssl req -x509 "${key_options[@]}" -days 2 -subj "/CN=agent-bundle test cache CA" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign" \
        -keyout "$tls_dir/ca.key" -out "$tls_dir/ca.pem" 2>/dev/null
    openssl req "${key_options[@]}" -subj "/CN=127.0.0.1" \
        -keyout "$tls_dir/server.key" -out "$tls_dir/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' \
        >"$tls_dir/server.ext"
    openssl x509 -req -days 2 -in "$tls_dir/server.csr" -CA "$tls_dir/ca.pem" -CAkey "$tls_dir/ca.key" \
        -CAcreateserial -extfile "$tls_dir/server.ext" -out "$tls_dir/server.pem" 2>/dev/null
    listen="listen 127.0.0.1:$port ssl; ssl_certificate $tls_dir/server.pem; ssl_certificate_key $tls_dir/server.key;"
fi

# As root, nginx would run its workers as nobody, who cannot write the store.
user_line=""
if [[ $(id -u) == 0 ]]; then
    user_line="user root;"
fi

cat >"$root/nginx.conf" <<CONF
# Written by scripts/nginx-cache-server.sh: a WebDAV-backed HTTP build cache.
$user_line
worker_processes 1;
pid $root/nginx.pid;
error_log $root/logs/error.log warn;

events {
    worker_connections 256;
}

http {
    # The connection's serial number shows whether requests reuse their connection.
    log_format cache '\$remote_addr "\$request" \$status connection=\$connection';
    access_log $root/logs/access.log cache;
    client_body_temp_path $root/tmp/body;
    proxy_temp_path $root/tmp/proxy;
    fastcgi_temp_path $root/tmp/fastcgi;
    uwsgi_temp_path $root/tmp/uwsgi;
    scgi_temp_path $root/tmp/scgi;
    default_type application/octet-stream;
    keepalive_timeout 30s;

    # A write (PUT, DELETE) needs the token; exact keys win over the regex.
    map "\$request_method:\$http_authorization" \$write_denied {
        default 0;
        "~^(PUT|DELETE|MKCOL|COPY|MOVE):" 1;
        "PUT:Bearer $token" 0;
        "DELETE:Bearer $token" 0;
    }

    server {
        $listen
        root $root/store;
        client_max_body_size 0;

        location / {
            if (\$write_denied) {
                return 401;
            }
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }

        # A server that takes bodies of at most 1 KiB (nginx's default is 1 MiB).
        location /small/ {
            client_max_body_size 1k;
            if (\$write_denied) {
                return 401;
            }
            dav_methods PUT DELETE;
            create_full_put_path on;
            dav_access user:rw group:r all:r;
        }

        # A cache that moved: every request is redirected there (a read may follow, an
        # upload must not).
        location /moved/ {
            rewrite ^/moved/(.*)\$ /cache/\$1 redirect;
        }

        # The same, but always to plain http (from https: a downgrade a read must not follow).
        location /downgraded/ {
            rewrite ^/downgraded/(.*)\$ http://127.0.0.1:$port/cache/\$1 redirect;
        }
    }
}
CONF

"$nginx" -p "$root" -e "$root/logs/error.log" -c "$root/nginx.conf"

# Wait until it serves (at most 10 s).
for _ in $(seq 100); do
    if [[ -s $root/nginx.pid ]] && (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        cat "$root/nginx.pid"
        exit 0
    fi
    sleep 0.1
done
echo "$0: nginx did not start on 127.0.0.1:$port; $root/logs/error.log says:" >&2
cat "$root/logs/error.log" >&2 || true
if [[ -s $root/nginx.pid ]]; then
    kill "$(cat "$root/nginx.pid")" 2>/dev/null || true
fi
exit 1
