#!/usr/bin/env bash
# Installs pinned npm packages into DIR, a cache folder outside the repository, once per set
# of versions, and prints DIR. Used by the install-* scripts.
#   scripts/npm-into-cache.sh DIR PACKAGE@VERSION…
set -euo pipefail
dir=$1
shift
stamp="$dir/.installed-$(printf '%s+' "$@" | tr '/@' '_-')"

if [ ! -f "$stamp" ]; then
  mkdir -p "$dir"
  # --ignore-scripts: nothing the packages ship runs at install time (the host CLIs bring
  # their native binaries as optional dependencies).
  npm install --prefix "$dir" --no-audit --no-fund --ignore-scripts --loglevel=error "$@" >&2
  touch "$stamp"
fi
echo "$dir"
