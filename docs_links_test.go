// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"io/fs"
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdRefLink = regexp.MustCompile(`(?m)^\[[^\]]+\]:\s*(\S+)`)
	mdHeading = regexp.MustCompile("(?m)^#{1,6} +(.+?) *$")
	mdFence   = regexp.MustCompile("(?s)```.*?```")
)

// githubSlug is the anchor GitHub gives a heading: lower case, letters,
// digits, spaces, hyphens and underscores kept, spaces turned to hyphens.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// TestMarkdownLinksResolve: every relative link of the repository's
// Markdown files points to a file that exists and, with a #fragment, to a
// heading of that file (or of the same file), so that moving a section
// cannot leave a link behind.
func TestMarkdownLinksResolve(t *testing.T) {
	fsys := os.DirFS(".")
	anchors := map[string]map[string]bool{}
	var files []string
	require.NoError(t, fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "build" || strings.HasPrefix(d.Name(), ".") && p != ".") {
			return fs.SkipDir
		}
		if strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	}))
	headingsOf := func(p string) map[string]bool {
		if a, ok := anchors[p]; ok {
			return a
		}
		b, err := fs.ReadFile(fsys, p)
		a := map[string]bool{}
		if err == nil {
			for _, m := range mdHeading.FindAllStringSubmatch(mdFence.ReplaceAllString(string(b), ""), -1) {
				a[githubSlug(m[1])] = true
			}
		}
		anchors[p] = a
		return a
	}
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		require.NoError(t, err)
		text := mdFence.ReplaceAllString(string(b), "")
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range mdRefLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || target == "<>" {
				continue
			}
			ref, frag, _ := strings.Cut(target, "#")
			dest := file
			if ref != "" {
				dest = path.Clean(path.Join(path.Dir(file), ref))
				if _, err := fs.Stat(fsys, strings.TrimSuffix(dest, "/")); err != nil {
					t.Errorf("%s: link %q: %s does not exist", file, target, dest)
					continue
				}
			}
			if frag != "" && strings.HasSuffix(dest, ".md") {
				assert.True(t, headingsOf(dest)[frag], "%s: link %q: %s has no heading #%s", file, target, dest, frag)
			}
		}
	}
}
