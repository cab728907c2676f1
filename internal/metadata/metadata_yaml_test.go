package metadata_test

// This test keeps the hand-written mdatagen output in this package,
// internal/metadatatest and documentation.md in step with metadata.yaml,
// which is the source of truth. mdatagen is not run for this module, so
// whoever edits metadata.yaml must update the generated files by hand;
// this test fails until they agree.

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.yaml.in/yaml/v3"

	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componenttest"

	"github.com/otlphttpretry/otlphttpretry/internal/metadata"
)

const (
	metadataYAMLPath  = "../../metadata.yaml"
	documentationPath = "../../documentation.md"
	telemetryTestPath = "../metadatatest/generated_telemetrytest.go"
	telemetryTestTest = "../metadatatest/generated_telemetrytest_test.go"
	goModPath         = "../../go.mod"
)

type yamlMetricData struct {
	ValueType        string    `yaml:"value_type"`
	Monotonic        bool      `yaml:"monotonic"`
	Async            bool      `yaml:"async"`
	BucketBoundaries []float64 `yaml:"bucket_boundaries"`
}

type yamlMetric struct {
	Enabled     bool            `yaml:"enabled"`
	Stability   string          `yaml:"stability"`
	Description string          `yaml:"description"`
	Unit        string          `yaml:"unit"`
	Attributes  []string        `yaml:"attributes"`
	Sum         *yamlMetricData `yaml:"sum"`
	Gauge       *yamlMetricData `yaml:"gauge"`
	Histogram   *yamlMetricData `yaml:"histogram"`
}

type yamlAttribute struct {
	Description string   `yaml:"description"`
	Type        string   `yaml:"type"`
	Enum        []string `yaml:"enum"`
}

type yamlMetadata struct {
	Type          string `yaml:"type"`
	GithubProject string `yaml:"github_project"`
	Status        struct {
		Class     string              `yaml:"class"`
		Stability map[string][]string `yaml:"stability"`
	} `yaml:"status"`
	Attributes map[string]yamlAttribute `yaml:"attributes"`
	Telemetry  struct {
		Metrics map[string]yaml.Node `yaml:"metrics"`
	} `yaml:"telemetry"`
}

// metricSpec is one telemetry metric of metadata.yaml, with what mdatagen
// derives from it.
type metricSpec struct {
	key string
	yamlMetric
	name        string // instrument name: otelcol_<key>
	goName      string // TelemetryBuilder field name
	fullDesc    string // description with the stability suffix
	stability   string // "Alpha", "Development", ...
	metricType  string // "Sum", "Gauge", "Histogram"
	data        *yamlMetricData
	isFloat     bool
	valueType   string // "Int", "Double"
	instrument  reflect.Type
	callbackTyp reflect.Type // for async instruments
}

// allowedMetricKeys are the keys of a telemetry metric this test (and the
// hand-written generated code) understands. A key outside this set (e.g.
// prefix, optional, extended_documentation) changes mdatagen's output and
// needs the generated files and this test revisited.
var allowedMetricKeys = []string{"enabled", "stability", "description", "unit", "attributes", "sum", "gauge", "histogram"}

var allowedDataKeys = map[string][]string{
	"sum":       {"value_type", "monotonic", "async"},
	"gauge":     {"value_type", "async"},
	"histogram": {"value_type", "bucket_boundaries"},
}

