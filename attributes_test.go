// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"

	"github.com/otlphttpretry/otlphttpretry/retry"
)

// The one source of the metrics' enumerated attribute values is the Go
// code: retry.AttributeValues (the loop's enumerations) and
// exporterAttributeValues (the exporter's own). These tests hold
// metadata.yaml's enums to it (and through TestDocumentationMatchesMetadataYAML
// documentation.md), the README's metric table, and every value a test
// sees the exporter record.

type mdAttribute struct {
	NameOverride string   `yaml:"name_override"`
	Description  string   `yaml:"description"`
	Type         string   `yaml:"type"`
	Enum         []string `yaml:"enum"`
}

// name is the attribute's name on the wire.
func (a mdAttribute) name(key string) string {
	if a.NameOverride != "" {
		return a.NameOverride
	}
	return key
}

type mdMetric struct {
	Description string   `yaml:"description"`
	Attributes  []string `yaml:"attributes"`
}

type mdFile struct {
	Attributes map[string]mdAttribute `yaml:"attributes"`
	Telemetry  struct {
		Metrics map[string]mdMetric `yaml:"metrics"`
	} `yaml:"telemetry"`
}

func loadMetadataYAML(t *testing.T) mdFile {
	t.Helper()
	raw, err := os.ReadFile("metadata.yaml")
	require.NoError(t, err)
	var md mdFile
	require.NoError(t, yaml.Unmarshal(raw, &md))
	return md
}

// attributeValues is every value of every enumerated attribute, by
// metadata.yaml's attribute key.
func attributeValues() map[string][]string {
	v := retry.AttributeValues()
	for k, extra := range exporterAttributeValues {
		v[k] = append(v[k], extra...)
	}
	return v
}

// openAttributes take values no list holds: a status code (retry_reason
// also takes the reasons of retry.AttributeValues), the component ID, the
// signal.
var openAttributes = map[string]*regexp.Regexp{
	"status_code":  regexp.MustCompile(`^([1-5]\d{2}|none)$`),
	"retry_reason": regexp.MustCompile(`^[1-5]\d{2}$`),
	"exporter":     regexp.MustCompile(`^otlp_http_retry(/.+)?$`),
	"data_type":    regexp.MustCompile(`^(traces|metrics|logs)$`),
}

// TestAttributeValuesHaveOneSource: metadata.yaml lists, as each enumerated
// attribute's enum, exactly the values the Go code defines, in the same
// order; an attribute the Go code does not enumerate has no enum (and, for
// retry_reason, its description names the reasons that are not status
// codes). Every drop* constant of the exporter is in its list.
func TestAttributeValuesHaveOneSource(t *testing.T) {
	md := loadMetadataYAML(t)
	values := attributeValues()
	for key, want := range values {
		a, ok := md.Attributes[key]
		if !assert.True(t, ok, "metadata.yaml has no attribute %q (the Go code enumerates %v)", key, want) {
			continue
		}
		if _, open := openAttributes[key]; open {
			assert.Empty(t, a.Enum, "%s takes values beyond its list: no enum", key)
			for _, v := range want {
				assert.Contains(t, a.Description, v, "metadata.yaml: %s's description does not name %q", key, v)
			}
			continue
		}
		assert.Equal(t, want, a.Enum, "metadata.yaml: attributes.%s.enum must be the Go code's values, in its order", key)
	}
	for key, a := range md.Attributes {
		_, enumerated := values[key]
		_, open := openAttributes[key]
		assert.True(t, enumerated || open, "metadata.yaml: attribute %q has no source in the Go code (retry.AttributeValues, exporterAttributeValues) and no pattern in openAttributes", key)
		if len(a.Enum) > 0 {
			assert.True(t, enumerated, "metadata.yaml: %s has an enum the Go code does not define", key)
		}
	}

	// Every drop reason constant of the exporter is in its list.
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			vs, ok := n.(*ast.ValueSpec)
			if !ok {
				return true
			}
			for i, name := range vs.Names {
				if !regexp.MustCompile(`^drop[A-Z]`).MatchString(name.Name) || i >= len(vs.Values) {
					continue
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					v, _ := strconv.Unquote(lit.Value)
					assert.Contains(t, exporterAttributeValues["drop_reason"], v, "%s: %s is a drop reason missing from exporterAttributeValues", e.Name(), name.Name)
				}
			}
			return true
		})
	}
}

// readmeMetricRow is one row of the README's metric table.
type readmeMetricRow struct {
	line   int
	labels map[string][]string // label → the values listed after it (nil: none listed)
	order  []string
}

var readmeLabel = regexp.MustCompile("`([a-z_]+)`(?: \\(([^)]*)\\))?")

