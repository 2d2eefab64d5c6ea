#!/usr/bin/env bash
# Installs the pinned host CLIs (Claude Code, Codex) from the npm registry into a cache
# folder outside the repository, and prints that folder. Idempotent: a second run with the
# same versions does nothing. Tests find the clients through AGENT_BUNDLE_HOST_CLIENTS.
set -euo pipefail

CLAUDE_VERSION=2.1.332
CODEX_VERSION=0.171.0
dir=${AGENT_BUNDLE_HOST_CLIENTS:-${XDG_CACHE_HOME:-$HOME/.cache}/agent-bundle/host-clients}
exec "$(dirname "$0")/npm-into-cache.sh" "$dir" "@anthropic-ai/claude-code@$CLAUDE_VERSION" "@openai/codex@$CODEX_VERSION"
