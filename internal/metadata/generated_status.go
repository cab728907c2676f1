// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Hand-written, not generated: this file has the shape mdatagen would give
// it from metadata.yaml (module root), but mdatagen
// (go.opentelemetry.io/collector/cmd/mdatagen) is not available to this
// module. Edit it by hand whenever metadata.yaml changes.
// internal/metadata/metadata_yaml_test.go holds this package,
// internal/metadatatest and documentation.md to metadata.yaml:
// TestMetadataYAMLStatus, TestMetadataYAMLTelemetryMatchesBuilder,
// TestDocumentationMatchesMetadataYAML and TestMetadataYAMLMatchesMetadatatest
// fail until they agree.

// Package metadata contains the telemetry and
// build information for the exporter/otlp_http_retry component.
package metadata

import (
	"go.opentelemetry.io/collector/component"
)

var (
	Type      = component.MustNewType("otlp_http_retry")
	ScopeName = "github.com/otlphttpretry/otlphttpretry"
)

const (
	TracesStability  = component.StabilityLevelAlpha
	MetricsStability = component.StabilityLevelAlpha
	LogsStability    = component.StabilityLevelAlpha
)
