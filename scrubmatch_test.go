// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/confighttp"
	"go.opentelemetry.io/collector/config/configopaque"

	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// The credential of these tests: mixed case, with characters that escape.
const scrubKey = "Zx9Qv/B7tLm+4KpR2sWd8NcY6h"

func escapeEach(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

// TestScrubberCatchesWhatBackendsDoToSecrets: a configured key, echoed by
// a backend in each form below inside a message, never survives the
// scrubber; nor does any prefix or suffix of minAffix characters or more.
// Shorter pieces and other text do.
func TestScrubberCatchesWhatBackendsDoToSecrets(t *testing.T) {
	var cfg confighttp.ClientConfig
	cfg.Headers.Set("X-Api-Key", configopaque.String(scrubKey))
	cfg.Headers.Set("Authorization", configopaque.String("Basic "+base64.StdEncoding.EncodeToString([]byte("admin:"+scrubKey))))
	s := newScrubber(&cfg)
	k := scrubKey
	for _, tc := range []struct{ name, form string }{
		{"as written", k},
		{"lower case", strings.ToLower(k)},
		{"upper case", strings.ToUpper(k)},
		{"case swapped", strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z':
				return r - 32
			case r >= 'A' && r <= 'Z':
				return r + 32
			}
			return r
		}, k)},
		{"prefix of 8", k[:8]},
		{"prefix of 12", k[:12]},
		{"suffix of 8", k[len(k)-8:]},
		{"suffix of 12, upper case", strings.ToUpper(k[len(k)-12:])},
		{"base64", base64.StdEncoding.EncodeToString([]byte(k))},
		{"base64 URL, no padding", base64.RawURLEncoding.EncodeToString([]byte(k))},
		{"base64 of user:key", base64.StdEncoding.EncodeToString([]byte("someone:" + k))},
		{"base64 of the key after one byte", base64.StdEncoding.EncodeToString([]byte("x" + k))},
		{"base64 of the key after two bytes", base64.StdEncoding.EncodeToString([]byte("xy" + k))},
		{`every character \u-escaped`, escapeEach(k, `\u%04x`)},
		{`every character \U-escaped, upper hex`, escapeEach(k, `\U%04X`)},
		{`some characters \u-escaped`, k[:5] + `\u0076` + k[6:]},
		{`\x-escaped`, escapeEach(k, `\x%02x`)},
		{"JSON with an escaped slash", strings.ReplaceAll(k, "/", `\/`)},
		{"URL query-escaped", url.QueryEscape(k)},
		{"every character percent-encoded", escapeEach(k, "%%%02X")},
		{"HTML decimal entities", escapeEach(k, "&#%d;")},
		{"HTML hex entities", escapeEach(k, "&#x%x;")},
		{"HTML named entity", strings.ReplaceAll(k, "+", "&plus;")},
		{"split by markup", k[:10] + "<b></b>" + k[10:]},
		{"split by a span", "<span>" + k[:7] + "</span><span>" + k[7:] + "</span>"},
		{"split by a zero-width space", k[:9] + "\u200b" + k[9:]},
		{"split by a soft hyphen", k[:4] + "\u00ad" + k[4:]},
		{"the decoded Basic credentials, upper case", strings.ToUpper("admin:" + k)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			text := "invalid key (" + tc.form + ") for tenant 42"
			got := s.scrub(text)
			assert.Contains(t, got, redactedText)
			assert.True(t, strings.HasPrefix(got, "invalid key ("), got)
			assert.True(t, strings.HasSuffix(got, ") for tenant 42"), got)
			assert.NotContains(t, got, tc.form)
			assertNoPieceOf(t, got, k)
		})
	}
	for _, kept := range []string{
		k[:minAffix-1], k[len(k)-minAffix+1:], "invalid key for tenant 42", "Basic", "<b>bold</b> &amp; 100% done",
	} {
		assert.Equal(t, "text: "+kept, s.scrub("text: "+kept), "not a credential")
	}
}

