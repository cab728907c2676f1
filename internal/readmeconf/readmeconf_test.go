// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package readmeconf

import (
	"reflect"
	"testing"
)

const md = "# Title\n" + // 1
	"\n" + // 2
	"```yaml\n" + // 3
	"exporters:\n" + // 4
	"  otlp_http_retry/backend:\n" + // 5
	"    endpoint: http://x\n" + // 6
	"```\n" + // 7
	"```yaml\n" + // 8
	"service:\n" + // 9
	"  telemetry: {}\n" + // 10
	"```\n" + // 11
	"```sh\n" + // 12
	"exporters: otlp_http_retry\n" + // 13
	"```\n" + // 14
	"  ```yml\n" + // 15
	"  exporters: [otlp_http_retry\n" + // 16
	"  ```\n" + // 17
	"```yaml\n" + // 18
	"exporters:\n" + // 19
	"  otlp_http:\n" + // 20
	"```\n" // 21

func TestYAMLBlocks(t *testing.T) {
	got := YAMLBlocks([]byte(md))
	want := []YAMLBlock{
		{Line: 4, Text: "exporters:\n  otlp_http_retry/backend:\n    endpoint: http://x\n"},
		{Line: 9, Text: "service:\n  telemetry: {}\n"},
		{Line: 16, Text: "  exporters: [otlp_http_retry\n"},
		{Line: 19, Text: "exporters:\n  otlp_http:\n"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %#v\nwant %#v", got, want)
	}
}

func TestConfigBlocks(t *testing.T) {
	got := Blocks([]byte(md))
	// The exporter's block, and the broken one that mentions it (so that
	// a check on it fails); not the service fragment, the shell block or
	// another exporter's block.
	want := []string{
		"exporters:\n  otlp_http_retry/backend:\n    endpoint: http://x\n",
		"  exporters: [otlp_http_retry\n",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q\nwant %q", got, want)
	}
}
