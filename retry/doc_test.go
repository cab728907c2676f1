// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"strings"
	"testing"
)

// isInterfaceMethod: methods an exported type has to satisfy an interface
// of the standard library or the collector (fmt.Stringer, error,
// confmap.Validator), which the doc need not name.
func isInterfaceMethod(name string) bool {
	switch name {
	case "String", "Error", "Unwrap", "Validate":
		return true
	}
	return false
}

// TestPackageDocListsTheAPI: doc.go names every exported identifier of
// the package (types, functions, variables, constants without a named
// type of their own, and the exported methods of exported types but those
// of isInterfaceMethod), so that an identifier joins the API on purpose.
func TestPackageDocListsTheAPI(t *testing.T) {
	fset := token.NewFileSet()
	docFile, err := parser.ParseFile(fset, "doc.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	doc := docFile.Doc.Text()
	words := map[string]bool{}
	for _, w := range regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*…?`).FindAllString(doc, -1) {
		words[w] = true
	}
	listed := func(name string) bool {
		if words[name] {
			return true
		}
		for w := range words {
			if p, ok := strings.CutSuffix(w, "…"); ok && strings.HasPrefix(name, p) {
				return true
			}
		}
		return false
	}
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var api []string
	exportedTypes := map[string]bool{}
	var methods []*ast.FuncDecl
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv != nil {
					methods = append(methods, d)
				} else if d.Name.IsExported() {
					api = append(api, d.Name.Name)
				}
			case *ast.GenDecl:
				typed := false
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() {
							api = append(api, s.Name.Name)
							exportedTypes[s.Name.Name] = true
						}
					case *ast.ValueSpec:
						if s.Type != nil {
							typed = true
						}
						for _, n := range s.Names {
							if n.IsExported() && (d.Tok != token.CONST || !typed) {
								api = append(api, n.Name)
							}
						}
					}
				}
			}
		}
	}
	for _, m := range methods {
		recv := m.Recv.List[0].Type
		if star, ok := recv.(*ast.StarExpr); ok {
			recv = star.X
		}
		id, ok := recv.(*ast.Ident)
		if !ok || !exportedTypes[id.Name] || !m.Name.IsExported() || isInterfaceMethod(m.Name.Name) {
			continue
		}
		api = append(api, m.Name.Name)
	}
	for _, name := range api {
		if !listed(name) {
			t.Errorf("doc.go does not name %s: list it in the package's API, or make it the package's own", name)
		}
	}
}
