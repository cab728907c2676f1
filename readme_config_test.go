// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// configRow is one row of the README's configuration reference.
type configRow struct {
	line    int
	keys    []string
	def     string // the Default cell
	allowed string // the Allowed cell
}

var backticked = regexp.MustCompile("`([^`]+)`")

// readmeConfigTable parses the README's configuration reference (header
// "| Key | Default | Allowed | Meaning |").
func readmeConfigTable(t *testing.T) []configRow {
	t.Helper()
	lines := strings.Split(string(readReadme(t)), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "| Key | Default | Allowed |") {
			start = i
		}
	}
	require.GreaterOrEqual(t, start, 0, "README.md has no configuration reference (| Key | Default | Allowed | Meaning |)")
	var rows []configRow
	for i := start + 2; i < len(lines) && strings.HasPrefix(lines[i], "|"); i++ {
		cells := strings.Split(strings.Trim(lines[i], "|"), "|")
		require.GreaterOrEqual(t, len(cells), 4, "README.md line %d", i+1)
		row := configRow{line: i + 1, def: strings.TrimSpace(cells[1]), allowed: strings.TrimSpace(cells[2])}
		for _, m := range backticked.FindAllStringSubmatch(cells[0], -1) {
			row.keys = append(row.keys, m[1])
		}
		rows = append(rows, row)
	}
	return rows
}

// ownKeys are the leaf keys of Config this module defines (not confighttp's
// nor exporterhelper's, which the README covers by a row each and a link),
// with the default value of each.
func ownKeys() map[string]reflect.Value {
	out := map[string]reflect.Value{}
	def := reflect.ValueOf(createDefaultConfig()).Elem()
	var walk func(v reflect.Value, prefix string)
	walk = func(v reflect.Value, prefix string) {
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("mapstructure"), ",")
			if tag == "" || tag == "-" {
				continue // squashed or ignored: confighttp's keys
			}
			if !strings.HasPrefix(f.Type.PkgPath(), "github.com/otlphttpretry/") && f.Type.PkgPath() != "" {
				if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeFor[time.Duration]() {
					continue // another module's section (sending_queue)
				}
			}
			key := prefix + tag
			fv := v.Field(i)
			if fv.Kind() == reflect.Struct {
				walk(fv, key+"::")
				continue
			}
			out[key] = fv
		}
	}
	walk(def, "")
	return out
}

// TestReadmeConfigReferenceHasEveryKey: every key this module defines has
// a row of the README's configuration reference, with its default as
// createDefaultConfig has it, and an allowed range.
func TestReadmeConfigReferenceHasEveryKey(t *testing.T) {
	rows := readmeConfigTable(t)
	byKey := map[string]configRow{}
	for _, r := range rows {
		for _, k := range r.keys {
			byKey[k] = r
		}
	}
	for key, v := range ownKeys() {
		row, ok := byKey[key]
		if !assert.True(t, ok, "README.md's configuration reference has no row for %s", key) {
			continue
		}
		assert.NotEmpty(t, row.allowed, "README.md line %d: %s has no allowed range", row.line, key)
		if len(row.keys) > 1 {
			continue // a row for several keys states their common default in words
		}
		text := row.def // a word (empty, none) or a value in backticks
		if m := backticked.FindStringSubmatch(row.def); m != nil {
			text = m[1]
		}
		assert.True(t, sameDefault(v, text), "README.md line %d: %s's default is %s, createDefaultConfig has %s", row.line, key, text, defaultText(v))
	}
}

func defaultText(v reflect.Value) string {
	if v.Type() == reflect.TypeFor[time.Duration]() {
		return time.Duration(v.Int()).String()
	}
	return fmt.Sprint(v.Interface())
}

// sameDefault compares a default as the README writes it with the value.
func sameDefault(v reflect.Value, text string) bool {
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(strings.Fields(text)[0])
		return err == nil && d == time.Duration(v.Int())
	case v.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(text)
		return err == nil && b == v.Bool()
	case v.Kind() == reflect.Int:
		n, err := strconv.Atoi(text)
		return err == nil && int64(n) == v.Int()
	case v.Kind() == reflect.Float64:
		f, err := strconv.ParseFloat(text, 64)
		return err == nil && f == v.Float()
	case v.Kind() == reflect.String:
		return text == v.String() || text == "empty" && v.String() == ""
	case v.Kind() == reflect.Map:
		return text == "none" && v.Len() == 0
	}
	return false
}