// readmeMetricTable parses the README's table of metrics (header
// "| Metric | Type | Labels | Meaning |").
func readmeMetricTable(t *testing.T) map[string]readmeMetricRow {
	t.Helper()
	lines := strings.Split(string(readReadme(t)), "\n")
	start := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "| Metric | Type | Labels |") })
	require.GreaterOrEqual(t, start, 0, "README.md: no metric table (| Metric | Type | Labels | Meaning |)")
	rows := map[string]readmeMetricRow{}
	for i := start + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(lines[i], "|"), "|")
		require.GreaterOrEqual(t, len(cells), 3, "README.md line %d", i+1)
		name := strings.Trim(strings.TrimSpace(cells[0]), "`")
		row := readmeMetricRow{line: i + 1, labels: map[string][]string{}}
		for _, m := range readmeLabel.FindAllStringSubmatch(cells[2], -1) {
			var vs []string
			if m[2] != "" {
				for v := range strings.SplitSeq(m[2], ",") {
					vs = append(vs, strings.Trim(strings.TrimSpace(v), "`"))
				}
			}
			row.labels[m[1]] = vs
			row.order = append(row.order, m[1])
		}
		rows[name] = row
	}
	return rows
}

// TestReadmeMetricTableMatchesMetadata: the README's metric table lists
// every metric of metadata.yaml and no other, each with the labels it has
// beside exporter and data_type; where a row lists a label's values, they
// are exactly the Go code's (for reason on retries: "status code" and the
// others).
func TestReadmeMetricTableMatchesMetadata(t *testing.T) {
	md := loadMetadataYAML(t)
	values := attributeValues()
	rows := readmeMetricTable(t)
	for key := range md.Telemetry.Metrics {
		assert.Contains(t, rows, "otelcol_"+key, "README.md's metric table has no row for otelcol_%s", key)
	}
	for name, row := range rows {
		m, ok := md.Telemetry.Metrics[strings.TrimPrefix(name, "otelcol_")]
		if !assert.True(t, ok, "README.md line %d: %s is not in metadata.yaml", row.line, name) {
			continue
		}
		var want []string
		for _, key := range m.Attributes {
			if key == "exporter" || key == "data_type" {
				continue
			}
			a := md.Attributes[key]
			want = append(want, a.name(key))
			listed, ok := row.labels[a.name(key)]
			if !ok || listed == nil {
				continue
			}
			switch {
			case key == "retry_reason":
				var rest []string
				for _, v := range listed {
					if v != "status code" {
						rest = append(rest, v)
					}
				}
				assert.ElementsMatch(t, values[key], rest, "README.md line %d: %s's %s values", row.line, name, a.name(key))
			case values[key] != nil:
				assert.ElementsMatch(t, values[key], listed, "README.md line %d: %s's %s values", row.line, name, a.name(key))
			}
		}
		assert.Equal(t, want, row.order, "README.md line %d: %s's labels (besides exporter and data_type)", row.line, name)
	}
}

// assertEmittedAttributesDocumented checks every data point tel holds: its
// attribute names are those metadata.yaml gives its metric, and each value
// is one the Go code defines (or matches an open attribute's pattern).
// The exporter harnesses run it before they shut down, so every test that
// drives the exporter checks what it made it record.
func assertEmittedAttributesDocumented(t *testing.T, tel *componenttest.Telemetry) {
	t.Helper()
	md := loadMetadataYAML(t)
	values := attributeValues()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(context.Background(), &rm))
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			spec, ok := md.Telemetry.Metrics[strings.TrimPrefix(m.Name, "otelcol_")]
			if !ok {
				continue // another component's metric (exporterhelper's, the SDK's)
			}
			byName := map[string]string{}
			var names []string
			for _, key := range spec.Attributes {
				n := md.Attributes[key].name(key)
				byName[n] = key
				names = append(names, n)
			}
			for _, set := range dataPointAttributes(m.Data) {
				var got []string
				for _, kv := range set.ToSlice() {
					got = append(got, string(kv.Key))
					key, ok := byName[string(kv.Key)]
					if !assert.True(t, ok, "%s recorded attribute %q, which metadata.yaml does not give it", m.Name, kv.Key) {
						continue
					}
					v := kv.Value.AsString()
					if re, open := openAttributes[key]; open && re.MatchString(v) {
						continue
					}
					assert.Contains(t, values[key], v, "%s recorded %s=%q, a value the Go code does not define", m.Name, kv.Key, v)
				}
				assert.ElementsMatch(t, names, got, "%s's attributes", m.Name)
			}
		}
	}
}

func dataPointAttributes(data metricdata.Aggregation) []attribute.Set {
	var out []attribute.Set
	switch d := data.(type) {
	case metricdata.Sum[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Sum[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[int64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Gauge[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	case metricdata.Histogram[float64]:
		for _, dp := range d.DataPoints {
			out = append(out, dp.Attributes)
		}
	}
	return out
}
