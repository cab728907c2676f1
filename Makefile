# Targets:
#   make build-collector  build build/otelcol-retry/otelcol-retry with ocb
#   make build-core-collector  build build/otelcol-core/otelcol-core (core otlp_http, the benchmark's reference)
#   make bench-scenarios  both collectors through the default scenarios, 3 runs (about 14 min; docs/benchmarks.md)
#   make bench-smoke      both collectors through one short healthy scenario (under a minute warm)
#   make bench-go         the Go micro-benchmarks, both exporters side by side, stored in docs/bench-go.json
#   make docs-figures     every figure of README.md and docs/benchmarks.md rendered again from the stored runs
#   make demo             build the collector, then run the throttling demo
#   make test             tidy check, gofmt check, go vet, golangci-lint, unit tests (race), e2e tests, benchmark smoke
#   make lint             golangci-lint (installed at the pinned version when missing)
#   make monitoring       render monitoring/ (rules, dashboard) and plot docs/monitoring-dashboard.png from the stored run
#   make monitoring-record  run the kit against a real Prometheus and store docs/monitoring-run.json, then plot it

GO              ?= go
GOPATH_BIN      := $(shell $(GO) env GOPATH)/bin
BUILDER_VERSION := v0.165.0
BUILDER         := $(GOPATH_BIN)/builder
GOLANGCI_LINT_VERSION := v2.15.0
BENCHSTAT_VERSION := v0.0.0-20260908200009-22c9c6c9d4da
BENCHSTAT       := $(GOPATH_BIN)/benchstat
GOLANGCI_LINT   := $(GOPATH_BIN)/golangci-lint
MANIFEST        := cmd/otelcol-retry/builder-config.yaml
OTELCOL_BIN     := $(CURDIR)/build/otelcol-retry/otelcol-retry
CORE_MANIFEST   := cmd/otelcol-core/builder-config.yaml
CORE_BIN        := $(CURDIR)/build/otelcol-core/otelcol-core
# Extra flags for bench-scenarios, e.g. BENCH_FLAGS='-fleet 50'.
BENCH_FLAGS     ?=
GO_FILES         = $(shell find . -name '*.go' -not -path './build/*' -not -path './.git/*')

.PHONY: check-prometheus monitoring monitoring-record bench-go docs-figures install-benchstat all build-collector build-core-collector install-builder install-golangci-lint demo test tidy-check fmt-check vet lint unit-test e2e-test bench-scenarios bench-smoke clean

all: test

# ocb must be the release the manifest targets; install it when it is
# missing or another version.
install-builder:
	@if [ ! -x "$(BUILDER)" ] || ! "$(BUILDER)" version 2>&1 | grep -q '$(BUILDER_VERSION)$$'; then \
		echo "installing go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION) into $(GOPATH_BIN)"; \
		$(GO) install go.opentelemetry.io/collector/cmd/builder@$(BUILDER_VERSION); \
	fi

# golangci-lint must be the pinned release (.golangci.yml is written for
# it); install it when it is missing or another version.
install-golangci-lint:
	@if [ ! -x "$(GOLANGCI_LINT)" ] || ! "$(GOLANGCI_LINT)" version 2>&1 | grep -q 'version $(GOLANGCI_LINT_VERSION:v%=%) '; then \
		echo "installing github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION) into $(GOPATH_BIN)"; \
		$(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION); \
	fi

# ocb resolves output_path and the exporter's path: against its working
# directory, so it runs from the repository root.
build-collector: install-builder
	@mkdir -p build
	$(BUILDER) --config $(MANIFEST)

build-core-collector: install-builder
	@mkdir -p build
	$(BUILDER) --config $(CORE_MANIFEST)

# The scenario benchmark of both exporters (cmd/scenariobench): medians of
# 3 runs, JSON and the throttle-window plot into docs/.
bench-scenarios: build-collector build-core-collector
	$(GO) run ./cmd/scenariobench -ours $(OTELCOL_BIN) -core $(CORE_BIN) -runs 3 \
		-out docs/scenariobench.json -plot docs/throttle-window.png $(BENCH_FLAGS)

# One short healthy scenario for both exporters; fails when a span is lost
# or a collector does not run.
bench-smoke: build-collector build-core-collector
	$(GO) run ./cmd/scenariobench -ours $(OTELCOL_BIN) -core $(CORE_BIN) -scenarios healthy -spans 20000 -runs 1 \
		-out build/bench-smoke.json

