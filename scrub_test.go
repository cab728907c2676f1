// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component"
	"go.opentelemetry.io/collector/component/componentstatus"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/config/configauth"
	"go.opentelemetry.io/collector/config/configopaque"
	"go.opentelemetry.io/collector/config/configoptional"
	"go.opentelemetry.io/collector/extension/extensionauth"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// echoBackend answers every request with the credentials it carried
// (headers, query string, decoded Basic credentials) echoed back in the
// form the test selects: the worst a backend can do with them.
type echoBackend struct {
	*httptest.Server
	mode atomic.Value // string
	mu   sync.Mutex
	auth []string // Authorization values received
}

// echoForms are the response forms, in the order the test sends them, and
// whether the export fails.
var echoForms = []struct {
	mode  string
	fails bool
}{
	{"text 400", true},
	{"json 403", true},
	{"text 503", true},
	{"protobuf status 400", true},
	{"text 401", true},
	{"partial success", false},
	{"malformed json 200", false},
	{"redirect", true},
	{"malformed response", true},
}

func newEchoBackend(t *testing.T) *echoBackend {
	t.Helper()
	b := &echoBackend{}
	b.Server = httptest.NewServer(http.HandlerFunc(b.serve))
	t.Cleanup(b.Close)
	return b
}

func echoOf(r *http.Request) string {
	var s strings.Builder
	fmt.Fprintf(&s, "you sent Authorization: %s; Proxy-Authorization: %s; X-Api-Key: %s; query: %s",
		r.Header.Get("Authorization"), r.Header.Get("Proxy-Authorization"), r.Header.Get("X-Api-Key"), r.URL.RawQuery)
	for _, name := range []string{"Authorization", "Proxy-Authorization"} {
		if scheme, tok, ok := strings.Cut(r.Header.Get(name), " "); ok && strings.EqualFold(scheme, "basic") {
			if dec, err := base64.StdEncoding.DecodeString(tok); err == nil {
				fmt.Fprintf(&s, "; %s decodes to %s", name, dec)
			}
		}
	}
	for _, vs := range r.URL.Query() {
		for _, v := range vs {
			fmt.Fprintf(&s, "; query value %s", v)
		}
	}
	return s.String()
}

func (b *echoBackend) serve(w http.ResponseWriter, r *http.Request) {
	b.mu.Lock()
	b.auth = append(b.auth, r.Header.Get("Authorization"))
	b.mu.Unlock()
	echo := echoOf(r)
	write := func(code int, contentType string, body []byte) {
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(code)
		_, _ = w.Write(body) //nolint:gosec // G705: a test backend that echoes request headers on purpose
	}
	switch b.mode.Load().(string) {
	case "text 400":
		write(400, "text/plain", []byte(echo))
	case "json 403":
		body, _ := json.Marshal(map[string]string{"message": echo})
		write(403, "application/json", body)
	case "text 503":
		write(503, "text/plain; charset=utf-8", []byte(echo))
	case "protobuf status 400":
		body, _ := proto.Marshal(&status.Status{Code: 3, Message: echo})
		write(400, "application/x-protobuf", body)
	case "text 401":
		write(401, "text/plain", []byte("invalid credentials: "+echo))
	case "partial success":
		resp := ptraceotlp.NewExportResponse()
		resp.PartialSuccess().SetRejectedSpans(1)
		resp.PartialSuccess().SetErrorMessage(echo)
		body, _ := resp.MarshalProto()
		write(200, "application/x-protobuf", body)
	case "malformed json 200":
		write(200, "application/json", []byte(`{"partialSuccess": `+r.Header.Get("Authorization")+`}`))
	case "redirect":
		auth := r.Header.Get("Authorization")
		_, token, _ := strings.Cut(auth, " ")
		apiKey := r.Header.Get("X-Api-Key") + r.URL.Query().Get("apikey")
		w.Header().Set("Location", "https://"+url.UserPassword("locuser", token).String()+"@elsewhere.example/"+
			url.PathEscape(auth)+"/"+token+"/"+url.PathEscape(apiKey)+"?apikey="+url.QueryEscape(apiKey)+"#"+token)
		w.WriteHeader(http.StatusTemporaryRedirect)
	case "malformed response":
		_, _ = io.Copy(io.Discard, r.Body) // the client is done writing before it reads
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			panic(err)
		}
		defer conn.Close()
		_, _ = buf.WriteString("ECHO:" + strings.ReplaceAll(echo, " ", "_") + "\r\n\r\n")
		_ = buf.Flush()
		_, _ = bufio.NewReader(conn).Peek(1) // wait for the client to give the connection up
	}
}

