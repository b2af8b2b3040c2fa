#!/usr/bin/env bash
# What a client verb's start costs: the binaries' sizes, GNU time's figures
# for one run of `version` and of `tools`, then BenchmarkStart (p50 wall time
# and peak RSS over many runs). Target: under 10 ms and 20 MiB.
#   scripts/bench-cli.sh [bin/durable-browser]
set -euo pipefail
bin="${1:-bin/durable-browser}"
dir="$(dirname "$bin")"
echo "== sizes"
ls -l "$dir"/durable-browser "$dir"/durable-browser-worker "$dir"/durable-browser-mcp "$dir"/durable-browser-dev 2>/dev/null | awk '{printf "%-32s %6.1f MB\n", $9, $5/1e6}'
if [ -x /usr/bin/time ]; then
  for verb in version tools; do
    echo "== /usr/bin/time -v $bin $verb"
    /usr/bin/time -v "$bin" "$verb" 2>&1 >/dev/null | grep -E 'Elapsed|Maximum resident|User time|System time'
  done
else
  echo "(no /usr/bin/time: GNU time is needed for the peak memory figures)"
fi
echo "== BenchmarkStart"
DURABLE_BROWSER_BIN="$(cd "$dir" && pwd)/$(basename "$bin")" \
  go test -run '^$' -bench '^BenchmarkStart$' -benchtime 200x -count "${COUNT:-3}" ./cmd/durable-browser/ | grep -E '^Benchmark|^ok|FAIL'
