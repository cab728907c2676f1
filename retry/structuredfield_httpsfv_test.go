// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dunglas/httpsfv"
)

// TestStructuredFieldParserAgainstHttpsfv holds the reason given in
// structuredfield.go for not using github.com/dunglas/httpsfv: it parses
// every string literal of this package's tests and every value of the
// stored fuzz corpora as a List and as a Dictionary with both parsers, and
// fails on a disagreement that is not one of this parser's two
// leniencies (white space inside parameters, and tabs around the field,
// which HTTP strips before a field is parsed; an Integer of more than 15
// digits or a Decimal of more than 12 integer digits). It also fails if
// either leniency is never seen, since then the inputs no longer show why.
// The counts are in its log.
func TestStructuredFieldParserAgainstHttpsfv(t *testing.T) {
	inputs := sfComparisonInputs(t)
	var parses, agree, spaces, huge int
	for _, s := range inputs {
		for _, dict := range []bool{false, true} {
			parses++
			ours, oursErr := ourSFShape(s, dict)
			theirs, theirsErr := httpsfvShape(s, dict)
			switch {
			case oursErr == nil && theirsErr == nil && slices.Equal(ours, theirs),
				oursErr != nil && theirsErr != nil:
				agree++
			case oursErr == nil && theirsErr != nil && sfHugeNumber.MatchString(s):
				huge++
			case oursErr == nil && theirsErr != nil && httpsfvAccepts(sfParamSpaces.ReplaceAllString(strings.Trim(s, " \t"), "$1"), dict):
				spaces++
			default:
				t.Errorf("%q as a %s: this parser %v (err %v), httpsfv %v (err %v)",
					s, map[bool]string{false: "List", true: "Dictionary"}[dict], ours, oursErr, theirs, theirsErr)
			}
		}
	}
	t.Logf("%d inputs, %d parses: %d agree, %d differ by white space (inside parameters, tabs around the field), %d by a number longer than RFC 9651 allows",
		len(inputs), parses, agree, spaces, huge)
	if spaces == 0 || huge == 0 {
		t.Errorf("the inputs no longer show both leniencies (white space: %d, long numbers: %d): structuredfield.go's reason is not held", spaces, huge)
	}
}

var (
	sfHugeNumber  = regexp.MustCompile(`\d{16,}|\d{13,}\.`)
	sfParamSpaces = regexp.MustCompile(`[ \t]*([;=])[ \t]*`)
)

// ourSFShape is what a parse found: each member's key (Dictionary) and
// its parameters' keys, a duplicate once (sfParams.get reads the last
// value, as httpsfv keeps it).
func ourSFShape(s string, dict bool) ([]string, error) {
	var shape []string
	if dict {
		ms, err := parseSFDictionary(s)
		for _, m := range ms {
			shape = append(shape, "key:"+m.key)
			shape = append(shape, paramKeys(m.params)...)
		}
		return shape, err
	}
	items, err := parseSFList(s)
	for _, it := range items {
		shape = append(shape, "member")
		shape = append(shape, paramKeys(it.params)...)
	}
	return shape, err
}

func paramKeys(ps sfParams) []string {
	var keys []string
	for _, p := range ps {
		if !slices.Contains(keys, p.key) {
			keys = append(keys, p.key)
		}
	}
	return keys
}

func httpsfvShape(s string, dict bool) ([]string, error) {
	var shape []string
	params := func(m httpsfv.Member) {
		var p *httpsfv.Params
		switch v := m.(type) {
		case httpsfv.Item:
			p = v.Params
		case httpsfv.InnerList:
			p = v.Params
		}
		if p != nil {
			shape = append(shape, p.Names()...)
		}
	}
	if dict {
		d, err := httpsfv.UnmarshalDictionary([]string{s})
		if err != nil {
			return nil, err
		}
		for _, k := range d.Names() {
			shape = append(shape, "key:"+k)
			m, _ := d.Get(k)
			params(m)
		}
		return shape, nil
	}
	l, err := httpsfv.UnmarshalList([]string{s})
	if err != nil {
		return nil, err
	}
	for _, m := range l {
		shape = append(shape, "member")
		params(m)
	}
	return shape, nil
}

func httpsfvAccepts(s string, dict bool) bool {
	_, err := httpsfvShape(s, dict)
	return err == nil
}

// sfComparisonInputs: every string literal of this package's test files
// and every string of its stored fuzz corpora, once each.
func sfComparisonInputs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
		}
	}
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		f, perr := parser.ParseFile(fset, name, nil, 0)
		if perr != nil {
			t.Fatal(perr)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, uerr := strconv.Unquote(lit.Value); uerr == nil {
					add(s)
				}
			}
			return true
		})
	}
	corpus, err := filepath.Glob(filepath.Join("testdata", "fuzz", "*", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range corpus {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.SplitSeq(string(data), "\n") {
			if v, ok := strings.CutPrefix(line, "string("); ok {
				if s, err := strconv.Unquote(strings.TrimSuffix(v, ")")); err == nil {
					add(s)
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for s := range seen {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
