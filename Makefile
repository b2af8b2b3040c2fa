# durable-browser: the README's two commands are `make run` and `make test`.
GO       ?= go
# Three binaries, side by side. bin/durable-browser holds the client verbs and
# starts in milliseconds; its `worker` and `dev` verbs exec the other two
# (found beside it), which hold the heavy dependencies: rod, the AWS SDK and
# html-to-markdown for the worker, plus the Temporal server and UI for dev.
BIN       := bin/durable-browser
WORKERBIN := bin/durable-browser-worker
DEVBIN    := bin/durable-browser-dev
GOBIN    := $(shell $(GO) env GOPATH)/bin
PKGS     := ./...
export PATH := $(GOBIN):$(PATH)

.PHONY: all build run test lint bench tools chromium versitygw clean

all: build

# The client and worker binaries are static (CGO_ENABLED=0, as in the
# Dockerfile): not mapping libc saves ~2 MiB at every client verb's start.
build:
	CGO_ENABLED=0 $(GO) build -o $(BIN) ./cmd/durable-browser
	CGO_ENABLED=0 $(GO) build -o $(WORKERBIN) ./cmd/durable-browser-worker
	$(GO) build -o $(DEVBIN) ./cmd/durable-browser-dev

tools: chromium versitygw

chromium:
	@scripts/install-chromium.sh

versitygw:
	@scripts/install-versitygw.sh

# Starts the whole stack on loopback, runs the smoke workflow, keeps serving until Ctrl-C.
run: build tools
	$(BIN) dev --smoke

test: build tools
	@scripts/test.sh $(PKGS)

lint:
	@out="$$(gofmt -l $$(git ls-files '*.go'))"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

bench: build tools
	$(GO) test -run '^$$' -bench . -benchmem -count 5 ./internal/driver/ ./providers/local/ ./test/

clean:
	rm -rf bin .durable-browser
