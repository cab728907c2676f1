// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"encoding/base64"
	"errors"
	"strings"
	"unicode/utf8"
)

// A parser for the Lists and Dictionaries of Structured Field Values
// (RFC 9651, which obsoletes RFC 8941), enough to read the RateLimit and
// RateLimit-Policy header fields. It follows the RFC's parsing algorithms
// (section 4.2) with two leniencies, both harmless to the meaning:
//   - white space (SP or HTAB) is accepted before ";" and around "=" inside
//     parameters, where the RFC accepts none;
//   - an Integer of more than 15 digits, or a Decimal of more than 12
//     integer digits, parses (flagged sfValue.huge) instead of failing the
//     whole field, so that the caller can reject that one value as "huge".
//
// Any other deviation fails the whole field, as the RFC requires. Time and
// memory are linear in the field's size (a Dictionary's duplicate keys are
// found through a map); ParseRateLimit also caps what it reads.
//
// Why not github.com/dunglas/httpsfv: it is linear too (its Dictionary and
// Params are maps), but it has neither leniency (nor does it trim tabs
// around the field, which HTTP strips before a field is parsed), so it
// fails the whole field where this parser reads it.
// TestStructuredFieldParserAgainstHttpsfv parses every string of this
// package's tests and fuzz corpora both ways and fails on any other
// disagreement: of 2 422 List and Dictionary parses, 19 disagree, 6 on
// white space and 13 on a number too long (its log has the counts).

type sfKind uint8

const (
	sfInteger sfKind = iota + 1
	sfDecimal
	sfString
	sfToken
	sfByteSeq
	sfBoolean
	sfDate
	sfDisplayString
	sfInnerList
)

// sfValue is a bare item (or an inner list, whose members are dropped: the
// RateLimit fields use none).
type sfValue struct {
	kind sfKind
	// Integer and Date: the value. Decimal: its integer part.
	i int64
	// Decimal: its fraction in billionths, with the sign of the number.
	nanos int64
	// String, Token, Display String: the text. Byte Sequence: the decoded bytes.
	s string
	// Boolean.
	b bool
	// Integer or Decimal with more digits than RFC 9651 allows; i is then
	// saturated and must not be used.
	huge bool
}

type sfParam struct {
	key string
	val sfValue
}

type sfParams []sfParam

// get returns the value of key; the RFC says a later duplicate overrides.
func (p sfParams) get(key string) (sfValue, bool) {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i].key == key {
			return p[i].val, true
		}
	}
	return sfValue{}, false
}

type sfItem struct {
	val    sfValue
	params sfParams
}

type sfDictMember struct {
	key string
	sfItem
}

var errSF = errors.New("not a structured field value")

type sfParser struct {
	s string
	i int
}

func (p *sfParser) eof() bool { return p.i >= len(p.s) }

func (p *sfParser) peek() byte {
	if p.eof() {
		return 0
	}
	return p.s[p.i]
}

func (p *sfParser) skipSP() {
	for !p.eof() && p.s[p.i] == ' ' {
		p.i++
	}
}

