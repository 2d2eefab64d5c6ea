#!/usr/bin/env bash
# Whole-command timings with hyperfine (Debian's package) on the generated monorepo:
# cold build (empty cache), warm build (full cache, no artifact) and no-op rebuild.
#
#   benches/hyperfine.sh [plugins] [hooks]      # default 100 × 10
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { apt-get update -qq && apt-get install -y -qq hyperfine >/dev/null; }
cargo build --release --quiet
bin=$PWD/target/release/agent-bundle
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
BENCH_PLUGINS=${1:-100} BENCH_HOOKS=${2:-10} cargo bench --quiet --bench build_graph -- --generate "$work/repo"
cd "$work/repo"
clean='find plugins -maxdepth 2 -name artifact -type d -exec rm -rf {} +'
hyperfine --warmup 1 --runs 5 \
  --prepare "$clean; rm -rf $work/cold-cache" -n cold "$bin build --workspace . --cache-dir $work/cold-cache" \
  --prepare "$clean" -n warm "$bin build --workspace . --cache-dir $work/warm-cache" \
  --prepare true -n no-op "$bin build --workspace . --cache-dir $work/warm-cache"