install-benchstat:
	@if [ ! -x "$(BENCHSTAT)" ]; then \
		echo "installing golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION) into $(GOPATH_BIN)"; \
		$(GO) install golang.org/x/perf/cmd/benchstat@$(BENCHSTAT_VERSION); \
	fi

# The Go micro-benchmarks (benchmark_test.go, compress_bench_test.go), 6
# runs each, stored with their provenance in docs/bench-go.json (the
# figures of docs/benchmarks.md come from it: make docs-figures), then the
# exporters (and compressors) side by side through benchstat.
BENCH_GO_CMD := $(GO) test -run '^$$' -bench 'BenchmarkExport|BenchmarkQueuedExport|BenchmarkCompress' -benchtime 2s -count 6 .
bench-go: install-benchstat
	@mkdir -p build
	$(BENCH_GO_CMD) | $(GO) run ./cmd/benchjson -command "$(subst $$$$,$$,$(BENCH_GO_CMD))" -out docs/bench-go.json > build/bench-go.txt
	$(BENCHSTAT) -col /exporter -filter '-.name:/Compress/' build/bench-go.txt
	$(BENCHSTAT) -col /impl -filter '.name:/Compress/' build/bench-go.txt

# Every figure of README.md and docs/benchmarks.md rendered again from the
# stored runs in docs/ (cmd/scenariobench/docs.go); make test fails while
# one differs.
docs-figures:
	$(GO) run ./cmd/scenariobench -docs

demo: build-collector
	$(GO) run ./cmd/demo -collector $(OTELCOL_BIN)

test: check-prometheus tidy-check fmt-check vet lint unit-test e2e-test bench-smoke

# The monitoring kit's tests (promtool test rules, the dashboard's queries,
# TestMonitoringKit) need Prometheus's server and promtool (Debian's
# prometheus package; it starts no service in a container). make installs
# them when they are missing, as it installs ocb and golangci-lint; where it
# cannot (no apt-get, not root), it fails saying how rather than skip them.
check-prometheus:
	@if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then \
		if command -v apt-get >/dev/null 2>&1 && [ "$$(id -u)" = 0 ]; then \
			echo "installing Debian's prometheus package (prometheus, promtool) for the monitoring kit's tests"; \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null; \
		fi; \
	fi
	@if ! command -v prometheus >/dev/null 2>&1 || ! command -v promtool >/dev/null 2>&1; then \
		echo "make test needs prometheus and promtool (the monitoring kit's tests): apt-get install -y --no-install-recommends prometheus"; \
		exit 1; \
	fi

# The kit's shipped files from internal/monitoring, and the PNG of the
# stored run's panels (docs/monitoring.md).
monitoring:
	$(GO) run ./cmd/monitoringkit write -dir monitoring
	$(GO) run ./cmd/monitoringkit plot -in docs/monitoring-run.json -out docs/monitoring-dashboard.png

# TestMonitoringKit against a real Prometheus, stored in docs/, then plotted.
monitoring-record: check-prometheus build-collector
	MONITORING_RECORD=$(CURDIR)/docs/monitoring-run.json OTELCOL_BIN=$(OTELCOL_BIN) \
		$(GO) test -count=1 -timeout 10m -tags e2e -run TestMonitoringKit -v ./internal/e2e/
	$(MAKE) monitoring

# go.mod and go.sum must be what `go mod tidy` makes of them. -diff changes
# nothing: it prints what tidy would change and fails if that is anything.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run go mod tidy"; exit 1; }

fmt-check:
	@unformatted="$$(gofmt -l $(GO_FILES))"; \
	if [ -n "$$unformatted" ]; then \
		echo "gofmt needed on:"; echo "$$unformatted"; exit 1; \
	fi

# golangci-lint over the whole module, e2e tests included (.golangci.yml);
# part of test. goheader keeps the SPDX line on every Go file.
lint: install-golangci-lint
	$(GOLANGCI_LINT) run ./...

vet:
	$(GO) vet ./...
	$(GO) vet -tags e2e ./internal/e2e/...

unit-test:
	$(GO) test -race -count=1 ./...

e2e-test: build-collector
	OTELCOL_BIN=$(OTELCOL_BIN) $(GO) test -count=1 -timeout 10m -tags e2e -v ./internal/e2e/...

clean:
	rm -rf build
