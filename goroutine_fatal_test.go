// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopCalls are the calls that end a test by runtime.Goexit: they stop it
// only from the test's own goroutine (from another, the test goes on, or a
// later call panics once it has ended).
var stopCalls = map[string]bool{"Fatal": true, "Fatalf": true, "FailNow": true, "Skip": true, "Skipf": true, "SkipNow": true}

// TestNoTestStopsFromAnotherGoroutine: no goroutine a test starts (go f(),
// go func() {…}(), wg.Go(func() {…})) and no HTTP handler a test serves
// reaches t.Fatal, t.FailNow, t.Skip or testify's require, directly or
// through a function, method or closure of its package. go vet sees only
// direct calls; helpers hid three such calls (retrynow_test.go's windows,
// the hostile quota test's forms, demobackend's ask). A package's
// functions are known by name, its methods by name whatever their type,
// a closure by name within its function: a method name two types share
// counts as stopping if either does (rename one rather than silence this).
func TestNoTestStopsFromAnotherGoroutine(t *testing.T) {
	byDir := map[string][]string{}
	require.NoError(t, fs.WalkDir(os.DirFS("."), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || d.Name() == ".git" || d.Name() == "testdata") {
			return fs.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			byDir[filepath.Dir(p)] = append(byDir[filepath.Dir(p)], p)
		}
		return nil
	}))
	var found []string
	for _, files := range byDir {
		found = append(found, stopsFromGoroutines(t, files)...)
	}
	sort.Strings(found)
	for _, f := range found {
		t.Log(f)
	}
	assert.Empty(t, found, "a goroutine other than the test's reaches a call that stops the test: "+
		"return an error (or use t.Error, assert) and check it on the test's goroutine")
}

// stopsFromGoroutines reads one package's test files and returns where a
// goroutine or handler reaches a stopping call.
func stopsFromGoroutines(t *testing.T, files []string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkg := &testPackage{bodies: map[string][]*ast.BlockStmt{}, stops: map[string]bool{}}
	var decls []*ast.FuncDecl
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			decls = append(decls, fd)
			key := "func " + fd.Name.Name
			if fd.Recv != nil {
				key = "method " + fd.Name.Name
			}
			pkg.bodies[key] = append(pkg.bodies[key], fd.Body)
			// Closures assigned to a name, known within their function.
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if as, ok := n.(*ast.AssignStmt); ok {
					for i, rhs := range as.Rhs {
						lit, isLit := rhs.(*ast.FuncLit)
						if id, isID := as.Lhs[min(i, len(as.Lhs)-1)].(*ast.Ident); isLit && isID {
							k := "closure " + fd.Name.Name + "." + id.Name
							pkg.bodies[k] = append(pkg.bodies[k], lit.Body)
						}
					}
				}
				return true
			})
		}
	}
	pkg.fixStops()
	var found []string
	for _, fd := range decls {
		scope := fd.Name.Name
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.GoStmt:
				if lit, ok := x.Call.Fun.(*ast.FuncLit); ok {
					if why := pkg.reachesStop(scope, lit.Body); why != "" {
						found = append(found, fset.Position(x.Pos()).String()+": go func() {…} reaches "+why)
					}
				} else if why := pkg.stopsAt(scope, x.Call); why != "" {
					found = append(found, fset.Position(x.Pos()).String()+": go "+why)
				}
			case *ast.CallExpr:
				if name := calleeName(x); name == "Go" || name == "HandlerFunc" {
					for _, arg := range x.Args {
						if lit, ok := arg.(*ast.FuncLit); ok {
							if why := pkg.reachesStop(scope, lit.Body); why != "" {
								found = append(found, fset.Position(x.Pos()).String()+": "+name+"(func() {…}) reaches "+why)
							}
						}
					}
				}
			}
			return true
		})
	}
	return found
}

// testPackage is one package's test functions, methods and named
// closures (by "func name", "method name", "closure enclosing.name"), and
// which of them stop the test.
type testPackage struct {
	bodies map[string][]*ast.BlockStmt
	stops  map[string]bool
}

// fixStops finds every body that reaches a stopping call, directly or
// through another: a fixed point.
func (p *testPackage) fixStops() {
	for changed := true; changed; {
		changed = false
		for key, bs := range p.bodies {
			if p.stops[key] {
				continue
			}
			scope := ""
			if k, ok := strings.CutPrefix(key, "closure "); ok {
				scope, _, _ = strings.Cut(k, ".")
			} else if k, ok := strings.CutPrefix(key, "func "); ok {
				scope = k
			}
			for _, b := range bs {
				if p.reachesStop(scope, b) != "" {
					p.stops[key], changed = true, true
					break
				}
			}
		}
	}
}

// stopsAt says which stopping function call calls, seen from the function
// scope, or "".
func (p *testPackage) stopsAt(scope string, call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		for _, key := range []string{"closure " + scope + "." + fn.Name, "func " + fn.Name} {
			if p.stops[key] {
				return key
			}
		}
	case *ast.SelectorExpr:
		if x, ok := fn.X.(*ast.Ident); ok && x.Name == "require" {
			return "require." + fn.Sel.Name
		}
		if x, ok := fn.X.(*ast.Ident); ok && x.Name == "log" {
			return "" // log.Fatal ends the process: another matter
		}
		if stopCalls[fn.Sel.Name] {
			return fn.Sel.Name
		}
		if p.stops["method "+fn.Sel.Name] {
			return "method " + fn.Sel.Name
		}
	}
	return ""
}

// reachesStop says which stopping call body reaches, or "". A closure
// handed to t.Run, synctest.Test or t.Cleanup runs on a goroutine of its
// own test, or after the test: it is not followed.
func (p *testPackage) reachesStop(scope string, body *ast.BlockStmt) string {
	why := ""
	ast.Inspect(body, func(n ast.Node) bool {
		if why != "" {
			return false
		}
		call, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		switch calleeName(call) {
		case "Run", "Test", "Cleanup":
			return false
		}
		why = p.stopsAt(scope, call)
		return why == ""
	})
	return why
}

// calleeName is the called function's or method's name, or "".
func calleeName(call *ast.CallExpr) string {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return fn.Name
	case *ast.SelectorExpr:
		return fn.Sel.Name
	}
	return ""
}
