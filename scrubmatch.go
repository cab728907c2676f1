// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"encoding/base64"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// This file finds credentials in a text in the forms a backend may echo
// them in, not only as written:
//   - in any case (the text and the credentials are compared in lower case);
//   - escaped: \uXXXX, \xXX, \/, %XX, &#NN;, &#xNN; and the named HTML
//     entities of markup are read as the characters they stand for;
//   - split by markup (<b></b>) or by invisible characters (zero-width
//     spaces, soft hyphens), which are read as nothing;
//   - base64-encoded (standard or URL alphabet, with or without padding,
//     alone or inside a longer base64 text);
//   - cut: a prefix or a suffix of at least minAffix characters of a
//     credential without spaces.
//
// The text is read four times: as written, with markup and invisible
// characters left out, with escapes decoded, and with both (an escape just
// before a credential, or a credential inside what looks like a tag, could
// otherwise hide it); each match is replaced
// whole, escapes and markup included, with redactedText. Time is linear in
// the text's length for each credential.

// minAffix is the shortest prefix or suffix of a credential that is
// scrubbed on its own: shorter ones would blank out ordinary words.
const minAffix = 8

// pattern is one credential form to find, in lower case.
type pattern struct {
	text  string
	affix bool // its prefixes and suffixes of minAffix characters or more count too
}

// patternsFor turns credential values into the patterns to find: each in
// lower case, and its base64 forms.
func patternsFor(secrets []string) []pattern {
	seen := map[string]bool{}
	var out []pattern
	add := func(s string, affix bool) {
		s = strings.ToLower(s)
		if len(s) < minSecretLen || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, pattern{text: s, affix: affix && len(s) >= minAffix && !strings.ContainsAny(s, " \t")})
	}
	for _, s := range secrets {
		add(s, true)
		add(strings.ReplaceAll(s, " ", "+"), false) // a query-escaped space
		for _, b := range base64Forms(s) {
			add(b, false)
		}
	}
	// Longest first: where two overlap, the longer decides what is cut.
	slices.SortFunc(out, func(a, b pattern) int { return len(b.text) - len(a.text) })
	return out
}

// base64Forms are the base64 characters that s fixes wherever it starts in
// an encoded text: at a byte offset of 0, 1 or 2 within a group of three,
// in the standard and the URL alphabet. At offset 0 that is s encoded, with
// and without padding.
func base64Forms(s string) []string {
	if len(s) < 3 {
		return nil
	}
	var out []string
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)))
		raw := enc.WithPadding(base64.NoPadding)
		for k := range 3 {
			b := raw.EncodeToString(append(make([]byte, k), s...))
			// Character j holds bits [6j, 6j+6); s holds [8k, 8(k+len)).
			first, last := (8*k+5)/6, (8*(k+len(s))-6)/6
			if last >= first {
				out = append(out, b[first:last+1])
			}
		}
	}
	return out
}

// normalized is a text read for matching: each byte of norm came from
// text[start[i]:end[i]].
type normalized struct {
	norm       []byte
	start, end []int
}

func (n *normalized) emit(b byte, from, to int) {
	n.norm = append(n.norm, b)
	n.start = append(n.start, from)
	n.end = append(n.end, to)
}

func (n *normalized) emitRune(r rune, from, to int) {
	var buf [utf8.UTFMax]byte
	for _, b := range buf[:utf8.EncodeRune(buf[:], toLower(r))] {
		n.emit(b, from, to)
	}
}

func toLower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + 'a' - 'A'
	}
	return r
}

// How much normalize decodes.
type reading int

const (
	asWritten      reading = iota // lower case only
	withoutMarkup                 // markup and invisible characters read as nothing
	escapesDecoded                // escapes read as what they stand for
	decoded                       // both
)

// readings are every reading, in the order scrubText makes them.
var readings = []reading{asWritten, withoutMarkup, escapesDecoded, decoded}

