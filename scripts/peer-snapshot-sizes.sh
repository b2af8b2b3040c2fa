#!/usr/bin/env bash
# Snapshot sizes of the corpus pages (internal/driver/testdata/corpus) in
# agent-browser 0.41.2 against ours, for docs/benchmarks.md. Everything stays
# on loopback: the corpus is served by python3's http.server, agent-browser
# connects to a Debian Chromium started here, and ours are rendered by
# TestSnapshotCorpus. Prints one row per page (sizes in characters, and the
# actionable elements each lists) and the interactive total; the renderings
# stay in OUT.
#
#   scripts/peer-snapshot-sizes.sh            # OUT defaults to a temporary folder
#
# agent-browser comes from npm into PEER_DIR (scripts/install-peers.sh, default
# /tmp/durable-browser-peers; nothing is installed globally). Characters are
# counted as wc -m counts them.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
peer=${PEER_DIR:-/tmp/durable-browser-peers}
out=${OUT:-$(mktemp -d -t peer-sizes.XXXXXX)}
chrome=${CHROME_PATH:-/usr/bin/chromium}
mkdir -p "$out/ours" "$out/agent-browser"

PEER_DIR=$peer scripts/install-peers.sh >/dev/null
ab="$peer/node_modules/agent-browser/bin/agent-browser-linux-x64"

work=$(mktemp -d -t peer-sizes-run.XXXXXX)
pids=()
cleanup() {
  # The daemon agent-browser started lives under our HOME; close it first.
  HOME="$work/home" "$ab" close --all >/dev/null 2>&1 || true
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/home"

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory internal/driver/testdata/corpus "$port" >/dev/null 2>&1 &
pids+=($!)
"$chrome" --headless=new --no-sandbox --no-first-run --no-default-browser-check --disable-gpu \
  --user-data-dir="$work/profile" --remote-debugging-address=127.0.0.1 --remote-debugging-port=0 \
  --window-size=1280,720 about:blank >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [ -s "$work/profile/DevToolsActivePort" ] && break
  sleep 0.1 # waiting for Chrome to write its port: no event to wait on from a shell
done
cdp=$(head -1 "$work/profile/DevToolsActivePort")
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/" >/dev/null && break
  sleep 0.1
done

abx() { HOME="$work/home" AGENT_BROWSER_SESSION=peer-sizes "$ab" "$@"; }
abx connect "$cdp" >/dev/null
abx set viewport 1280 720 >/dev/null

# Ours: the same pages through the driver, written out by TestSnapshotCorpus
# (also when it fails, as it does for a page with no agent-browser figures yet).
DURABLE_BROWSER_CORPUS_OUT="$out/ours" go test -count=1 -run '^TestSnapshotCorpus$' ./internal/driver/ >"$out/ours/test.log" ||
  echo "TestSnapshotCorpus failed; see $out/ours/test.log" >&2

# agent-browser's actionable elements: refs of the roles one acts on, or
# that it marks clickable (a pointer, an onclick, a tabindex).
actionable() {
  grep -E '\[ref=e[0-9]+' "$1" | grep -cE '^\s*- (link|button|textbox|searchbox|combobox|listbox|option|checkbox|radio|switch|slider|spinbutton|menuitem|menuitemcheckbox|menuitemradio|tab|treeitem|LabelText)\b|clickable' || true
}

printf '%-28s %10s %10s %6s %10s %10s %6s %8s %8s\n' page ours-i ab-i ratio ours-full ab-full ratio ours-act ab-act
ti=0
ta=0
for f in internal/driver/testdata/corpus/*.html; do
  name=$(basename "$f" .html)
  abx open "http://127.0.0.1:$port/$name.html" >/dev/null
  abx snapshot -i >"$out/agent-browser/$name.interactive.txt"
  abx snapshot >"$out/agent-browser/$name.full.txt"
  oi=$(wc -m <"$out/ours/$name.interactive.txt")
  ai=$(wc -m <"$out/agent-browser/$name.interactive.txt")
  of=$(wc -m <"$out/ours/$name.full.txt")
  af=$(wc -m <"$out/agent-browser/$name.full.txt")
  printf '%-28s %10d %10d %6.2f %10d %10d %6.2f %8d %8d\n' "$name.html" "$oi" "$ai" "$(awk "BEGIN{print $oi/$ai}")" "$of" "$af" "$(awk "BEGIN{print $of/$af}")" \
    "$(cat "$out/ours/$name.actionable")" "$(actionable "$out/agent-browser/$name.interactive.txt")"
  ti=$((ti + oi))
  ta=$((ta + ai))
done
printf '%-28s %10d %10d %6.2f\n' total "$ti" "$ta" "$(awk "BEGIN{print $ti/$ta}")"
echo "renderings in $out (repo $repo)"
