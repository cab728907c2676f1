package demorun

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Sample is one line of the Prometheus text exposition format.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
	// Line is the line as scraped.
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

// ParseMetrics parses the Prometheus text exposition format (comments are skipped).
func ParseMetrics(text string) (Metrics, error) {
	var out Metrics
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d %q: %w", n, line, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}, Line: line}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no value")
	}
	s.Name, line = line[:i], line[i:]
	if line[0] == '{' {
		line = line[1:]
		for {
			line = strings.TrimLeft(line, " ,")
			if line == "" {
				return s, fmt.Errorf("unterminated labels")
			}
			if line[0] == '}' {
				line = line[1:]
				break
			}
			eq := strings.IndexByte(line, '=')
			if eq <= 0 || len(line) < eq+2 || line[eq+1] != '"' {
				return s, fmt.Errorf("bad label")
			}
			name := strings.TrimSpace(line[:eq])
			line = line[eq+2:]
			var v strings.Builder
			closed := false
			for j := 0; j < len(line); j++ {
				c := line[j]
				if c == '\\' && j+1 < len(line) {
					j++
					switch line[j] {
					case 'n':
						v.WriteByte('\n')
					default:
						v.WriteByte(line[j])
					}
					continue
				}
				if c == '"' {
					line, closed = line[j+1:], true
					break
				}
				v.WriteByte(c)
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value")
			}
			s.Labels[name] = v.String()
		}
	}
	fields := strings.Fields(line)
	if len(fields) == 0 {
		return s, fmt.Errorf("no value")
	}
	v, err := parseValue(fields[0])
	if err != nil {
		return s, err
	}
	s.Value = v
	return s, nil
}

func parseValue(s string) (float64, error) {
	switch s {
	case "+Inf":
		return math.Inf(1), nil
	case "-Inf":
		return math.Inf(-1), nil
	case "NaN":
		return math.NaN(), nil
	}
	return strconv.ParseFloat(s, 64)
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