func loadMetadata(t *testing.T) (yamlMetadata, []metricSpec) {
	t.Helper()
	raw, err := os.ReadFile(metadataYAMLPath)
	require.NoError(t, err)
	var md yamlMetadata
	require.NoError(t, yaml.Unmarshal(raw, &md))
	require.NotEmpty(t, md.Type, "metadata.yaml: type")
	require.NotEmpty(t, md.Telemetry.Metrics, "metadata.yaml: telemetry.metrics")

	keys := make([]string, 0, len(md.Telemetry.Metrics))
	for k := range md.Telemetry.Metrics {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	specs := make([]metricSpec, 0, len(keys))
	for _, key := range keys {
		node := md.Telemetry.Metrics[key]
		checkKeys(t, key, &node, allowedMetricKeys)

		var ym yamlMetric
		require.NoError(t, node.Decode(&ym), "metadata.yaml: telemetry.metrics.%s", key)
		s := metricSpec{key: key, yamlMetric: ym, name: "otelcol_" + key, goName: formatIdentifier(key)}

		require.NotEmpty(t, ym.Description, "%s: description", key)
		require.NotEmpty(t, ym.Unit, "%s: unit", key)
		require.NotEmpty(t, ym.Stability, "%s: stability", key)
		s.stability = strings.ToUpper(ym.Stability[:1]) + ym.Stability[1:]
		s.fullDesc = ym.Description + " [" + s.stability + "]"

		n := 0
		for typ, d := range map[string]*yamlMetricData{"Sum": ym.Sum, "Gauge": ym.Gauge, "Histogram": ym.Histogram} {
			if d != nil {
				n++
				s.metricType, s.data = typ, d
			}
		}
		require.Equal(t, 1, n, "%s: exactly one of sum, gauge, histogram", key)
		checkKeys(t, key+"."+strings.ToLower(s.metricType), dataNode(&node, strings.ToLower(s.metricType)), allowedDataKeys[strings.ToLower(s.metricType)])

		switch s.data.ValueType {
		case "int":
			s.valueType = "Int"
		case "double":
			s.isFloat, s.valueType = true, "Double"
		default:
			require.Failf(t, "unsupported value_type", "%s: %q", key, s.data.ValueType)
		}
		if s.metricType == "Histogram" {
			require.NotEmpty(t, s.data.BucketBoundaries, "%s: histograms here declare bucket_boundaries", key)
		}
		s.instrument, s.callbackTyp = expectedInstrument(s)

		for _, a := range ym.Attributes {
			_, ok := md.Attributes[a]
			require.True(t, ok, "%s: attribute %q is not declared in the top-level attributes", key, a)
		}
		specs = append(specs, s)
	}
	return md, specs
}

func checkKeys(t *testing.T, where string, node *yaml.Node, allowed []string) {
	t.Helper()
	require.Equal(t, yaml.MappingNode, node.Kind, "%s: expected a mapping", where)
	for i := 0; i < len(node.Content); i += 2 {
		k := node.Content[i].Value
		assert.Contains(t, allowed, k, "%s: key %q is not handled by the hand-written generated code; update it and this test", where, k)
	}
}

func dataNode(node *yaml.Node, key string) *yaml.Node {
	for i := 0; i < len(node.Content); i += 2 {
		if node.Content[i].Value == key {
			return node.Content[i+1]
		}
	}
	return &yaml.Node{}
}

func expectedInstrument(s metricSpec) (reflect.Type, reflect.Type) {
	f := s.isFloat
	pick := func(i, fl reflect.Type) reflect.Type {
		if f {
			return fl
		}
		return i
	}
	callback := pick(reflect.TypeFor[metric.Int64Callback](), reflect.TypeFor[metric.Float64Callback]())
	switch s.metricType {
	case "Sum":
		switch {
		case s.data.Async && s.data.Monotonic:
			return pick(reflect.TypeFor[metric.Int64ObservableCounter](), reflect.TypeFor[metric.Float64ObservableCounter]()), callback
		case s.data.Async:
			return pick(reflect.TypeFor[metric.Int64ObservableUpDownCounter](), reflect.TypeFor[metric.Float64ObservableUpDownCounter]()), callback
		case s.data.Monotonic:
			return pick(reflect.TypeFor[metric.Int64Counter](), reflect.TypeFor[metric.Float64Counter]()), nil
		default:
			return pick(reflect.TypeFor[metric.Int64UpDownCounter](), reflect.TypeFor[metric.Float64UpDownCounter]()), nil
		}
	case "Gauge":
		if s.data.Async {
			return pick(reflect.TypeFor[metric.Int64ObservableGauge](), reflect.TypeFor[metric.Float64ObservableGauge]()), callback
		}
		return pick(reflect.TypeFor[metric.Int64Gauge](), reflect.TypeFor[metric.Float64Gauge]()), nil
	default:
		return pick(reflect.TypeFor[metric.Int64Histogram](), reflect.TypeFor[metric.Float64Histogram]()), nil
	}
}

// goAcronyms is mdatagen's list (cmd/mdatagen/third_party/golint).
var goAcronyms = map[string]bool{
	"ACL": true, "API": true, "ASCII": true, "CA": true, "CORS": true, "CPU": true, "CSS": true, "DNS": true,
	"EOF": true, "GUID": true, "HTML": true, "HTTP": true, "HTTPS": true, "ID": true, "IP": true, "JSON": true,
	"LHS": true, "QPS": true, "RAM": true, "RHS": true, "RPC": true, "SLA": true, "SMTP": true, "SQL": true,
	"SSH": true, "TCP": true, "TLS": true, "TPM": true, "TTL": true, "UDP": true, "UI": true, "UID": true,
	"UUID": true, "URI": true, "URL": true, "UTF8": true, "VM": true, "XML": true, "XMPP": true, "XSRF": true,
	"XSS": true,
}

// formatIdentifier mirrors mdatagen's FormatIdentifier(s, exported=true):
// title-case the parts, join them, upper-case known acronyms.
func formatIdentifier(s string) string {
	parts := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("_-<>/:.", r) })
	var str string
	for _, p := range parts {
		r := []rune(p)
		r[0] = unicode.ToUpper(r[0])
		str += string(r)
	}
	var word, output string
	flush := func() {
		if goAcronyms[strings.ToUpper(word)] {
			output += strings.ToUpper(word)
		} else {
			output += word
		}
	}
	for _, r := range str {
		if unicode.IsUpper(r) || unicode.IsNumber(r) {
			flush()
			word = string(r)
		} else {
			word += string(r)
		}
	}
	flush()
	return output
}

