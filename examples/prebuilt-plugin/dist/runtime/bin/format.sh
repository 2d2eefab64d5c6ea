#!/bin/sh
# Kept executable in the artifact: payload files keep their modes.
exec node "$(dirname "$0")/../hook/index.js" "$@"
