// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package readmeconf extracts the YAML examples of a Markdown file (the
// README), so that tests can check them: the collector configurations
// against the exporter's config and the collector's validate, the ocb
// manifest fragment against what the configurations use.
package readmeconf // import "github.com/otlphttpretry/otlphttpretry/internal/readmeconf"

import (
	"bufio"
	"bytes"
	"strings"

	"go.yaml.in/yaml/v3"
)

// exporterType is the component type whose configurations Blocks returns.
const exporterType = "otlp_http_retry"

// YAMLBlock is one fenced ```yaml block.
type YAMLBlock struct {
	// Line is the 1-based line of the block's first line of content.
	Line int
	// Text is the content, without the fences.
	Text string
}

// YAMLBlocks returns every ```yaml (or ```yml) fenced block of md, in order.
func YAMLBlocks(md []byte) []YAMLBlock {
	var out []YAMLBlock
	var cur *YAMLBlock
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(md))
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		fence := strings.TrimSpace(line)
		switch {
		case cur == nil && (fence == "```yaml" || fence == "```yml"):
			cur = &YAMLBlock{Line: n + 1}
			text.Reset()
		case cur != nil && fence == "```":
			cur.Text = text.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			text.WriteString(line)
			text.WriteByte('\n')
		}
	}
	return out
}

// ConfigBlocks returns the YAML blocks of md that configure an
// otlp_http_retry exporter under exporters: collector configurations. A
// block that mentions otlp_http_retry under an exporters key but is not
// valid YAML is returned too, so that the caller's check fails on it.
func ConfigBlocks(md []byte) []YAMLBlock {
	var out []YAMLBlock
	for _, b := range YAMLBlocks(md) {
		var doc struct {
			Exporters map[string]any `yaml:"exporters"`
		}
		if err := yaml.Unmarshal([]byte(b.Text), &doc); err != nil {
			if strings.Contains(b.Text, "exporters:") && strings.Contains(b.Text, exporterType) {
				out = append(out, b)
			}
			continue
		}
		for id := range doc.Exporters {
			if typ, _, _ := strings.Cut(id, "/"); typ == exporterType {
				out = append(out, b)
				break
			}
		}
	}
	return out
}

// Blocks returns the text of every collector configuration in md (see
// ConfigBlocks), ready for `otelcol validate --config`.
func Blocks(md []byte) []string {
	var out []string
	for _, b := range ConfigBlocks(md) {
		out = append(out, b.Text)
	}
	return out
}
