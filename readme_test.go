// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/confmap"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.yaml.in/yaml/v3"

	"github.com/otlphttpretry/otlphttpretry/internal/readmeconf"
)

// readmeFactories are the components whose configs the README's examples
// can be validated against here (the ones this module depends on).
// batch (processor/batchprocessor) is not a dependency: its section is
// checked only by the collector's validate (internal/e2e).
var readmeFactories = map[string]func() component.Config{
	NewFactory().Type().String():              NewFactory().CreateDefaultConfig,
	otlpreceiver.NewFactory().Type().String(): otlpreceiver.NewFactory().CreateDefaultConfig,
	filestorage.NewFactory().Type().String():  filestorage.NewFactory().CreateDefaultConfig,
}

// manifestModules names the component type each ocb module provides, for
// the modules the README's manifest may list.
var manifestModules = map[string]string{
	"github.com/otlphttpretry/otlphttpretry":                                                  NewFactory().Type().String(),
	"go.opentelemetry.io/collector/receiver/otlpreceiver":                                     otlpreceiver.NewFactory().Type().String(),
	"go.opentelemetry.io/collector/processor/batchprocessor":                                  "batch",
	"github.com/open-telemetry/opentelemetry-collector-contrib/extension/storage/filestorage": filestorage.NewFactory().Type().String(),
}

// componentKinds are the sections of a collector config that hold components.
var componentKinds = []string{"receivers", "processors", "exporters", "extensions", "connectors"}

func readReadme(t *testing.T) []byte {
	t.Helper()
	md, err := os.ReadFile("README.md")
	require.NoError(t, err)
	return md
}

// readmeManifest returns the component types, by kind, that the README's
// ocb manifest fragment (the YAML block listing gomod entries) provides.
func readmeManifest(t *testing.T, md []byte) map[string][]string {
	t.Helper()
	var manifests []readmeconf.YAMLBlock
	for _, b := range readmeconf.YAMLBlocks(md) {
		if strings.Contains(b.Text, "gomod:") {
			manifests = append(manifests, b)
		}
	}
	require.Len(t, manifests, 1, "README.md: one ocb manifest block (```yaml with gomod entries)")
	var m map[string][]struct {
		Gomod string `yaml:"gomod"`
	}
	require.NoError(t, yaml.Unmarshal([]byte(manifests[0].Text), &m), "README.md line %d: the manifest block", manifests[0].Line)
	version := regexp.MustCompile(`^v0\.165\.\d+$`)
	types := map[string][]string{}
	for kind, mods := range m {
		require.Contains(t, componentKinds, kind, "README.md line %d: manifest section %q", manifests[0].Line, kind)
		for _, mod := range mods {
			path, ver, _ := strings.Cut(mod.Gomod, " ")
			typ, ok := manifestModules[path]
			require.True(t, ok, "README.md line %d: manifest module %q: add the component type it provides to manifestModules", manifests[0].Line, path)
			if typ != NewFactory().Type().String() {
				assert.Regexp(t, version, ver, "README.md line %d: %s must be at the collector's release (v0.165.0, contrib v0.165.1)", manifests[0].Line, path)
			}
			types[kind] = append(types[kind], typ)
		}
	}
	return types
}

