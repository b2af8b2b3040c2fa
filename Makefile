# durable-browser: the README's two commands are `make run` and `make test`.
GO       ?= go
BIN      := bin/durable-browser
# dev's embedded Temporal server and UI live in their own binary, beside BIN,
# so BIN (worker and client verbs) links neither.
DEVBIN   := bin/durable-browser-dev
GOBIN    := $(shell $(GO) env GOPATH)/bin
PKGS     := ./...
# rod must never read flags from the environment or download a browser.
export DISABLE_ROD_FLAG := 1
export PATH := $(GOBIN):$(PATH)

.PHONY: all build run test lint bench tools chromium versitygw clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/durable-browser
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
