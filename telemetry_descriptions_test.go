// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metricDescriptions pins each metric's description in metadata.yaml to
// the tests that show what it says: the behaviour each clause names
// (a value after an event, 0 while unlimited, not recorded for ...) is
// asserted by one of them on the metric itself. metadata.yaml,
// documentation.md and internal/metadata are held to each other by
// internal/metadata's tests; this table holds them to behaviour. Whoever
// changes a description changes it here too, and names the tests that
// hold the new words (or writes them); whoever changes the behaviour
// fails those tests.
var metricDescriptions = map[string]struct {
	description string
	heldBy      []string
}{
	"otlp_http_retry_attempts": {
		"Number of HTTP attempts made, by outcome and status code.",
		[]string{"TestTelemetrySuccessFirstTry", "TestTelemetryOutageThenSuccess", "TestTelemetryAttemptCancelledByCallerIsCounted"},
	},
	"otlp_http_retry_retries": {
		"Number of retries scheduled, by path and reason.",
		[]string{"TestTelemetryRateLimitRetryAfter", "TestTelemetryOutageThenSuccess", "TestTelemetryUnauthorizedHold"},
	},
	"otlp_http_retry_attempt_duration_seconds": {
		"Duration of one HTTP attempt, from sending the request to reading the response.",
		[]string{"TestTelemetrySuccessFirstTry"},
	},
	"otlp_http_retry_export_duration_seconds": {
		"Time from a payload's first attempt to its final outcome, waits included; not recorded for a payload never sent.",
		[]string{"TestTelemetryRateLimitRetryAfter", "TestTelemetryShutdownDuringWait"},
	},
	"otlp_http_retry_export_latency_seconds": {
		"Time from a payload entering the exporter (before the queue) to its final outcome, queue time included.",
		[]string{"TestTelemetryRateLimitRetryAfter", "TestTelemetryShutdownDuringWait"},
	},
	"otlp_http_retry_held": {
		"1 for the reason the destination's gate holds every payload right now, 0 for the others; all 0 while the gate is open.",
		[]string{"TestGaugesFollowTheWindowAndBackoff", "TestTelemetryUnauthorizedHold"},
	},
	"otlp_http_retry_pacing_ceiling": {
		"The pace the destination's pacer set at its last cut, in items per second: after a refusal with Retry-After, 10 % below what the backend accepted between its last two refusals (at most 60 % of the pace of the moment); after a refusal without a hint, 5 % below the rate the backend accepted (grossed up by the share it refuses whatever the pace); after a window that taught nothing, the slow start's first pace; 0 while the destination is unlimited.",
		[]string{"TestTelemetryPacingGauges", "TestTelemetryPacingGaugesAfterABare429"},
	},
	"otlp_http_retry_pacing_rate": {
		"The pace requests to the destination leave at now, in items per second: the ceiling at a cut, then growing (after a refusal without a hint, back to the rate the backend accepted within a few seconds, then past it); while a fixed window seen on the clock is scheduled, its take per window; 0 while the destination is unlimited.",
		[]string{"TestTelemetryPacingGauges", "TestTelemetryPacingGaugesAfterABare429"},
	},
	"otlp_http_retry_pacing_wait_seconds": {
		"Waits the pacer imposed on a request before it left, by why.",
		[]string{"TestTelemetryPacingWaitByRate", "TestTelemetryPacingWaitByQuota", "TestTelemetryPacingWaitByConcurrency"},
	},
	"otlp_http_retry_ratelimit_rejected": {
		"RateLimit header values the exporter ignored, by reason.",
		[]string{"TestTelemetryRateLimitRejected", "TestTelemetryRateLimitContradicted"},
	},
	"otlp_http_retry_ratelimit_remaining": {
		"The remaining quota in the destination's last RateLimit header, in the quota's own unit; not reported until a RateLimit header was seen.",
		[]string{"TestTelemetryRateLimitRemaining"},
	},
	"otlp_http_retry_retry_after_wait_seconds": {
		"Retry-After waits actually applied, by where the value came from.",
		[]string{"TestTelemetryRateLimitRetryAfter"},
	},
	"otlp_http_retry_retry_after_parsed": {
		"Retry-After headers examined on retryable responses, by parse result.",
		[]string{"TestTelemetryRateLimitRetryAfter", "TestTelemetryOutageThenSuccess"},
	},
	"otlp_http_retry_retry_after_parse_duration_seconds": {
		"Time spent parsing one Retry-After header. Only recorded when the exporter's telemetry::detailed is true.",
		[]string{"TestTelemetryDetailedParseDuration"},
	},
	"otlp_http_retry_dropped_items": {
		"Items (spans, data points, log records) dropped, by reason.",
		[]string{"TestTelemetryOutageExhausted", "TestTelemetryPartialSuccess", "TestQueueFullCountsRefusedItems"},
	},
	"otlp_http_retry_throttled": {
		"1 while the exporter's destination is held because the backend asked to wait (Retry-After, 429), 0 otherwise.",
		[]string{"TestGaugesFollowTheWindowAndBackoff"},
	},
	"otlp_http_retry_throttle_remaining_seconds": {
		"Seconds until the destination's gate lets the next request (the probe) through, whatever it holds for; 0 when it is open.",
		[]string{"TestGaugesFollowTheWindowAndBackoff", "TestGaugesAfterTheWindowEnds"},
	},
	"otlp_http_retry_waiting_payloads": {
		"Payloads waiting for a retry right now (at the destination's gate while it holds, or in a backoff wait).",
		[]string{"TestGaugesFollowTheWindowAndBackoff"},
	},
}