// normalize reads text in lower case, as r says.
func normalize(text string, r reading) normalized {
	n := normalized{norm: make([]byte, 0, len(text)), start: make([]int, 0, len(text)), end: make([]int, 0, len(text))}
	for i := 0; i < len(text); {
		if r != asWritten {
			if r, size, ok := escapeAt(text, i, r); ok {
				if r >= 0 {
					n.emitRune(r, i, i+size)
				}
				i += size
				continue
			}
		}
		c := text[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		n.emit(c, i, i+1)
		i++
	}
	return n
}

// invisible are characters a text can hold between two of a credential's
// without changing what a reader sees.
var invisible = []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"}

var entities = map[string]rune{"amp": '&', "lt": '<', "gt": '>', "quot": '"', "apos": '\'', "sol": '/', "equals": '=', "plus": '+'}

// escapeAt reads at text[i] what r decodes: a tag or an invisible
// character, an escape. It returns the rune it stands for (-1 for nothing)
// and its length.
func escapeAt(text string, i int, r reading) (rune, int, bool) {
	rest := text[i:]
	c := rest[0]
	escape := c == '\\' || c == '%' || c == '&'
	if escape && r == withoutMarkup || !escape && r == escapesDecoded {
		return 0, 0, false
	}
	switch c {
	case '\\':
		if len(rest) >= 6 && (rest[1] == 'u' || rest[1] == 'U') {
			if v, ok := hexValue(rest[2:6]); ok {
				return v, 6, true
			}
		}
		if len(rest) >= 4 && (rest[1] == 'x' || rest[1] == 'X') {
			if v, ok := hexValue(rest[2:4]); ok {
				return v, 4, true
			}
		}
		if len(rest) >= 2 && strings.IndexByte(`/\"'`, rest[1]) >= 0 {
			return rune(rest[1]), 2, true
		}
	case '%':
		if len(rest) >= 3 {
			if v, ok := hexValue(rest[1:3]); ok {
				return v, 3, true
			}
		}
	case '&':
		end := strings.IndexByte(rest[:min(len(rest), 12)], ';')
		if end < 2 {
			break
		}
		name := rest[1:end]
		if r, ok := entities[strings.ToLower(name)]; ok {
			return r, end + 1, true
		}
		if name[0] == '#' {
			digits, base := name[1:], 10
			if digits != "" && (digits[0] == 'x' || digits[0] == 'X') {
				digits, base = digits[1:], 16
			}
			if v, err := strconv.ParseInt(digits, base, 32); err == nil && v <= utf8.MaxRune {
				return rune(v), end + 1, true
			}
		}
	case '<':
		// A tag: "<" then a letter, "/" or "!", up to ">" within 256 bytes
		// and before any other "<".
		if len(rest) >= 3 && (isASCIILetter(rest[1]) || rest[1] == '/' || rest[1] == '!') {
			tag := rest[:min(len(rest), 256)]
			if end := strings.IndexByte(tag, '>'); end > 0 && strings.IndexByte(tag[1:end], '<') < 0 {
				return -1, end + 1, true
			}
		}
	case 0xc2, 0xe2, 0xef:
		for _, s := range invisible {
			if strings.HasPrefix(rest, s) {
				return -1, len(s), true
			}
		}
	}
	return 0, 0, false
}

// hexValue reads up to 4 hex digits.
func hexValue(s string) (rune, bool) {
	var v rune
	for _, c := range []byte(s) {
		switch {
		case c >= '0' && c <= '9':
			v = v<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			v = v<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			v = v<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return v, true
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// span is a range [from, to) of a text.
type span struct{ from, to int }

// find adds to spans every range of text that holds one of patterns, as
// n reads it.
func (n normalized) find(patterns []pattern, spans []span) []span {
	norm := string(n.norm)
	mark := func(a, b int) { spans = append(spans, span{n.start[a], n.end[b-1]}) }
	for _, p := range patterns {
		if !p.affix {
			for i := 0; ; {
				j := strings.Index(norm[i:], p.text)
				if j < 0 {
					break
				}
				mark(i+j, i+j+len(p.text))
				i += j + 1
			}
			continue
		}
		// A prefix of at least minAffix characters, as long as it goes
		// (the whole credential included).
		head, tail := p.text[:minAffix], p.text[len(p.text)-minAffix:]
		for i := 0; ; {
			j := strings.Index(norm[i:], head)
			if j < 0 {
				break
			}
			a, k := i+j, minAffix
			for k < len(p.text) && a+k < len(norm) && norm[a+k] == p.text[k] {
				k++
			}
			mark(a, a+k)
			i = a + 1
		}
		// A suffix of at least minAffix characters, as far back as it goes.
		for i := 0; ; {
			j := strings.Index(norm[i:], tail)
			if j < 0 {
				break
			}
			b, k := i+j+minAffix, minAffix
			for k < len(p.text) && b-k-1 >= 0 && norm[b-k-1] == p.text[len(p.text)-k-1] {
				k++
			}
			mark(b-k, b)
			i = i + j + 1
		}
	}
	return spans
}

// redactSpans replaces each range of spans in text (merged where they
// overlap or touch) with redactedText.
func redactSpans(text string, spans []span) string {
	if len(spans) == 0 {
		return text
	}
	slices.SortFunc(spans, func(a, b span) int { return a.from - b.from })
	var b strings.Builder
	last := 0
	for i := 0; i < len(spans); {
		cur := spans[i]
		for i++; i < len(spans) && spans[i].from <= cur.to; i++ {
			cur.to = max(cur.to, spans[i].to)
		}
		b.WriteString(text[last:cur.from])
		b.WriteString(redactedText)
		last = cur.to
	}
	b.WriteString(text[last:])
	return b.String()
}

// scrubText replaces every form of patterns in text.
func scrubText(text string, patterns []pattern) string {
	if len(patterns) == 0 || text == "" {
		return text
	}
	var spans []span
	for _, r := range readings {
		spans = normalize(text, r).find(patterns, spans)
	}
	return redactSpans(text, spans)
}
