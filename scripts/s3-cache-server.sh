#!/usr/bin/env bash
# Starts an S3-compatible server on 127.0.0.1:<port> for the s3:// remote cache: s3rver
# (the maintained fork @20minutes/s3rver, pinned, from npm), which checks every request's
# AWS Signature Version 4 against its one account (access key S3RVER, secret S3RVER). Used
# by tests/cache_remote_s3.rs, and handy for trying an S3 cache by hand:
#
#   scripts/s3-cache-server.sh <root-dir> <port> [bucket]
#   AWS_ENDPOINT_URL_S3=http://127.0.0.1:<port> AWS_ACCESS_KEY_ID=S3RVER \
#     AWS_SECRET_ACCESS_KEY=S3RVER agent-bundle build --remote-cache s3://<bucket>/ci ...
#   kill "$(cat <root-dir>/s3rver.pid)"
#
#   scripts/s3-cache-server.sh --install    (only install it; .ci/run does this first)
#
# The bucket (default: cache) is created empty at start; objects live under
# <root-dir>/store/<bucket>/. The server runs in the background; the script returns once it
# accepts connections and prints its pid. It is installed on first use into a cache folder
# outside the repository (AGENT_BUNDLE_TEST_SERVERS, else ~/.cache/agent-bundle/), once for
# concurrent callers.
set -euo pipefail

S3RVER_VERSION=5.0.0
dir=${AGENT_BUNDLE_TEST_SERVERS:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-bundle/test-servers}/s3rver-$S3RVER_VERSION

install() {
  mkdir -p "$dir"
  exec 9>"$dir/.lock"
  flock 9
  if [[ ! -f $dir/.installed ]]; then
    # Its package.json asks for Node 24; it runs on Node 20, which is what the machine has.
    npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error --engine-strict=false \
      "@20minutes/s3rver@$S3RVER_VERSION" >&2
    touch "$dir/.installed"
  fi
  exec 9>&-
}

if [[ ${1:-} == --install ]]; then
  install
  exit 0
fi
if [[ $# -lt 2 || $# -gt 3 ]]; then
  echo "usage: $0 <root-dir> <port> [bucket] | $0 --install" >&2
  exit 2
fi
port=$2
bucket=${3:-cache}
if [[ ! $port =~ ^[0-9]+$ ]] || ((port < 1 || port > 65535)); then
  echo "$0: bad port: $port" >&2
  exit 2
fi
if [[ ! $bucket =~ ^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$ ]]; then
  echo "$0: bad bucket name: $bucket" >&2
  exit 2
fi
command -v node >/dev/null || { echo "$0: node is not installed" >&2; exit 127; }
install

mkdir -p "$1"
root=$(cd "$1" && pwd)
mkdir -p "$root/store"
rm -f "$root/s3rver.pid"
cat >"$root/server.cjs" <<'JS'
const [modules, directory, port, bucket] = process.argv.slice(2);
const S3rver = require(`${modules}/node_modules/@20minutes/s3rver`);
const server = new S3rver({
  address: '127.0.0.1',
  port: Number(port),
  directory,
  silent: true,
  vhostBuckets: false,
  configureBuckets: [{ name: bucket, configs: [] }],
});
server.run((error) => {
  if (error) {
    console.error(error.message);
    process.exit(1);
  }
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
JS
nohup node "$root/server.cjs" "$dir" "$root/store" "$port" "$bucket" >"$root/s3rver.log" 2>&1 &
pid=$!
echo "$pid" >"$root/s3rver.pid"

for _ in $(seq 100); do
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "$0: s3rver exited:" >&2
    cat "$root/s3rver.log" >&2
    exit 1
  fi
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "$pid"
    exit 0
  fi
  sleep 0.05
done
kill "$pid" 2>/dev/null || true
echo "$0: s3rver did not accept connections on 127.0.0.1:$port" >&2
exit 1
