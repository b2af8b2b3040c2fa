#!/usr/bin/env bash
# Installs the peers that docs/benchmarks.md compares against, from npm,
# into PEER_DIR (default /tmp/durable-browser-peers; nothing global):
# agent-browser 0.41.2 (its npm package ships the native CLI) and
# @playwright/mcp 0.0.83 (no browser download: it runs Debian's Chromium
# through --executable-path). Prints PEER_DIR.
set -euo pipefail
peer=${PEER_DIR:-/tmp/durable-browser-peers}
mkdir -p "$peer"
cd "$peer"
if [ ! -x node_modules/agent-browser/bin/agent-browser-linux-x64 ] || [ ! -f node_modules/@playwright/mcp/cli.js ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm i --no-audit --no-fund --silent agent-browser@0.41.2 @playwright/mcp@0.0.83 >/dev/null
  # npm runs no install script here; the package's binaries are already in it.
  chmod +x node_modules/agent-browser/bin/agent-browser-linux-x64
fi
echo "$peer"