// Every collector configuration in the README is complete as written: the
// exporter's section decodes into its config and validates, so do the
// sections of the other components this module can check, every component
// a pipeline or service::extensions names is defined in the same block,
// and the README's ocb manifest provides every component type it uses.
func TestReadmeConfigExamples(t *testing.T) {
	md := readReadme(t)
	manifest := readmeManifest(t, md)
	blocks := readmeconf.ConfigBlocks(md)
	require.NotEmpty(t, blocks, "README.md has no configuration example")
	require.Len(t, readmeconf.Blocks(md), len(blocks))

	for _, b := range blocks {
		where := func(format string, args ...any) string {
			return fmt.Sprintf("README.md block at line %d: ", b.Line) + fmt.Sprintf(format, args...)
		}
		var raw map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(b.Text), &raw), where("not YAML"))
		conf := confmap.NewFromStringMap(raw)

		for key := range raw {
			assert.True(t, key == "service" || slices.Contains(componentKinds, key), where("unknown top-level key %q", key))
		}

		// Each component section decodes and validates where this module
		// has the component's factory.
		for _, kind := range componentKinds {
			section, _ := raw[kind].(map[string]any)
			for id := range section {
				typ, _, _ := strings.Cut(id, "/")
				assert.Contains(t, manifest[kind], typ, where("%s %q: the README's manifest does not list a module providing %s type %q", kind, id, kind, typ))
				create, ok := readmeFactories[typ]
				if !ok {
					continue
				}
				sub, err := conf.Sub(kind + "::" + id)
				require.NoError(t, err)
				cfg := create()
				if !assert.NoError(t, sub.Unmarshal(cfg), where("%s::%s does not decode", kind, id)) {
					continue
				}
				assert.NoError(t, confmap.Validate(cfg), where("%s::%s does not validate", kind, id))
			}
		}

		// The service refers only to what the block defines.
		defined := func(kind, id string) bool {
			section, _ := raw[kind].(map[string]any)
			_, ok := section[id]
			return ok
		}
		require.True(t, conf.IsSet("service::pipelines"), where("no service::pipelines"))
		var service struct {
			Extensions []string `mapstructure:"extensions"`
			Pipelines  map[string]struct {
				Receivers  []string `mapstructure:"receivers"`
				Processors []string `mapstructure:"processors"`
				Exporters  []string `mapstructure:"exporters"`
			} `mapstructure:"pipelines"`
		}
		sub, err := conf.Sub("service")
		require.NoError(t, err)
		require.NoError(t, sub.Unmarshal(&service, confmap.WithIgnoreUnused()), where("service"))
		require.NotEmpty(t, service.Pipelines, where("no pipeline"))
		for _, id := range service.Extensions {
			assert.True(t, defined("extensions", id), where("service::extensions names %q, which extensions does not define", id))
		}
		usesExporter := false
		for name, p := range service.Pipelines {
			assert.NotEmpty(t, p.Receivers, where("pipeline %s has no receiver", name))
			assert.NotEmpty(t, p.Exporters, where("pipeline %s has no exporter", name))
			for kind, ids := range map[string][]string{"receivers": p.Receivers, "processors": p.Processors, "exporters": p.Exporters} {
				for _, id := range ids {
					assert.True(t, defined(kind, id), where("pipeline %s names %s %q, which the block does not define", name, kind, id))
				}
			}
			for _, id := range p.Exporters {
				if typ, _, _ := strings.Cut(id, "/"); typ == NewFactory().Type().String() {
					usesExporter = true
				}
			}
		}
		assert.True(t, usesExporter, where("no pipeline uses otlp_http_retry"))
	}
}

// TestReadmeLayoutNamesEveryFile: the README's layout table names every
// Go file (tests aside) of the component and of retry/, and every
// directory of cmd/ and internal/, so that a reader finds where each part
// lives.
func TestReadmeLayoutNamesEveryFile(t *testing.T) {
	md := string(readReadme(t))
	start := strings.Index(md, "## Layout")
	require.GreaterOrEqual(t, start, 0, "README.md has no Layout section")
	layout := md[start:]
	if end := strings.Index(layout[1:], "\n## "); end >= 0 {
		layout = layout[:end+1]
	}
	var want []string
	for _, dir := range []string{".", "retry"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".go") && !strings.HasSuffix(e.Name(), "_test.go") {
				want = append(want, "`"+e.Name()+"`")
			}
		}
	}
	for _, dir := range []string{"cmd", "internal"} {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if e.IsDir() {
				want = append(want, "`"+dir+"/"+e.Name()+"`")
			}
		}
	}
	for _, name := range want {
		assert.Contains(t, layout, name, "README.md's Layout table does not name %s", name)
	}
}
