#!/usr/bin/env bash
# Installs the pinned TypeScript compiler and Node's type declarations from the npm registry
# into a cache folder outside the repository, and prints that folder. Idempotent. The tests
# type-check the examples against the declarations `agent-bundle types` writes.
set -euo pipefail

TYPESCRIPT_VERSION=5.9.3
NODE_TYPES_VERSION=20.19.25
dir=${AGENT_BUNDLE_TYPESCRIPT:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-bundle/typescript}
exec "$(dirname "$0")/npm-into-cache.sh" "$dir" "typescript@$TYPESCRIPT_VERSION" "@types/node@$NODE_TYPES_VERSION"
