#!/usr/bin/env bash
# Whole-command timings with hyperfine (Debian's package) on the generated monorepo:
# cold build (empty cache), warm build (full cache; no artifact, or the artifact kept with
# every input touched or without its stamp) and no-op rebuild.
#
#   benches/hyperfine.sh [plugins] [hooks]      # default 100 × 10
#   BENCH_SHARED=1 benches/hyperfine.sh         # handlers importing shared/log.ts above the plugins
# The no-op waits out the stamps' one-second racy window first (as a developer's next build
# would): files a build just wrote are never trusted by their times alone. Trees removed
# between runs are moved aside, not deleted (see `discard` in benches/build_graph.rs: on
# ext4, creating files right after thousands were deleted is several times slower).
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet
bin=$PWD/target/release/agent-bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
BENCH_PLUGINS=${1:-100} BENCH_HOOKS=${2:-10} cargo bench --quiet --bench build_graph -- --generate "$work/repo"
cd "$work/repo"
printf '#!/bin/sh\nfor tree in "$@"; do [ -e "$tree" ] && mv "$tree" "$(mktemp -d -p %s)/"; done; true\n' "$work" >"$work/discard"
chmod +x "$work/discard"
clean="$work/discard plugins/*/artifact"
unstamp="$work/discard plugins/*/.agent-bundle"
# New times, same bytes (a branch switched and back), a second after the last publish.
touch_inputs="sleep 1.1; find plugins \( -name artifact -o -name .agent-bundle \) -prune -o -type f -exec touch {} +"
hyperfine --warmup 1 --runs 5 \
  --prepare "$clean; $work/discard $work/cold-cache" -n cold "$bin build --workspace . --cache-dir $work/cold-cache" \
  --prepare "$clean" -n warm "$bin build --workspace . --cache-dir $work/warm-cache" \
  --prepare "$touch_inputs" -n warm-inputs-touched "$bin build --workspace . --cache-dir $work/warm-cache" \
  --prepare "$unstamp" -n warm-stamp-lost "$bin build --workspace . --cache-dir $work/warm-cache" \
  --prepare "sleep 1.1" -n no-op "$bin build --workspace . --cache-dir $work/warm-cache"
