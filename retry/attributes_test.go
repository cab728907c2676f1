// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// packageConsts returns, for each declared type name, the constants of
// that type in the package's non-test files (an iota block's later lines
// inherit the type of the line above), and for "" the untyped ones, with
// their values when they are string literals.
func packageConsts(t *testing.T) map[string]map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]string{}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			typ := ""
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				switch {
				case vs.Type != nil:
					typ = types(vs.Type)
				case len(vs.Values) > 0:
					typ = ""
				}
				for i, name := range vs.Names {
					value := ""
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							value, _ = strconv.Unquote(lit.Value)
						}
					}
					if out[typ] == nil {
						out[typ] = map[string]string{}
					}
					out[typ][name.Name] = value
				}
			}
		}
	}
	return out
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestAttributeValuesListEveryConstant: AttributeValues is built from
// lists that sit beside the constants they name; a constant added to an
// enumeration and not to its list (or a names array shorter than its
// enumeration) fails here, so the metric attributes' one source stays
// whole.
func TestAttributeValuesListEveryConstant(t *testing.T) {
	consts := packageConsts(t)

	// Enumerations of ints with a names array, one name per constant.
	for typ, n := range map[string]int{
		"OutcomeKind": len(outcomeKindNames), "Path": len(pathNames), "DelaySource": len(sourceNames),
		"DropReason": len(dropNames), "HoldReason": len(holdNames), "PaceSource": len(paceNames),
	} {
		if got := len(consts[typ]); got != n {
			t.Errorf("%s has %d constants and %d names", typ, got, n)
		}
	}
	// Enumerations of strings, each constant in its list.
	for typ, list := range map[string][]string{
		"ParseResult":     strs(parseResults[:]),
		"RateLimitReject": strs(rateLimitRejects[:]),
	} {
		for name, value := range consts[typ] {
			if !slices.Contains(list, value) {
				t.Errorf("%s %s (%q) is missing from its list %v", typ, name, value, list)
			}
		}
		if len(list) != len(consts[typ]) {
			t.Errorf("%s: %d constants, %d in the list", typ, len(consts[typ]), len(list))
		}
	}
	// Untyped string constants by prefix: the network reasons (TLS is
	// never retried) and the attempt outcomes.
	for prefix, list := range map[string][]string{"Reason": append(retryReasons[:], ReasonTLS, ReasonConfig), "outcome": attemptOutcomes[:]} {
		n := 0
		for name, value := range consts[""] {
			if strings.HasPrefix(name, prefix) {
				n++
				if !slices.Contains(list, value) {
					t.Errorf("%s (%q) is missing from its list %v", name, value, list)
				}
			}
		}
		if n != len(list) {
			t.Errorf("%s*: %d constants, %d in the list", prefix, n, len(list))
		}
	}
	for attr, values := range AttributeValues() {
		if len(values) == 0 || slices.Contains(values, "") {
			t.Errorf("%s: %q", attr, values)
		}
	}
}