func TestFormatIdentifier(t *testing.T) {
	// Cases taken from mdatagen output in the collector (v0.165.0).
	assert.Equal(t, "ProcessCPUSeconds", formatIdentifier("process_cpu_seconds"))
	assert.Equal(t, "ProcessMemoryRss", formatIdentifier("process_memory_rss"))
	assert.Equal(t, "ExporterQueueBatchSendSizeBytes", formatIdentifier("exporter_queue_batch_send_size_bytes"))
	assert.Equal(t, "OtlpHTTPRetryAttempts", formatIdentifier("otlp_http_retry_attempts"))
}

func TestMetadataYAMLStatus(t *testing.T) {
	md, _ := loadMetadata(t)

	assert.Equal(t, md.Type, metadata.Type.String(), "Type")
	assert.Equal(t, "exporter", md.Status.Class, "status.class (generated_status.go's package comment says exporter/...)")

	goMod, err := os.ReadFile(goModPath)
	require.NoError(t, err)
	var modulePath string
	for line := range strings.Lines(string(goMod)) {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "module "); ok {
			modulePath = strings.TrimSpace(rest)
			break
		}
	}
	// mdatagen uses the component's Go package path as the scope name; the
	// component is the module's root package.
	assert.Equal(t, modulePath, metadata.ScopeName, "ScopeName")
	assert.Equal(t, "github.com/"+md.GithubProject, metadata.ScopeName, "ScopeName vs github_project")

	generated := map[string]component.StabilityLevel{
		"traces":  metadata.TracesStability,
		"metrics": metadata.MetricsStability,
		"logs":    metadata.LogsStability,
	}
	seen := map[string]bool{}
	for level, signals := range md.Status.Stability {
		for _, sig := range signals {
			got, ok := generated[sig]
			if !assert.True(t, ok, "metadata.yaml declares signal %q, which has no generated <Signal>Stability constant", sig) {
				continue
			}
			assert.False(t, seen[sig], "signal %q listed twice", sig)
			seen[sig] = true
			assert.Equal(t, strings.ToLower(level), strings.ToLower(got.String()), "%s stability", sig)
		}
	}
	for sig := range generated {
		assert.True(t, seen[sig], "generated %sStability constant, but metadata.yaml does not declare signal %q", sig, sig)
	}
}

