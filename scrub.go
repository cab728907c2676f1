// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"encoding/base64"
	"errors"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.opentelemetry.io/collector/config/confighttp"
)

// redactedText replaces a credential in every text the exporter builds from
// what a backend or the network said.
const redactedText = "[REDACTED]"

// minSecretLen is the shortest value scrubbed: shorter ones ("1", "on",
// "gzip") would blank out ordinary words and tell nothing to a reader.
const minSecretLen = 4

// maxLearned bounds the credential values learned from requests: an auth
// extension that rotates its token leaves the last maxLearned distinct
// values known, not every value it ever sent.
const maxLearned = 16

// scrubber knows every credential the exporter sends and replaces it in
// texts that came from outside: a backend's error message, a partial
// success message, a Location, a transport error. It is safe for
// concurrent use.
//
// It knows the values of the configured headers, the user info and query
// values of the endpoint (and of the proxy URL) from the config, and
// learns the Authorization and Proxy-Authorization values an auth
// extension sets from lastHop, which sees every request as it goes on the
// wire.
type scrubber struct {
	static []string // from the config

	mu       sync.RWMutex
	learned  []string  // header values, least recent first
	patterns []pattern // what scrub looks for (scrubmatch.go)
}

func newScrubber(cfg *confighttp.ClientConfig, endpoints ...string) *scrubber {
	var static []string
	for _, v := range cfg.Headers.Iter {
		static = append(static, headerSecrets(string(v))...)
	}
	for _, raw := range slices.Concat(endpoints, []string{cfg.Endpoint, cfg.ProxyURL}) {
		static = append(static, urlSecrets(raw)...)
	}
	s := &scrubber{static: static}
	s.rebuild()
	return s
}

// learn records header values sent on the wire (Authorization,
// Proxy-Authorization) of one request. Values already known cost a read
// lock; a new one is added, the request's other values become the most
// recent, and the least recent beyond maxLearned are forgotten. A value
// forgotten while still in use is learned again with the next request that
// carries it.
func (s *scrubber) learn(values ...string) {
	if s == nil {
		return
	}
	s.mu.RLock()
	known := true
	for _, v := range values {
		if v != "" && !slices.Contains(s.learned, v) {
			known = false
			break
		}
	}
	s.mu.RUnlock()
	if known {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, v := range values {
		if v == "" {
			continue
		}
		// Most recent last, this request's values included, so that
		// trimming never forgets a value the request being sent carries.
		if i := slices.Index(s.learned, v); i >= 0 {
			s.learned = slices.Delete(s.learned, i, i+1)
		}
		s.learned = append(s.learned, v)
	}
	if n := len(s.learned) - maxLearned; n > 0 {
		s.learned = slices.Delete(s.learned, 0, n)
	}
	s.rebuildLocked()
}

func (s *scrubber) rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rebuildLocked()
}

func (s *scrubber) rebuildLocked() {
	secrets := slices.Clone(s.static)
	for _, v := range s.learned {
		secrets = append(secrets, headerSecrets(v)...)
	}
	s.patterns = patternsFor(secrets)
}

// scrub replaces every known credential in text, in every form
// scrubmatch.go finds.
func (s *scrubber) scrub(text string) string {
	if s == nil || text == "" {
		return text
	}
	s.mu.RLock()
	patterns := s.patterns
	s.mu.RUnlock()
	return scrubText(text, patterns)
}

// scrubError returns err with its text scrubbed; errors.Is and errors.As
// still see err, and net.Error's Timeout still answers for it.
func (s *scrubber) scrubError(err error) error {
	if err == nil {
		return nil
	}
	return &scrubbedError{text: s.scrub(err.Error()), err: err}
}

type scrubbedError struct {
	text string
	err  error
}

func (e *scrubbedError) Error() string { return e.text }
func (e *scrubbedError) Unwrap() error { return e.err }

// Timeout and Temporary keep url.Error's answers, which ask its direct
// cause rather than the chain.
func (e *scrubbedError) Timeout() bool {
	var t interface{ Timeout() bool }
	return errors.As(e.err, &t) && t.Timeout()
}

func (e *scrubbedError) Temporary() bool {
	var t interface{ Temporary() bool }
	return errors.As(e.err, &t) && t.Temporary()
}

// ErrorType keeps otelhttp's error.type attribute naming the cause, not
// this wrapper.
func (e *scrubbedError) ErrorType() string {
	var et interface{ ErrorType() string }
	if errors.As(e.err, &et) {
		return et.ErrorType()
	}
	t := reflect.TypeOf(e.err)
	if t.PkgPath() != "" && t.Name() != "" {
		return t.PkgPath() + "." + t.Name()
	}
	return t.String()
}

// headerSecrets is a header value and, for "<scheme> <credentials>" (Bearer,
// Basic, Token, ApiKey…), the credentials alone; for Basic also the decoded
// "user:password" and the password.
func headerSecrets(v string) []string {
	v = strings.TrimSpace(v)
	out := []string{v}
	scheme, cred, ok := strings.Cut(v, " ")
	if !ok || !isToken(scheme) {
		return keepLong(out)
	}
	cred = strings.TrimSpace(cred)
	out = append(out, cred)
	if strings.EqualFold(scheme, "basic") {
		if dec, err := base64.StdEncoding.DecodeString(cred); err == nil && utf8.Valid(dec) {
			_, pass, _ := strings.Cut(string(dec), ":")
			out = append(out, string(dec), pass)
		}
	}
	return keepLong(out)
}

// urlSecrets is the user info and the query values of raw.
func urlSecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil || raw == "" {
		return nil
	}
	var out []string
	if u.User != nil {
		out = append(out, u.User.String(), u.User.Username())
		if pass, ok := u.User.Password(); ok {
			out = append(out, pass, u.User.Username()+":"+pass)
		}
	}
	if u.RawQuery != "" {
		out = append(out, u.RawQuery)
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
		for _, kv := range strings.FieldsFunc(u.RawQuery, func(r rune) bool { return r == '&' || r == ';' }) {
			if _, v, ok := strings.Cut(kv, "="); ok {
				out = append(out, v) // as written, escaped or not
			}
		}
	}
	return keepLong(out)
}

func keepLong(values []string) []string {
	return slices.DeleteFunc(values, func(v string) bool { return len(v) < minSecretLen })
}

// isTokenChar reports whether r may appear in an HTTP token (RFC 9110 tchar).
func isTokenChar(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// isToken reports whether s is an HTTP auth scheme name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !isTokenChar(r) {
			return false
		}
	}
	return true
}