// rotatingAuth is an auth extension that sends a new bearer token on every
// request (as one that refreshes tokens would, only faster) and a Basic
// Proxy-Authorization.
type rotatingAuth struct {
	component.StartFunc
	component.ShutdownFunc
	proxy  string
	mu     sync.Mutex
	issued []string
}

var _ extensionauth.HTTPClient = (*rotatingAuth)(nil)

func (a *rotatingAuth) RoundTripper(next http.RoundTripper) (http.RoundTripper, error) {
	return roundTripFunc(func(r *http.Request) (*http.Response, error) {
		a.mu.Lock()
		token := fmt.Sprintf("rot%03d.eyJzdWIiOiJjb2xsZWN0b3IifQ.c2lnbmF0dXJl", len(a.issued))
		a.issued = append(a.issued, token)
		a.mu.Unlock()
		r = r.Clone(r.Context())
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Proxy-Authorization", a.proxy)
		return next.RoundTrip(r)
	}), nil
}

func (a *rotatingAuth) tokens() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.issued...)
}

// errHost offers extensions and records the errors of the status events
// reported to it (what a health check extension would show).
type errHost struct {
	extHost
	mu   sync.Mutex
	errs []string
}

func (h *errHost) Report(ev *componentstatus.Event) {
	if ev.Err() == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.errs = append(h.errs, ev.Err().Error())
}

func (h *errHost) reported() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.errs...)
}