func TestMetadataYAMLTelemetryMatchesBuilder(t *testing.T) {
	_, specs := loadMetadata(t)
	byGoName := map[string]metricSpec{}
	byName := map[string]metricSpec{}
	for _, s := range specs {
		byGoName[s.goName] = s
		byName[s.name] = s
	}

	// Every exported field of TelemetryBuilder is a metric of metadata.yaml,
	// with the instrument type mdatagen gives it.
	tbType := reflect.TypeFor[metadata.TelemetryBuilder]()
	var fields []string
	for f := range tbType.Fields() {
		if !f.IsExported() {
			continue
		}
		fields = append(fields, f.Name)
		s, ok := byGoName[f.Name]
		if assert.True(t, ok, "TelemetryBuilder.%s has no metric in metadata.yaml", f.Name) {
			assert.Equal(t, s.instrument.String(), f.Type.String(), "TelemetryBuilder.%s instrument type", f.Name)
		}
	}
	for _, s := range specs {
		assert.Contains(t, fields, s.goName, "metadata.yaml metric %s has no TelemetryBuilder.%s field", s.key, s.goName)
	}

	// Register<Name>Callback exists exactly for the async metrics.
	for m := range reflect.TypeFor[*metadata.TelemetryBuilder]().Methods() {
		goName, ok := strings.CutPrefix(m.Name, "Register")
		if !ok {
			continue
		}
		goName, ok = strings.CutSuffix(goName, "Callback")
		if !assert.True(t, ok, "unexpected method %s", m.Name) {
			continue
		}
		s, ok := byGoName[goName]
		if assert.True(t, ok, "%s has no metric in metadata.yaml", m.Name) {
			assert.True(t, s.data.Async, "%s exists but metric %s is not async", m.Name, s.key)
		}
	}

	// The no-op settings build every instrument without error.
	nopTB, err := metadata.NewTelemetryBuilder(componenttest.NewNopTelemetrySettings())
	require.NoError(t, err)
	nopV := reflect.ValueOf(nopTB).Elem()
	for _, s := range specs {
		f := nopV.FieldByName(s.goName)
		if assert.True(t, f.IsValid(), s.goName) {
			assert.False(t, f.IsNil(), "TelemetryBuilder.%s not built with nop settings", s.goName)
		}
	}
	nopTB.Shutdown()

	// Record through a real SDK and compare what comes out with the yaml.
	tel := componenttest.NewTelemetry()
	t.Cleanup(func() { require.NoError(t, tel.Shutdown(context.Background())) })
	tb, err := metadata.NewTelemetryBuilder(tel.NewTelemetrySettings())
	require.NoError(t, err)
	defer tb.Shutdown()

	ctx := context.Background()
	tbV := reflect.ValueOf(tb)
	for _, s := range specs {
		f := tbV.Elem().FieldByName(s.goName)
		if !f.IsValid() || f.Type() != s.instrument {
			continue // reported above
		}
		if s.data.Async {
			reg := tbV.MethodByName("Register" + s.goName + "Callback")
			if !assert.True(t, reg.IsValid(), "missing TelemetryBuilder.Register%sCallback", s.goName) {
				continue
			}
			if !assert.Equal(t, 1, reg.Type().NumIn(), "Register%sCallback arguments", s.goName) ||
				!assert.Equal(t, s.callbackTyp.String(), reg.Type().In(0).String(), "Register%sCallback argument type", s.goName) {
				continue
			}
			var cb any
			if s.isFloat {
				cb = metric.Float64Callback(func(_ context.Context, o metric.Float64Observer) error {
					o.Observe(1)
					return nil
				})
			} else {
				cb = metric.Int64Callback(func(_ context.Context, o metric.Int64Observer) error {
					o.Observe(1)
					return nil
				})
			}
			out := reg.Call([]reflect.Value{reflect.ValueOf(cb)})
			require.Len(t, out, 1)
			assert.Nil(t, out[0].Interface(), "Register%sCallback", s.goName)
			continue
		}
		switch s.instrument {
		case reflect.TypeFor[metric.Int64Counter]():
			f.Interface().(metric.Int64Counter).Add(ctx, 1)
		case reflect.TypeFor[metric.Float64Counter]():
			f.Interface().(metric.Float64Counter).Add(ctx, 1)
		case reflect.TypeFor[metric.Int64UpDownCounter]():
			f.Interface().(metric.Int64UpDownCounter).Add(ctx, 1)
		case reflect.TypeFor[metric.Float64UpDownCounter]():
			f.Interface().(metric.Float64UpDownCounter).Add(ctx, 1)
		case reflect.TypeFor[metric.Int64Histogram]():
			f.Interface().(metric.Int64Histogram).Record(ctx, 1)
		case reflect.TypeFor[metric.Float64Histogram]():
			f.Interface().(metric.Float64Histogram).Record(ctx, 1)
		case reflect.TypeFor[metric.Int64Gauge]():
			f.Interface().(metric.Int64Gauge).Record(ctx, 1)
		case reflect.TypeFor[metric.Float64Gauge]():
			f.Interface().(metric.Float64Gauge).Record(ctx, 1)
		default:
			t.Errorf("%s: no way to record %v", s.key, s.instrument)
		}
	}

	// Nothing is emitted that metadata.yaml lacks, all under ScopeName.
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.Reader.Collect(ctx, &rm))
	var emitted []string
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			emitted = append(emitted, m.Name)
			_, ok := byName[m.Name]
			assert.True(t, ok, "instrument %q is not in metadata.yaml", m.Name)
			assert.Equal(t, metadata.ScopeName, sm.Scope.Name, "scope of %s", m.Name)
		}
	}

	for _, s := range specs {
		if !assert.Contains(t, emitted, s.name, "metric %s was not emitted", s.key) {
			continue
		}
		got, err := tel.GetMetric(s.name)
		require.NoError(t, err)
		assert.Equal(t, s.name, got.Name)
		assert.Equal(t, s.Unit, got.Unit, "%s: unit", s.name)
		assert.Equal(t, s.fullDesc, got.Description, "%s: description (+ stability suffix)", s.name)
		checkData(t, s, got.Data)
	}
}