func (p *sfParser) skipOWS() {
	for !p.eof() && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// parseSFList parses a List field value (all field lines already joined).
func parseSFList(s string) ([]sfItem, error) {
	p, err := newSFParser(s)
	if err != nil {
		return nil, err
	}
	var out []sfItem
	for !p.eof() {
		it, err := p.member()
		if err != nil {
			return nil, err
		}
		out = append(out, it)
		if err := p.nextMember(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseSFDictionary parses a Dictionary field value. Members keep their
// order; a later duplicate key replaces an earlier one, as the RFC says.
func parseSFDictionary(s string) ([]sfDictMember, error) {
	p, err := newSFParser(s)
	if err != nil {
		return nil, err
	}
	var out []sfDictMember
	index := map[string]int{} // a map, not a search: duplicates cost no more than other keys
	for !p.eof() {
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		var m sfDictMember
		m.key = key
		if p.peek() == '=' {
			p.i++
			if m.sfItem, err = p.member(); err != nil {
				return nil, err
			}
		} else {
			m.val = sfValue{kind: sfBoolean, b: true}
			if m.params, err = p.params(); err != nil {
				return nil, err
			}
		}
		if j, ok := index[key]; ok {
			out[j] = m
		} else {
			index[key] = len(out)
			out = append(out, m)
		}
		if err := p.nextMember(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func newSFParser(s string) (*sfParser, error) {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return nil, errSF // fields are ASCII
		}
	}
	p := &sfParser{s: strings.Trim(s, " \t")}
	return p, nil
}

// nextMember consumes the "," between members, failing on a trailing one.
func (p *sfParser) nextMember() error {
	p.skipOWS()
	if p.eof() {
		return nil
	}
	if p.s[p.i] != ',' {
		return errSF
	}
	p.i++
	p.skipOWS()
	if p.eof() {
		return errSF
	}
	return nil
}

// member is an Item or an Inner List, with parameters.
func (p *sfParser) member() (sfItem, error) {
	var it sfItem
	var err error
	if p.peek() == '(' {
		err = p.innerList()
		it.val = sfValue{kind: sfInnerList}
	} else {
		it.val, err = p.bareItem()
	}
	if err != nil {
		return it, err
	}
	it.params, err = p.params()
	return it, err
}

func (p *sfParser) innerList() error {
	p.i++ // "("
	for !p.eof() {
		p.skipSP()
		if p.peek() == ')' {
			p.i++
			return nil
		}
		if _, err := p.bareItem(); err != nil {
			return err
		}
		if _, err := p.params(); err != nil {
			return err
		}
		if c := p.peek(); c != ' ' && c != ')' {
			return errSF
		}
	}
	return errSF
}

func (p *sfParser) params() (sfParams, error) {
	var out sfParams
	for {
		save := p.i
		p.skipOWS() // lenient: white space before ";"
		if p.peek() != ';' {
			p.i = save
			return out, nil
		}
		p.i++
		p.skipOWS()
		key, err := p.key()
		if err != nil {
			return nil, err
		}
		val := sfValue{kind: sfBoolean, b: true}
		save = p.i
		p.skipOWS() // lenient: white space before "="
		if p.peek() == '=' {
			p.i++
			p.skipOWS() // lenient: white space after "="
			if val, err = p.bareItem(); err != nil {
				return nil, err
			}
		} else {
			p.i = save
		}
		out = append(out, sfParam{key: key, val: val})
	}
}

func (p *sfParser) key() (string, error) {
	start := p.i
	if c := p.peek(); (c < 'a' || c > 'z') && c != '*' {
		return "", errSF
	}
	for !p.eof() {
		c := p.s[p.i]
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' && c != '.' && c != '*' {
			break
		}
		p.i++
	}
	return p.s[start:p.i], nil
}

func (p *sfParser) bareItem() (sfValue, error) {
	c := p.peek()
	switch {
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	case c == '"':
		s, err := p.quoted()
		return sfValue{kind: sfString, s: s}, err
	case c == '*' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
		return p.token(), nil
	case c == ':':
		return p.byteSeq()
	case c == '?':
		return p.boolean()
	case c == '@':
		p.i++
		v, err := p.number()
		if err != nil || v.kind != sfInteger {
			return sfValue{}, errSF
		}
		v.kind = sfDate
		return v, nil
	case c == '%':
		return p.displayString()
	}
	return sfValue{}, errSF
}

// number parses an Integer or a Decimal.
func (p *sfParser) number() (sfValue, error) {
	neg := false
	if p.peek() == '-' {
		neg = true
		p.i++
	}
	start := p.i
	for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	intDigits := p.s[start:p.i]
	if intDigits == "" {
		return sfValue{}, errSF
	}
	v := sfValue{kind: sfInteger}
	if p.peek() == '.' {
		p.i++
		fs := p.i
		for !p.eof() && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
		frac := p.s[fs:p.i]
		if frac == "" || len(frac) > 3 {
			return sfValue{}, errSF
		}
		v.kind = sfDecimal
		v.huge = len(intDigits) > 12
		for _, d := range []byte(frac + "000000000"[:9-len(frac)]) {
			v.nanos = v.nanos*10 + int64(d-'0')
		}
	} else {
		v.huge = len(intDigits) > 15
	}
	if v.huge {
		v.i = 1<<63 - 1
	} else {
		for _, d := range []byte(intDigits) {
			v.i = v.i*10 + int64(d-'0')
		}
	}
	if neg {
		v.i, v.nanos = -v.i, -v.nanos
	}
	return v, nil
}

func (p *sfParser) quoted() (string, error) {
	p.i++ // opening quote
	var b strings.Builder
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			if p.eof() || (p.s[p.i] != '"' && p.s[p.i] != '\\') {
				return "", errSF
			}
			b.WriteByte(p.s[p.i])
			p.i++
		case c == '"':
			return b.String(), nil
		case c < 0x20 || c > 0x7e:
			return "", errSF
		default:
			b.WriteByte(c)
		}
	}
	return "", errSF
}

func (p *sfParser) token() sfValue {
	start := p.i
	p.i++
	for !p.eof() && (isTchar(p.s[p.i]) || p.s[p.i] == ':' || p.s[p.i] == '/') {
		p.i++
	}
	return sfValue{kind: sfToken, s: p.s[start:p.i]}
}

// isTchar reports whether c is a tchar of RFC 9110.
func isTchar(c byte) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *sfParser) byteSeq() (sfValue, error) {
	p.i++ // opening colon
	end := strings.IndexByte(p.s[p.i:], ':')
	if end < 0 {
		return sfValue{}, errSF
	}
	enc := p.s[p.i : p.i+end]
	p.i += end + 1
	for _, c := range []byte(enc) {
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '+' && c != '/' && c != '=' {
			return sfValue{}, errSF
		}
	}
	dec, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return sfValue{}, errSF
	}
	return sfValue{kind: sfByteSeq, s: string(dec)}, nil
}

func (p *sfParser) boolean() (sfValue, error) {
	p.i++ // "?"
	switch p.peek() {
	case '0':
		p.i++
		return sfValue{kind: sfBoolean}, nil
	case '1':
		p.i++
		return sfValue{kind: sfBoolean, b: true}, nil
	}
	return sfValue{}, errSF
}

func (p *sfParser) displayString() (sfValue, error) {
	if !strings.HasPrefix(p.s[p.i:], `%"`) {
		return sfValue{}, errSF
	}
	p.i += 2
	var b []byte
	for !p.eof() {
		c := p.s[p.i]
		p.i++
		switch {
		case c < 0x20 || c > 0x7e:
			return sfValue{}, errSF
		case c == '%':
			if p.i+2 > len(p.s) {
				return sfValue{}, errSF
			}
			hi, ok1 := lowerHex(p.s[p.i])
			lo, ok2 := lowerHex(p.s[p.i+1])
			if !ok1 || !ok2 {
				return sfValue{}, errSF
			}
			b = append(b, hi<<4|lo)
			p.i += 2
		case c == '"':
			if !utf8.Valid(b) {
				return sfValue{}, errSF
			}
			return sfValue{kind: sfDisplayString, s: string(b)}, nil
		default:
			b = append(b, c)
		}
	}
	return sfValue{}, errSF
}

func lowerHex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