// spanText is everything a span holds: name, attributes, status, events
// and their attributes. skip names attributes left out.
func spanText(s sdktrace.ReadOnlySpan, skip ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s | status %s %s", s.Name(), s.Status().Code, s.Status().Description)
	for _, kv := range s.Attributes() {
		if !contains(skip, string(kv.Key)) {
			fmt.Fprintf(&b, " | %s=%s", kv.Key, kv.Value.String())
		}
	}
	for _, ev := range s.Events() {
		fmt.Fprintf(&b, " | event %s", ev.Name)
		for _, kv := range ev.Attributes {
			fmt.Fprintf(&b, " %s=%s", kv.Key, kv.Value.String())
		}
	}
	return b.String()
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestNoCredentialInAnyOutput(t *testing.T) {
	const (
		headerToken = "hdr.eyJ0ZW5hbnQiOiJhY21lIn0.SECRET"
		apiKey      = "ak_live_5f4dcc3b5aa765d61d8327deb882cf99"
		proxyPass   = "pr0xy-pa55/word+with=base64ish"
		urlUser     = "urltenant"
		urlPass     = "url-pa55word"
		querySecret = "qs/secret+value=="
	)
	proxyBasic := base64.StdEncoding.EncodeToString([]byte("proxyuser:" + proxyPass))
	urlBasic := base64.StdEncoding.EncodeToString([]byte(urlUser + ":" + urlPass))

	for _, source := range []struct {
		name      string
		configure func(cfg *Config, backendURL *url.URL)
		auth      *rotatingAuth
		secrets   []string
		// otelhttp's client span records url.full with the query string
		// (see TestConfighttpClientSpanKeepsTheQueryString).
		skipSpanAttrs []string
	}{
		{
			name: "headers",
			configure: func(cfg *Config, _ *url.URL) {
				cfg.ClientConfig.Headers.Set("Authorization", "Bearer "+headerToken)
				cfg.ClientConfig.Headers.Set("X-Api-Key", apiKey)
			},
			secrets: []string{headerToken, apiKey},
		},
		{
			name:    "auth extension",
			auth:    &rotatingAuth{proxy: "Basic " + proxyBasic},
			secrets: []string{proxyBasic, proxyPass},
		},
		{
			name: "endpoint URL",
			configure: func(cfg *Config, u *url.URL) {
				cfg.ClientConfig.Endpoint = "http://" + urlUser + ":" + urlPass + "@" + u.Host + "/?apikey=" + url.QueryEscape(querySecret)
			},
			secrets:       []string{urlUser, urlPass, urlBasic, querySecret, url.QueryEscape(querySecret)},
			skipSpanAttrs: []string{"url.full"},
		},
	} {
		t.Run(source.name, func(t *testing.T) {
			srv := newEchoBackend(t)
			u, err := url.Parse(srv.URL)
			require.NoError(t, err)
			cfg := testConfig(srv.URL)
			cfg.OnUnauthorized = UnauthorizedDrop
			// A 503 or a broken response to every request is an outage:
			// bound it, so that the export fails and its error is checked.
			cfg.Outage.MaxDuration = time.Second
			ext := map[component.ID]component.Component{}
			if source.configure != nil {
				source.configure(cfg, u)
			}
			if source.auth != nil {
				id := component.MustNewID("rotating_auth")
				ext[id] = source.auth
				cfg.ClientConfig.Auth = configoptional.Some(configauth.Config{AuthenticatorID: id})
			}
			if source.name == "endpoint URL" {
				require.Error(t, cfg.Validate(), "Validate refuses credentials in the endpoint; the outputs must not leak them either")
			} else {
				require.NoError(t, cfg.Validate())
			}
			host := &errHost{extHost: extHost{Host: componenttest.NewNopHost(), ext: ext}}
			h := startTracesOnHost(t, cfg, retrytest.NewAutoClock(start), host)

			var errs []error
			for _, form := range echoForms {
				srv.mode.Store(form.mode)
				err := h.exp.ConsumeTraces(context.Background(), spans("a", 2))
				if !form.fails {
					require.NoError(t, err, form.mode)
					continue
				}
				require.Error(t, err, form.mode)
				errs = append(errs, err)
				assert.Contains(t, err.Error(), "[REDACTED]", "%s: the echo reached the error, scrubbed: %v", form.mode, err)
			}

			secrets := append([]string(nil), source.secrets...)
			if source.auth != nil {
				secrets = append(secrets, source.auth.tokens()...)
			}
			srv.mu.Lock()
			for _, auth := range srv.auth {
				require.NotEmpty(t, auth, "every request carried credentials")
				secrets = append(secrets, auth)
			}
			srv.mu.Unlock()

			leaks := func(where, text string) {
				t.Helper()
				for _, s := range secrets {
					assert.NotContains(t, text, s, "%s leaks %q", where, s)
				}
			}
			for i, err := range errs {
				leaks(fmt.Sprintf("error %d", i), err.Error())
				leaks(fmt.Sprintf("error %d (%%+v)", i), fmt.Sprintf("%+v", err))
			}
			all := h.logs.All()
			require.NotEmpty(t, h.logs.FilterMessageSnippet("Exporting failed").All(), "exporterhelper's own error lines are checked too")
			require.NotEmpty(t, h.logs.FilterMessage("Retry decision").All())
			require.NotEmpty(t, h.logs.FilterMessageSnippet("Partial success").All())
			require.NotEmpty(t, h.logs.FilterMessageSnippet("Dropped a batch").All())
			require.NotEmpty(t, h.logs.FilterMessageSnippet("Could not read the export response").All())
			for i, e := range all {
				leaks(fmt.Sprintf("log entry %d (%q)", i, e.Message), entryText(e))
			}
			spans := h.tel.SpanRecorder.Ended()
			require.NotEmpty(t, spans)
			for i, s := range spans {
				leaks(fmt.Sprintf("span %d (%s)", i, s.Name()), spanText(s, source.skipSpanAttrs...))
			}
			reported := host.reported()
			require.NotEmpty(t, reported, "the 503s and network errors reported a recoverable error")
			for i, r := range reported {
				leaks(fmt.Sprintf("status event %d", i), r)
			}
		})
	}
}

func TestScrubberKnowsEveryFormOfTheConfiguredCredentials(t *testing.T) {
	cfg := testConfig("http://tenant:pa55%2Fword@localhost:4318/?apikey=k3y%2Fvalue&short=abc")
	cfg.ClientConfig.Headers.Set("Authorization", "Bearer t0ken/with+slash")
	cfg.ClientConfig.Headers.Set("X-Api-Key", "xyz") // too short to scrub
	cfg.ClientConfig.Headers.Set("Proxy-Authorization", configopaque.String("Basic "+base64.StdEncoding.EncodeToString([]byte("proxy:pr0xypass"))))
	cfg.ClientConfig.ProxyURL = "http://puser:proxyurlpass@proxy:3128"
	s := newScrubber(&cfg.ClientConfig, "http://other:traces-pass@localhost/v1/traces?sig=traces-sig")

	for in, want := range map[string]string{
		"Authorization: Bearer t0ken/with+slash": "Authorization: [REDACTED]",
		"token t0ken/with+slash alone":           "token [REDACTED] alone",
		"query-escaped t0ken%2Fwith%2Bslash":     "query-escaped [REDACTED]",
		`json-escaped t0ken\/with+slash`:         "json-escaped [REDACTED]",
		"key k3y/value, escaped k3y%2Fvalue":     "key [REDACTED], escaped [REDACTED]",
		"user tenant, password pa55/word":        "user [REDACTED], password [REDACTED]",
		"basic proxy:pr0xypass or pr0xypass":     "basic [REDACTED] or [REDACTED]",
		"proxy URL password proxyurlpass":        "proxy URL password [REDACTED]",
		"signal endpoint traces-pass traces-sig": "signal endpoint [REDACTED] [REDACTED]",
		"short values stay: xyz abc":             "short values stay: xyz abc",
	} {
		assert.Equal(t, want, s.scrub(in), "scrub(%q)", in)
	}
}

func TestScrubberKeepsTheLastLearnedValuesOnly(t *testing.T) {
	s := newScrubber(&testConfig("http://localhost:4318").ClientConfig)
	// Tokens that share no 8-character prefix or suffix: a long prefix of
	// a known one would be scrubbed as such.
	token := func(i int) string { return fmt.Sprintf("%x", sha256.Sum256([]byte(strconv.Itoa(i))))[:20] }
	for i := range maxLearned + 1 {
		s.learn("Bearer "+token(i), "")
	}
	assert.Equal(t, token(0), s.scrub(token(0)), "the oldest value is forgotten")
	for i := 1; i <= maxLearned; i++ {
		assert.Equal(t, "[REDACTED]", s.scrub(token(i)), "value %d is still known", i)
	}
	s.learn("Bearer " + token(0))
	assert.Equal(t, "[REDACTED]", s.scrub(token(0)), "a value seen again is learned again")

	// A constant Proxy-Authorization beside a rotating Authorization is
	// never forgotten: each request makes its values the most recent.
	for i := range 3 * maxLearned {
		s.learn("Bearer "+token(100+i), "Basic cHJveHk6cHJveHlwYXNz")
		assert.Equal(t, "[REDACTED] [REDACTED]", s.scrub(token(100+i)+" cHJveHk6cHJveHlwYXNz"), "request %d", i)
	}
}

func TestScrubberIsSafeForConcurrentUse(t *testing.T) {
	s := newScrubber(&testConfig("http://localhost:4318").ClientConfig)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				v := fmt.Sprintf("Bearer goroutine-%d-token-%d", g, i%(maxLearned/4)) // 16 distinct values: none forgotten
				s.learn(v)
				assert.NotContains(t, s.scrub("sent "+v), v[len("Bearer "):])
			}
		})
	}
	wg.Wait()
}