func checkData(t *testing.T, s metricSpec, data metricdata.Aggregation) {
	t.Helper()
	switch s.metricType {
	case "Sum":
		var temporality metricdata.Temporality
		var monotonic bool
		var n int
		if s.isFloat {
			d, ok := data.(metricdata.Sum[float64])
			if !assert.True(t, ok, "%s: want Sum[float64], got %T", s.name, data) {
				return
			}
			temporality, monotonic, n = d.Temporality, d.IsMonotonic, len(d.DataPoints)
		} else {
			d, ok := data.(metricdata.Sum[int64])
			if !assert.True(t, ok, "%s: want Sum[int64], got %T", s.name, data) {
				return
			}
			temporality, monotonic, n = d.Temporality, d.IsMonotonic, len(d.DataPoints)
		}
		assert.Equal(t, metricdata.CumulativeTemporality, temporality, "%s: temporality", s.name)
		assert.Equal(t, s.data.Monotonic, monotonic, "%s: monotonic", s.name)
		assert.Equal(t, 1, n, "%s: data points", s.name)
	case "Gauge":
		var n int
		if s.isFloat {
			d, ok := data.(metricdata.Gauge[float64])
			if !assert.True(t, ok, "%s: want Gauge[float64], got %T", s.name, data) {
				return
			}
			n = len(d.DataPoints)
		} else {
			d, ok := data.(metricdata.Gauge[int64])
			if !assert.True(t, ok, "%s: want Gauge[int64], got %T", s.name, data) {
				return
			}
			n = len(d.DataPoints)
		}
		assert.Equal(t, 1, n, "%s: data points", s.name)
	case "Histogram":
		var bounds [][]float64
		if s.isFloat {
			d, ok := data.(metricdata.Histogram[float64])
			if !assert.True(t, ok, "%s: want Histogram[float64], got %T", s.name, data) {
				return
			}
			for _, dp := range d.DataPoints {
				bounds = append(bounds, dp.Bounds)
			}
		} else {
			d, ok := data.(metricdata.Histogram[int64])
			if !assert.True(t, ok, "%s: want Histogram[int64], got %T", s.name, data) {
				return
			}
			for _, dp := range d.DataPoints {
				bounds = append(bounds, dp.Bounds)
			}
		}
		if assert.Len(t, bounds, 1, "%s: data points", s.name) {
			assert.Equal(t, s.data.BucketBoundaries, bounds[0], "%s: bucket boundaries", s.name)
		}
	}
}

type docSection struct {
	heading     string
	description []string
	table       [][]string
	attrHeader  []string
	attrs       [][]string
	extra       []string
}