// assertNoPieceOf fails when text, as written or decoded, in any case,
// holds secret or a prefix or suffix of it of minAffix characters or more.
func assertNoPieceOf(t *testing.T, text, secret string) {
	t.Helper()
	low := strings.ToLower(secret)
	for _, r := range readings {
		n := string(normalize(text, r).norm)
		// A longer prefix or suffix holds these two.
		for _, piece := range []string{low[:minAffix], low[len(low)-minAffix:]} {
			if strings.Contains(n, piece) {
				t.Errorf("%q holds %q of the secret (reading %d)", text, piece, r)
			}
		}
		if strings.Contains(n, low) {
			t.Errorf("%q holds the secret (reading %d)", text, r)
		}
	}
}

// FuzzScrubber: whatever text surrounds it and whatever of the forms
// above a credential takes, the scrubbed text holds neither it nor a
// prefix or suffix of minAffix characters or more, as written or decoded;
// a text without the credential's characters comes out unchanged. Its
// seeds run in every `go test`; to fuzz:
//
//	go test -run XXX -fuzz FuzzScrubber -fuzztime 60s .
func FuzzScrubber(f *testing.F) {
	for i, seed := range []string{"", "invalid key: ", "<p>", `{"message":"`, "%4", `\u00`, "&#", "<b", "a\u200b"} {
		f.Add(seed, "Zx9QvB7tLm4KpR2sWd8NcY6h", ") end", uint8(i))
	}
	f.Add("<b ", "abcdefgh", ">", uint8(3))
	f.Fuzz(func(t *testing.T, before, secret, after string, form uint8) {
		// A credential of letters and digits, as API keys are, without
		// the replacement's own letters in a row.
		secret = strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
				return r
			}
			return -1
		}, secret)
		if len(secret) < minAffix || len(secret) > 64 || strings.Contains(strings.ToLower(secret), "redacted") {
			return
		}
		if len(before) > 256 || len(after) > 256 {
			return
		}
		var cfg confighttp.ClientConfig
		cfg.Headers.Set("X-Api-Key", configopaque.String(secret))
		s := newScrubber(&cfg)
		forms := []string{
			secret, strings.ToUpper(secret), strings.ToLower(secret), secret[:minAffix], secret[len(secret)-minAffix:],
			base64.StdEncoding.EncodeToString([]byte(secret)), escapeEach(secret, `\u%04x`), escapeEach(secret, "%%%02x"),
			escapeEach(secret, "&#%d;"), secret[:len(secret)/2] + "<i></i>" + secret[len(secret)/2:],
		}
		text := before + forms[int(form)%len(forms)] + after
		got := s.scrub(text)
		if !strings.Contains(got, redactedText) {
			t.Fatalf("nothing scrubbed in %q", text)
		}
		assertNoPieceOf(t, got, secret)
	})
}

// TestNoTransformedCredentialInAnyOutput: a backend that answers 400 with
// the configured key in each transformed form of the table above: no form
// reaches the returned errors, the log, the spans or the status events.
func TestNoTransformedCredentialInAnyOutput(t *testing.T) {
	forms := []string{
		strings.ToLower(scrubKey), strings.ToUpper(scrubKey), scrubKey[:12], scrubKey[len(scrubKey)-12:],
		base64.StdEncoding.EncodeToString([]byte(scrubKey)), escapeEach(scrubKey, `\u%04x`),
		escapeEach(scrubKey, "%%%02X"), escapeEach(scrubKey, "&#%d;"), scrubKey[:10] + "<b></b>" + scrubKey[10:],
	}
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, "invalid key %s", forms[int(n.Add(1)-1)%len(forms)])
	}))
	t.Cleanup(srv.Close)
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Headers.Set("X-Api-Key", configopaque.String(scrubKey))
	host := &errHost{extHost: extHost{Host: componenttest.NewNopHost()}}
	h := startTracesOnHost(t, cfg, retrytest.NewAutoClock(start), host)

	var texts []string
	for range forms {
		err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
		require.Error(t, err)
		texts = append(texts, err.Error(), fmt.Sprintf("%+v", err))
	}
	require.NotEmpty(t, h.logs.FilterMessageSnippet("Dropped a batch").All())
	for _, e := range h.logs.All() {
		texts = append(texts, entryText(e))
	}
	for _, s := range h.tel.SpanRecorder.Ended() {
		texts = append(texts, spanText(s))
	}
	texts = append(texts, host.reported()...)
	for _, text := range texts {
		assertNoPieceOf(t, text, scrubKey)
	}
}