func TestScrubbedErrorKeepsItsCause(t *testing.T) {
	s := newScrubber(&testConfig("http://localhost:4318").ClientConfig)
	s.learn("Bearer dns-secret-token")
	cause := &net.DNSError{Err: "no answer for dns-secret-token", Name: "backend", IsTimeout: true}
	err := &url.Error{Op: "Post", URL: "http://backend/v1/traces", Err: s.scrubError(cause)}

	assert.NotContains(t, err.Error(), "dns-secret-token")
	assert.True(t, err.Timeout(), "url.Error asks its direct cause")
	var dnsErr *net.DNSError
	assert.ErrorAs(t, err, &dnsErr)
	action, reason := retry.ClassifyError(err)
	assert.Equal(t, retry.ActionRetry, action)
	assert.Equal(t, retry.ReasonTimeout, reason)
	assert.Equal(t, "*net.DNSError", s.scrubError(cause).(*scrubbedError).ErrorType())
}

func TestBackendMessageIsScrubbedBeforeItIsCut(t *testing.T) {
	const token = "long-secret-token-0123456789"
	filler := strings.Repeat("f", 240) // filler + token is longer than the cut, filler + [REDACTED] is not
	srv := newBackend(t, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(400)
		_, _ = io.WriteString(w, filler+token)
	})
	cfg := testConfig(srv.URL)
	cfg.ClientConfig.Headers.Set("Authorization", configopaque.String("Bearer "+token))
	h := startTraces(t, cfg, retrytest.NewAutoClock(start))
	err := h.exp.ConsumeTraces(context.Background(), spans("a", 1))
	require.Error(t, err)
	assert.Contains(t, err.Error(), filler+"[REDACTED]")
	assert.NotContains(t, err.Error(), token[:6], "no part of the token survives at the cut")
}

func TestConfighttpClientSpanKeepsTheQueryString(t *testing.T) {
	srv := newBackend(t)
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	cfg := testConfig("http://user:url-pa55word@" + u.Host + "/?apikey=query-secret")
	require.Error(t, cfg.Validate(), "Validate refuses credentials in the endpoint, for this very reason")
	h := startTracesUnvalidated(t, cfg, retrytest.NewAutoClock(start))
	require.NoError(t, h.exp.ConsumeTraces(context.Background(), spans("a", 1)))

	var full []string
	for _, s := range h.tel.SpanRecorder.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == "url.full" {
				full = append(full, kv.Value.AsString())
			}
		}
	}
	// What the README says of confighttp's own client span (otelhttp):
	// user info stripped, query string kept.
	assert.Equal(t, []string{"http://" + u.Host + "/v1/traces?apikey=query-secret"}, full)
}