func parseTableRow(line string) []string {
	line = strings.TrimSpace(line)
	line = strings.TrimPrefix(line, "|")
	line = strings.TrimSuffix(line, "|")
	cells := strings.Split(line, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func parseDocumentation(t *testing.T) (header []string, sections []docSection) {
	t.Helper()
	raw, err := os.ReadFile(documentationPath)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")

	i := 0
	for ; i < len(lines) && lines[i] != "## Internal Telemetry"; i++ {
		header = append(header, lines[i])
	}
	require.Less(t, i, len(lines), "documentation.md has no \"## Internal Telemetry\" section")
	i++

	var cur *docSection
	state := ""
	for ; i < len(lines); i++ {
		line := lines[i]
		switch {
		case strings.HasPrefix(line, "## "):
			require.Failf(t, "unexpected section", "documentation.md: %q after the internal telemetry (no other sections are generated for this metadata.yaml)", line)
		case strings.HasPrefix(line, "### "):
			sections = append(sections, docSection{heading: strings.TrimPrefix(line, "### ")})
			cur = &sections[len(sections)-1]
			state = "description"
		case cur == nil:
			if line != "" && line != "The following telemetry is emitted by this component." {
				require.Failf(t, "unexpected line", "documentation.md: %q", line)
			}
		case line == "#### Attributes":
			state = "attributes"
		case line == "":
			if state == "table" {
				state = "after-table"
			}
		case strings.HasPrefix(line, "|"):
			row := parseTableRow(line)
			switch state {
			case "description", "table":
				state = "table"
				cur.table = append(cur.table, row)
			case "attributes":
				if cur.attrHeader == nil {
					cur.attrHeader = row
				} else if !strings.HasPrefix(row[0], "---") {
					cur.attrs = append(cur.attrs, row)
				}
			default:
				cur.extra = append(cur.extra, line)
			}
		default:
			if state == "description" {
				cur.description = append(cur.description, line)
			} else {
				cur.extra = append(cur.extra, line)
			}
		}
	}
	return header, sections
}

func TestDocumentationMatchesMetadataYAML(t *testing.T) {
	md, specs := loadMetadata(t)
	header, sections := parseDocumentation(t)

	wantHeader := []string{"[comment]: <> (Code generated by mdatagen. DO NOT EDIT.)", "", "# " + md.Type, ""}
	assert.Equal(t, wantHeader, header, "documentation.md header")

	var want []metricSpec
	for _, s := range specs {
		if s.Enabled { // mdatagen documents only enabled telemetry metrics
			want = append(want, s)
		}
	}
	var wantHeadings, gotHeadings []string
	for _, s := range want {
		wantHeadings = append(wantHeadings, s.name)
	}
	for _, sec := range sections {
		gotHeadings = append(gotHeadings, sec.heading)
	}
	// Same set, in mdatagen's (sorted) order, no extra sections.
	assert.Equal(t, wantHeadings, gotHeadings, "documentation.md metric sections")

	for _, s := range want {
		idx := slices.IndexFunc(sections, func(sec docSection) bool { return sec.heading == s.name })
		if idx < 0 {
			continue
		}
		sec := sections[idx]
		t.Run(s.name, func(t *testing.T) {
			assert.Empty(t, sec.extra, "unexpected lines")
			assert.Equal(t, []string{s.Description}, sec.description, "description")

			var wantTable [][]string
			if s.metricType == "Sum" {
				wantTable = [][]string{
					{"Unit", "Metric Type", "Value Type", "Monotonic", "Stability"},
					{"----", "-----------", "----------", "---------", "---------"},
					{s.Unit, s.metricType, s.valueType, fmt.Sprint(s.data.Monotonic), s.stability},
				}
			} else {
				wantTable = [][]string{
					{"Unit", "Metric Type", "Value Type", "Stability"},
					{"----", "-----------", "----------", "---------"},
					{s.Unit, s.metricType, s.valueType, s.stability},
				}
			}
			assert.Equal(t, wantTable, sec.table, "unit / metric type / value type / monotonic / stability table")

			if len(s.Attributes) == 0 {
				assert.Nil(t, sec.attrHeader, "attributes table for a metric without attributes")
				return
			}
			assert.Equal(t, []string{"Name", "Description", "Values", "Semantic Convention"}, sec.attrHeader, "attributes table header")
			var wantAttrs [][]string
			for _, name := range s.Attributes {
				a := md.Attributes[name]
				typ := map[string]string{"string": "Str", "int": "Int", "double": "Double", "bool": "Bool", "bytes": "Bytes", "slice": "Slice", "map": "Map"}[a.Type]
				values := "Any " + typ
				if len(a.Enum) > 0 {
					values = typ + ": ``" + strings.Join(a.Enum, "``, ``") + "``"
				}
				wantAttrs = append(wantAttrs, []string{name, a.Description, values, "-"})
			}
			assert.Equal(t, wantAttrs, sec.attrs, "attributes")
		})
	}
}

// assertEqualHelper is what one AssertEqual<Name> function of
// internal/metadatatest asserts.
type assertEqualHelper struct {
	dpsType, name, description, unit, dataType, monotonic, getMetric string
}

func parseAssertEqualHelpers(t *testing.T) map[string]assertEqualHelper {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, telemetryTestPath, nil, 0)
	require.NoError(t, err)
	unquote := func(e ast.Expr) string {
		if bl, ok := e.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			v, err := strconv.Unquote(bl.Value)
			require.NoError(t, err)
			return v
		}
		return "<not a string literal: " + types.ExprString(e) + ">"
	}
	helpers := map[string]assertEqualHelper{}
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Recv != nil {
			continue
		}
		goName, ok := strings.CutPrefix(fd.Name.Name, "AssertEqual")
		if !assert.True(t, ok, "%s: unexpected function %s", telemetryTestPath, fd.Name.Name) {
			continue
		}
		var h assertEqualHelper
		if params := fd.Type.Params.List; len(params) >= 3 {
			h.dpsType = types.ExprString(params[2].Type)
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if types.ExprString(n.Type) != "metricdata.Metrics" {
					return true
				}
				for _, elt := range n.Elts {
					kv := elt.(*ast.KeyValueExpr)
					switch kv.Key.(*ast.Ident).Name {
					case "Name":
						h.name = unquote(kv.Value)
					case "Description":
						h.description = unquote(kv.Value)
					case "Unit":
						h.unit = unquote(kv.Value)
					case "Data":
						data := kv.Value.(*ast.CompositeLit)
						h.dataType = types.ExprString(data.Type)
						for _, delt := range data.Elts {
							dkv := delt.(*ast.KeyValueExpr)
							if dkv.Key.(*ast.Ident).Name == "IsMonotonic" {
								h.monotonic = types.ExprString(dkv.Value)
							}
						}
					}
				}
			case *ast.CallExpr:
				if types.ExprString(n.Fun) == "tt.GetMetric" && len(n.Args) == 1 {
					h.getMetric = unquote(n.Args[0])
				}
			}
			return true
		})
		helpers[goName] = h
	}
	return helpers
}

