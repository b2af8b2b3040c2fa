# The worker image: the binary, Debian's Chromium, and tini as PID 1 so the
# Chrome processes a release kills are reaped.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -o /out/durable-browser ./cmd/durable-browser

FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium tini ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --create-home --uid 10001 browser
COPY --from=build /out/durable-browser /usr/local/bin/durable-browser
USER browser
ENV CHROME_PATH=/usr/bin/chromium \
    DISABLE_ROD_FLAG=1 \
    DURABLE_BROWSER_PROFILE_ROOT=/home/browser/profiles
ENTRYPOINT ["/usr/bin/tini", "--", "durable-browser"]
CMD ["worker"]