// TestMetricDescriptionsAreHeldByTests: every metric of metadata.yaml has
// its description pinned above, and each test named for it exists and
// reaches the metric's assertion (metadatatest.AssertEqual<Metric>, or
// GetMetric of its name), directly or through the package's test helpers.
func TestMetricDescriptionsAreHeldByTests(t *testing.T) {
	md := loadMetadataYAML(t)
	calls := testCallGraph(t)
	for key, m := range md.Telemetry.Metrics {
		pinned, ok := metricDescriptions[key]
		if !assert.True(t, ok, "metric %s: add it to metricDescriptions with the tests that hold its description", key) {
			continue
		}
		assert.Equal(t, pinned.description, m.Description,
			"metadata.yaml changed %s's description: update metricDescriptions and name the tests that hold the new words", key)
		helper := "AssertEqual" + metricGoName(key)
		for _, test := range pinned.heldBy {
			if !assert.Contains(t, calls, test, "%s: no test function %s", key, test) {
				continue
			}
			assert.True(t, reaches(calls, test, helper, "otelcol_"+key), "%s: %s never asserts the metric (%s)", key, test, helper)
		}
	}
	for key := range metricDescriptions {
		assert.Contains(t, md.Telemetry.Metrics, key, "metricDescriptions has %s, which metadata.yaml does not", key)
	}
}

// metricGoName is mdatagen's identifier of a metric key (otlp_http_retry_x
// → OtlpHTTPRetryX).
func metricGoName(key string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(key, "_") {
		if strings.EqualFold(part, "HTTP") {
			b.WriteString("HTTP")
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// testCallGraph maps each function of the package's test files to the
// names it calls and the identifiers and literals it mentions, and each
// constant of the test files to its literal.
func testCallGraph(t *testing.T) map[string]map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	graph := map[string]map[string]bool{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.CONST {
				// A constant reaches its value: mAttempts names the metric.
				for _, spec := range gd.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, n := range vs.Names {
						if lit, ok := valueAt(vs, i).(*ast.BasicLit); ok {
							graph[n.Name] = map[string]bool{lit.Value: true}
						}
					}
				}
			}
			fd, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fd.Name.Name
			if fd.Recv != nil {
				name = "." + name
			}
			refs := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.CallExpr:
					switch fn := x.Fun.(type) {
					case *ast.Ident:
						refs[fn.Name] = true
					case *ast.SelectorExpr:
						refs[fn.Sel.Name] = true
						refs["."+fn.Sel.Name] = true
					}
				case *ast.Ident:
					refs[x.Name] = true // constants naming a metric
				case *ast.BasicLit:
					refs[x.Value] = true
				}
				return true
			})
			graph[name] = refs
		}
	}
	return graph
}

func valueAt(vs *ast.ValueSpec, i int) ast.Expr {
	if i < len(vs.Values) {
		return vs.Values[i]
	}
	return nil
}

// reaches reports whether from calls helper, or names the metric, directly
// or through the functions it calls.
func reaches(graph map[string]map[string]bool, from, helper, metric string) bool {
	seen := map[string]bool{}
	var walk func(string) bool
	walk = func(fn string) bool {
		if seen[fn] {
			return false
		}
		seen[fn] = true
		for ref := range graph[fn] {
			if ref == helper || ref == `"`+metric+`"` {
				return true
			}
			if _, ok := graph[ref]; ok && walk(ref) {
				return true
			}
		}
		return false
	}
	return walk(from)
}
