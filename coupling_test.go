// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const couplingDoc = "docs/exporterhelper-coupling.md"

// TestExporterhelperCouplingIsListed holds docs/exporterhelper-coupling.md,
// the list of what the exporter relies on in exporterhelper, to the code:
// it names the exporterhelper version go.mod requires (an upgrade fails
// here until someone has read the list against the new version), every
// test it names exists, and every text of exporterhelper that logfilter.go
// matches is on it.
func TestExporterhelperCouplingIsListed(t *testing.T) {
	raw, err := os.ReadFile(couplingDoc)
	require.NoError(t, err)
	doc := string(raw)

	gomod, err := os.ReadFile("go.mod")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^\s*go\.opentelemetry\.io/collector/exporter/exporterhelper (v\S+)`).FindSubmatch(gomod)
	require.NotNil(t, m, "go.mod requires no exporterhelper")
	version := string(m[1])
	assert.Contains(t, doc, "exporterhelper`\n**"+version+"**", "%s was checked against another exporterhelper than go.mod's %s: read every row against the new version, then update the version it names", couplingDoc, version)

	tests := testFunctions(t, ".", filepath.Join("internal", "e2e"))
	named := regexp.MustCompile("`(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(doc, -1)
	require.NotEmpty(t, named)
	for _, m := range named {
		assert.True(t, tests[m[1]], "%s names %s, which no test file defines", couplingDoc, m[1])
	}

	for _, text := range []string{helperRetryMsg, helperDropMsg, helperShutdownPrefix} {
		assert.Contains(t, doc, "`"+text+"`", "%s does not list exporterhelper's text %q that logfilter.go relies on", couplingDoc, text)
	}
}

// testFunctions is the set of Test functions in the _test.go files of dirs.
func testFunctions(t *testing.T, dirs ...string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fset := token.NewFileSet()
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		for _, e := range entries {
			if !strings.HasSuffix(e.Name(), "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
			require.NoError(t, err)
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") {
					out[fd.Name.Name] = true
				}
			}
		}
	}
	return out
}