func TestMetadataYAMLMatchesMetadatatest(t *testing.T) {
	_, specs := loadMetadata(t)
	helpers := parseAssertEqualHelpers(t)
	setupTest, err := os.ReadFile(telemetryTestTest)
	require.NoError(t, err)

	byGoName := map[string]metricSpec{}
	for _, s := range specs {
		byGoName[s.goName] = s
	}
	for goName := range helpers {
		_, ok := byGoName[goName]
		assert.True(t, ok, "metadatatest.AssertEqual%s has no metric in metadata.yaml", goName)
	}
	for _, s := range specs {
		h, ok := helpers[s.goName]
		if !assert.True(t, ok, "metric %s has no metadatatest.AssertEqual%s", s.key, s.goName) {
			continue
		}
		basic := "int64"
		if s.isFloat {
			basic = "float64"
		}
		dp := "DataPoint"
		if s.metricType == "Histogram" {
			dp = "HistogramDataPoint"
		}
		monotonic := ""
		if s.metricType == "Sum" {
			monotonic = strconv.FormatBool(s.data.Monotonic)
		}
		want := assertEqualHelper{
			dpsType:     "[]metricdata." + dp + "[" + basic + "]",
			name:        s.name,
			description: s.fullDesc,
			unit:        s.Unit,
			dataType:    "metricdata." + s.metricType + "[" + basic + "]",
			monotonic:   monotonic,
			getMetric:   s.name,
		}
		assert.Equal(t, want, h, "metadatatest.AssertEqual%s", s.goName)
		assert.Contains(t, string(setupTest), "AssertEqual"+s.goName+"(t, testTel,", "TestSetupTelemetry does not check %s", s.key)
	}
}
