# The worker image: the three lean binaries (no Temporal server, no UI server),
# Debian's Chromium, and tini as PID 1 so the Chrome processes a release kills
# are reaped. durable-browser is the CLI; its `worker` (and `evidence`) verb
# execs durable-browser-worker from beside it, keeping its pid, and its `mcp`
# verb durable-browser-mcp.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /out/durable-browser ./cmd/durable-browser \
 && CGO_ENABLED=0 go build -trimpath -o /out/durable-browser-worker ./cmd/durable-browser-worker \
 && CGO_ENABLED=0 go build -trimpath -o /out/durable-browser-mcp ./cmd/durable-browser-mcp

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium chromium-headless-shell tini ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 browser
COPY --from=build /out/durable-browser /out/durable-browser-worker /out/durable-browser-mcp /usr/local/bin/
USER browser
ENV CHROME_PATH=/usr/bin/chromium \
    DURABLE_BROWSER_HEADLESS_SHELL=/usr/lib/chromium/chromium-headless-shell \
    DURABLE_BROWSER_PROFILE_ROOT=/home/browser/profiles
ENTRYPOINT ["/usr/bin/tini", "--", "durable-browser"]
CMD ["worker"]
