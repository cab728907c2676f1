// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demorun

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one sample of a scrape: a counter, gauge or untyped value, or
// one _bucket, _sum or _count series of a histogram (and the like of a
// summary), as the Prometheus text format writes it.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
	// Line is the sample in the text exposition format, labels sorted.
	Line string
}

// Metrics is a scrape.
type Metrics []Sample

// Scrape fetches and parses a Prometheus text endpoint.
func Scrape(ctx context.Context, url string) (Metrics, error) {
	code, body, err := HTTPGet(ctx, url)
	if err != nil {
		return nil, err
	}
	if code != 200 {
		return nil, fmt.Errorf("%s answered %d", url, code)
	}
	return ParseMetrics(string(body))
}

// ParseMetrics parses the Prometheus text exposition format with expfmt.
// Families come out sorted by name, each family's samples in the order of
// the text.
func ParseMetrics(text string) (Metrics, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return nil, err
	}
	var out Metrics
	for _, name := range slices.Sorted(maps.Keys(families)) {
		samples, err := expfmt.ExtractSamples(&expfmt.DecodeOptions{}, families[name])
		if err != nil {
			return nil, fmt.Errorf("metric %s: %w", name, err)
		}
		for _, s := range samples {
			out = append(out, newSample(s))
		}
	}
	return out, nil
}

func newSample(s *model.Sample) Sample {
	out := Sample{Name: string(s.Metric[model.MetricNameLabel]), Labels: map[string]string{}, Value: float64(s.Value)}
	for k, v := range s.Metric {
		if k != model.MetricNameLabel {
			out.Labels[string(k)] = string(v)
		}
	}
	out.Line = out.textLine()
	return out
}

var labelValueEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// textLine writes s as the text format does: name{label="value",...} value.
func (s Sample) textLine() string {
	var b strings.Builder
	b.WriteString(s.Name)
	if len(s.Labels) > 0 {
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(s.Labels)) {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s=\"%s\"", k, labelValueEscaper.Replace(s.Labels[k]))
		}
		b.WriteByte('}')
	}
	b.WriteByte(' ')
	switch {
	case math.IsInf(s.Value, 1):
		b.WriteString("+Inf")
	case math.IsInf(s.Value, -1):
		b.WriteString("-Inf")
	default:
		b.WriteString(strconv.FormatFloat(s.Value, 'g', -1, 64))
	}
	return b.String()
}

// Match reports whether s has every label in want (name → value).
func (s Sample) Match(want map[string]string) bool {
	for k, v := range want {
		if got, ok := s.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// Find returns the samples named name that carry every label in want.
func (m Metrics) Find(name string, want map[string]string) Metrics {
	var out Metrics
	for _, s := range m {
		if s.Name == name && s.Match(want) {
			out = append(out, s)
		}
	}
	return out
}

// Sum adds the values of Find(name, want).
func (m Metrics) Sum(name string, want map[string]string) float64 {
	var sum float64
	for _, s := range m.Find(name, want) {
		sum += s.Value
	}
	return sum
}

// WithPrefix returns the samples whose name starts with prefix.
func (m Metrics) WithPrefix(prefix string) Metrics {
	var out Metrics
	for _, s := range m {
		if strings.HasPrefix(s.Name, prefix) {
			out = append(out, s)
		}
	}
	return out
}

// Names returns the distinct sample names, sorted.
func (m Metrics) Names() []string {
	set := map[string]bool{}
	for _, s := range m {
		set[s.Name] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// LabelNames returns the distinct label names of the samples named name, sorted.
func (m Metrics) LabelNames(name string) []string {
	set := map[string]bool{}
	for _, s := range m.Find(name, nil) {
		for k := range s.Labels {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
