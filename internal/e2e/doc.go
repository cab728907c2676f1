// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package e2e holds end-to-end tests of the ocb-built collector with the
// otlp_http_retry exporter. They are behind the e2e build tag, so plain
// `go test ./...` does not need the collector binary; run them with
// `make test`, or:
//
//	make build-collector
//	OTELCOL_BIN=$PWD/build/otelcol-retry/otelcol-retry go test -count=1 -tags e2e ./internal/e2e/...
package e2e
