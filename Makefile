# durable-browser: the README's two commands are `make run` and `make test`.
GO       ?= go
# Four binaries, side by side. bin/durable-browser holds the client verbs and
# starts in milliseconds; its `worker`, `mcp` and `dev` verbs exec the other
# three (found beside it), which hold the heavy dependencies: rod, the AWS SDK
# and html-to-markdown for the worker, the MCP SDK for mcp, plus the Temporal
# server and UI for dev.
BIN       := bin/durable-browser
WORKERBIN := bin/durable-browser-worker
MCPBIN    := bin/durable-browser-mcp
DEVBIN    := bin/durable-browser-dev
GOBIN    := $(shell $(GO) env GOPATH)/bin
PKGS     := ./...
# Linters, pinned; `make lint-tools` installs them into GOBIN with go install.
STATICCHECK_VERSION   := v0.8.2
WORKFLOWCHECK_VERSION := v0.6.0
# The unit lane leaves out what needs Chromium, an S3 server (versitygw) or
# the Temporal server: whole packages that start one for their tests ...
UNIT_HEAVY_PKGS  := test internal/driver internal/capture internal/devstack providers/local providers/cdp
# ... and the tests that start one in otherwise light packages.
UNIT_HEAVY_TESTS := ^(TestS3Store|TestS3SSE|TestEvidenceGet)$$
# make test runs these again under --isolation context (every plain session a
# browser context of one shared Chrome), so the boundary, egress, leak-scan,
# crash and load-invariant tests hold in both isolation modes (scripts/test.sh).
CONTEXT_TESTS := ^(TestSecretNeverLeaves|TestEgress.*|TestBoundariesRefuseModelChoices|TestGuardedNavigationAnswersBlocked|TestMCPGuardedNavigationAnswersBlocked|TestWarmBrowserEndpointIsAService|TestWorkerKilledMidRun|TestTwoWorkersShareByHostQueue|TestOrphanedSessionReleased|TestBusyHostGivesBackItsBrowser|TestWorkerStoppedMidRun|TestCancelledSessionReleasesBrowser|TestDemoCrash|TestCrashMatrix|TestCrashRestore|TestLeakScan|TestLoadInvariants|TestLoadWorkerKilled)$$
MODULE   := $(shell $(GO) list -m)
export PATH := $(GOBIN):$(PATH)

.PHONY: all build run test test-unit fuzz lint lint-tools bench bench-cli tools chromium versitygw ffmpeg clean reliability

all: build

# The client, worker and mcp binaries are static (CGO_ENABLED=0, as in the
# Dockerfile): not mapping libc saves ~2 MiB at every client verb's start.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/durable-browser
	CGO_ENABLED=0 $(GO) build -o $(WORKERBIN) ./cmd/durable-browser-worker
	CGO_ENABLED=0 $(GO) build -o $(MCPBIN) ./cmd/durable-browser-mcp
	$(GO) build -o $(DEVBIN) ./cmd/durable-browser-dev

tools: chromium versitygw ffmpeg

chromium:
	@scripts/install-chromium.sh

versitygw:
	@scripts/install-versitygw.sh

# ffmpeg makes the WebM of `durable-browser recording get` (docs/recording.md).
ffmpeg:
	@scripts/install-ffmpeg.sh

# Starts the whole stack on loopback, runs the smoke workflow, keeps serving until Ctrl-C.
run: build tools
	$(BIN) dev --smoke

# Lint first, then each fuzz target for FUZZTIME (10s; about 2 minutes in
# all), then the whole suite. The suite runs even when fuzzing fails, and its
# count ("go test: N passed, N failed, N skipped") stays the last line. CI
# (.ci/run) runs exactly this.
test: lint build tools
	@scripts/fuzz.sh; fuzz=$$?; CONTEXT_TESTS='$(CONTEXT_TESTS)' scripts/test.sh $(PKGS); suite=$$?; \
	if [ $$suite -ne 0 ]; then exit $$suite; fi; exit $$fuzz

# Every fuzz target in the module, FUZZTIME (default 10s) each; make test
# fuzzes the main ones only.
fuzz:
	@FUZZ_ALL=1 FUZZ_STRICT=1 scripts/fuzz.sh

# Everything that needs no Chromium, S3 server or Temporal server; no lint.
test-unit:
	@echo "unit lane: not running packages $(UNIT_HEAVY_PKGS), nor tests matching $(UNIT_HEAVY_TESTS) (make test runs them)"
	@scripts/test.sh -skip '$(UNIT_HEAVY_TESTS)' $$($(GO) list $(PKGS) | grep -vxF $(foreach p,$(UNIT_HEAVY_PKGS),-e $(MODULE)/$(p)))

lint-tools:
	@scripts/install-lint-tools.sh $(STATICCHECK_VERSION) $(WORKFLOWCHECK_VERSION)

# gofmt, go vet, staticcheck, Temporal's workflowcheck over the workflow
# package (false positives are waived in workflowcheck.config.yaml, each with
# its reason), and go.mod/go.sum already tidy.
lint: lint-tools
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	staticcheck $(PKGS)
	workflowcheck -config workflowcheck.config.yaml ./workflows/...
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

# Runs the crash matrix (test/crash) and writes what it observed to
# docs/reliability.md.
reliability: tools
	DURABLE_BROWSER_WRITE_RELIABILITY=1 $(GO) test -count=1 -v -run 'TestCrashMatrix|TestCrashRestore|TestCrashUpgrade' ./test/crash/

# The benchmarks, then the load (docs/reliability.md#load): 16 sessions x 50
# calls on one worker, the same with the worker killed halfway, and a sweep
# of session counts (several minutes).
bench: build tools
	$(GO) test -run '^$$' -bench . -skip '^Benchmark(Load|Cost)$$' -benchmem -count 5 ./internal/driver/ ./providers/local/ ./activities/ ./test/
	$(GO) test -run '^$$' -bench '^BenchmarkLoad$$' -benchtime 1x -timeout 60m -v ./test/
	$(GO) test -run '^$$' -bench '^BenchmarkCost$$' -benchtime 1x -timeout 25m -v ./test/

# Start time and peak memory of the client verbs, and the binaries' sizes
# (docs/benchmarks.md).
bench-cli: build
	@scripts/bench-cli.sh $(BIN)

clean:
	rm -rf bin .durable-browser
