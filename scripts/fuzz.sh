#!/usr/bin/env bash
# Runs each fuzz target for a bounded time (FUZZTIME, default 10s; go test
# -fuzz takes one package and one target per run) and prints one line per
# target. A target that fails fails the script. A *new* failing input found
# in this run is a discovery, not a regression: unless FUZZ_STRICT=1 (make
# fuzz), it is moved out of testdata to FUZZ_FINDINGS (default a temporary
# folder) and reported loudly, so the suite after it is not failed by an
# input nobody has triaged yet. Regressions are what the checked-in seeds in
# testdata/fuzz catch: go test runs them in every make test.
#
#   FUZZTIME=30s scripts/fuzz.sh          # the targets make test runs
#   FUZZ_ALL=1 scripts/fuzz.sh            # every fuzz target in the module
#   scripts/fuzz.sh FuzzRedact            # only the named targets
#
# Its lines never read "N passed, N failed": scripts/test.sh's count stays
# the last such line make test prints.
set -uo pipefail
cd "$(dirname "$0")/.."

# package target: run by make test (about 3 minutes at 10s each).
core=(
  "./internal/redact FuzzRedact"
  "./internal/driver FuzzSnapshotRender"
  "./internal/driver FuzzParseActions"
  "./contract/validate FuzzCall"
  "./contract FuzzCallHash"
  "./contract FuzzSummary"
  "./internal/liveview FuzzInput"
  "./internal/netguard FuzzDecideNeverSpecial"
  "./internal/tags FuzzEncode"
  "./internal/tags FuzzCleanTag"
  "./internal/tags FuzzValid"
  "./internal/scrub FuzzURL"
  "./internal/egress FuzzFrames"
  "./internal/egress FuzzExchanges"
  "./internal/egress FuzzPin"
  "./internal/egress FuzzPlainHTTP"
  "./internal/webfetch FuzzGuard"
  "./internal/netguard FuzzValidateHostList"
  "./contract FuzzApprovalMessage"
  "./contract FuzzVerifyDecision"
  "./contract FuzzParseApprovers"
  "./contract FuzzCheckExpiry"
  "./contract FuzzCallerUpdateID"
  "./internal/jsengine FuzzCell"
  "./internal/redact FuzzExpandSecrets"
  "./internal/redact FuzzOriginOf"
  "./internal/redact FuzzParseOrigins"
  "./internal/redact FuzzParseFileSource"
  "./internal/redact FuzzCheckEnv"
  "./internal/redact FuzzMatcherFind"
  "./activities FuzzVetUpload"
  "./internal/states FuzzOpen"
  "./internal/evidence FuzzReceipt"
)
# The others: their seeds run in go test; FUZZ_ALL=1 (make fuzz) fuzzes them too.
extra=(
  "./internal/redact FuzzString"
  "./internal/webfetch FuzzLegacyIPv4"
  "./internal/evidence FuzzCleanSegment"
  "./internal/webfetch FuzzParseRetryAfter"
  "./internal/oneline FuzzSafe"
  "./internal/chrome FuzzParseDevToolsActivePort"
  "./internal/chrome FuzzParseEndpoint"
  "./internal/markdown FuzzConvert"
  "./internal/websearch FuzzPlain"
  "./workflows FuzzConditionMet"
  "./cmd/durable-browser FuzzParseInterleaved"
  "./cmd/durable-browser-worker FuzzParseS3URL"
  "./internal/recorder FuzzParseChunk"
  "./internal/states FuzzValidName"
  "./contract FuzzForModel"
)

# Every Fuzz function in the module must be listed, so a new one is not forgotten.
listed=" $(printf '%s\n' "${core[@]}" "${extra[@]}" | awk '{print $2}' | tr '\n' ' ') "
unlisted=$(git grep -h -o -E '^func Fuzz[A-Za-z0-9_]+' -- '*_test.go' | awk '{print $2}' | sort -u |
  while read -r name; do [[ "$listed" == *" $name "* ]] || echo "$name"; done)
if [ -n "$unlisted" ]; then
  echo "fuzz: not listed in scripts/fuzz.sh: $unlisted"
  exit 1
fi

targets=("${core[@]}")
if [ -n "${FUZZ_ALL:-}" ]; then targets+=("${extra[@]}"); fi
if [ $# -gt 0 ]; then
  want=" $* "
  sel=()
  for t in "${core[@]}" "${extra[@]}"; do [[ "$want" == *" ${t#* } "* ]] && sel+=("$t"); done
  targets=("${sel[@]}")
fi

time=${FUZZTIME:-10s}
bad=()
found=()
start=$SECONDS
for t in "${targets[@]}"; do
  pkg=${t% *} name=${t#* }
  log=$(mktemp -t "fuzz-$name.XXXXXX")
  t0=$SECONDS
  # -fuzzminimizetime bounds the minimizing of each new input (60s by
  # default), which would otherwise eat the whole budget.
  fuzz() { go test -run '^$' -fuzz "^${name}\$" -fuzztime "$time" -fuzzminimizetime 5s "$pkg" >"$log" 2>&1; }
  # On a busy machine Go's fuzzing engine can end with "context deadline
  # exceeded" at -fuzztime without any failing input (no input is written):
  # that is the engine's own time-out, not a finding, so it is tried again once.
  engine_timeout() { ! grep -q 'Failing input' "$log" && grep -q 'context deadline exceeded' "$log"; }
  ok=0
  if fuzz; then ok=1; elif engine_timeout; then
    echo "fuzz: $name: the engine timed out at the deadline with no failing input; trying once more"
    if fuzz; then ok=1; elif engine_timeout; then
      echo "fuzz: $name: timed out again with no failing input; counted as run, not as a finding"
      ok=1
    fi
  fi
  if [ "$ok" = 1 ]; then
    execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | awk '{print $2}')
    echo "fuzz: ok   $name ($pkg) ${execs:-0} execs in $((SECONDS - t0))s"
    rm -f "$log"
  else
    input=$(grep -oE 'testdata/fuzz/[^ ]+/[0-9a-f]+' "$log" | head -1)
    if [ "${FUZZ_STRICT:-0}" != 1 ] && [ -n "$input" ] && [ -f "$pkg/$input" ]; then
      dir=${FUZZ_FINDINGS:-$(mktemp -d -t fuzz-findings.XXXXXX)}
      mkdir -p "$dir" && mv "$pkg/$input" "$dir/$name-$(basename "$input")"
      echo "fuzz: FOUND $name ($pkg): a new failing input, moved to $dir/$name-$(basename "$input"); log: $log"
      grep -E '_test.go:[0-9]+' "$log" | head -5 | sed 's/^/    /'
      found+=("$name")
    else
      echo "fuzz: FAIL $name ($pkg) after $((SECONDS - t0))s; log: $log"
      grep -E 'Failing input|--- FAIL|fuzz_test.go|_test.go:[0-9]+' "$log" | head -20 | sed 's/^/    /'
      bad+=("$name")
    fi
  fi
done
if [ ${#found[@]} -gt 0 ]; then
  echo "fuzz: NEW FINDINGS, triage them (go test -run 'Name/<id>' after copying the input back): ${found[*]}"
fi
if [ ${#bad[@]} -gt 0 ]; then
  echo "fuzz: ${#targets[@]} targets for $time each in $((SECONDS - start))s; failing: ${bad[*]}"
  exit 1
fi
echo "fuzz: ${#targets[@]} targets for $time each in $((SECONDS - start))s, none failing"
