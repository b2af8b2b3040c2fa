#!/usr/bin/env bash
# Runs the whole suite, shows go test's package lines and failures as they
# come, keeps the full verbose log, and closes with a count of tests.
set -uo pipefail
log="${TEST_LOG:-$(mktemp -t durable-browser-test.XXXXXX)}"
echo "go test log: $log"
go test -count=1 -timeout "${TEST_TIMEOUT:-50m}" -v "$@" 2>&1 | tee "$log" \
  | grep --line-buffered -E '^(ok|FAIL|PASS|panic:|---  ?FAIL|\?|    --- FAIL|# )|^\s+[a-z_]+_test\.go:[0-9]+:|^[^ ]+\.go:[0-9]+:[0-9]+: '
status=${PIPESTATUS[0]}
passed=$(grep -cE '^\s*--- PASS' "$log" || true)
failed=$(grep -cE '^\s*--- FAIL' "$log" || true)
skipped=$(grep -cE '^\s*--- SKIP' "$log" || true)
broken=$(grep -cE '^FAIL\s.*\[(build|setup) failed\]' "$log" || true)
echo
if [ "$broken" -gt 0 ]; then
  echo "go test: ${broken} package(s) did not build; their tests did not run"
  failed=$((failed + broken))
fi
echo "go test: ${passed} passed, ${failed} failed, ${skipped} skipped"
exit "$status"
