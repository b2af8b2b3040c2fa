#!/usr/bin/env bash
# Runs the whole suite, shows go test's package lines and failures as they
# come, keeps the full verbose log, and closes with a count of tests.
#
# With CONTEXT_TESTS set (a -run pattern; make test sets it), the tests it
# names in ./test, ./test/crash and ./test/wire run a second time with every
# plain session a browser context of a shared Chrome
# (DURABLE_BROWSER_ISOLATION=context): the boundary, egress, leak-scan, crash
# and load-invariant tests, shown in both isolation modes. Their count joins
# the one at the end.
set -uo pipefail
log="${TEST_LOG:-$(mktemp -t durable-browser-test.XXXXXX)}"
echo "go test log: $log"
shown='^(ok|FAIL|PASS|panic:|---  ?FAIL|\?|    --- FAIL|# )|^\s+[a-z_]+_test\.go:[0-9]+:|^[^ ]+\.go:[0-9]+:[0-9]+: '
go test -count=1 -timeout "${TEST_TIMEOUT:-50m}" -v "$@" 2>&1 | tee "$log" | grep --line-buffered -E "$shown"
status=${PIPESTATUS[0]}
if [ -n "${CONTEXT_TESTS:-}" ]; then
  echo
  echo "the same boundary, egress, leak-scan, crash and load-invariant tests under --isolation context:"
  DURABLE_BROWSER_ISOLATION=context go test -count=1 -timeout "${TEST_TIMEOUT:-50m}" -v -run "$CONTEXT_TESTS" ./test/ ./test/crash/ ./test/wire/ 2>&1 \
    | tee -a "$log" | grep --line-buffered -E "$shown"
  lane=${PIPESTATUS[0]}
  if [ "$status" -eq 0 ]; then status=$lane; fi
fi
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
