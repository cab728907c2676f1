// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"encoding/base64"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// The credential of the scrubber tests: mixed case, so that a change of
// case is a different text.
const hostileKey = "Zx9QvB7tLm4KpR2sWd8NcY6h"

// transformed is what a backend may do to a credential it echoes.
func transformed(secret string) map[string]string {
	var u strings.Builder
	for _, r := range secret {
		fmt.Fprintf(&u, `\u%04x`, r)
	}
	return map[string]string{
		"exact":      secret,
		"lower":      strings.ToLower(secret),
		"upper":      strings.ToUpper(secret),
		"prefix12":   secret[:12],
		"suffix12":   secret[len(secret)-12:],
		"base64":     base64.StdEncoding.EncodeToString([]byte(secret)),
		"u-escaped":  u.String(),
		"html-split": secret[:10] + "<b></b>" + secret[10:],
	}
}

// TestHostileScrubTransforms: a 400 whose body repeats the configured key
// in each form a backend may give it. No form may reach the collector's
// log (debug level) or its metrics.
func TestHostileScrubTransforms(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	forms := transformed(hostileKey)
	names := slices.Sorted(maps.Keys(forms))
	// One form per answer, so that no message is cut before its form.
	backend := newHostileBackend(t, func(w http.ResponseWriter, _ *http.Request, n int) int {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = fmt.Fprintf(w, "invalid API key %s (%s)", forms[names[n%len(names)]], names[n%len(names)])
		return http.StatusBadRequest
	})
	run := startHostile(ctx, t, backend.URL, "    headers: {\"X-Api-Key\": \""+hostileKey+"\"}", "debug")
	start := time.Now()
	if _, err := (demorun.Load{Batches: 2 * len(forms), SpansPerBatch: 1, Interval: 50 * time.Millisecond}).Send(ctx, run.receiver); err != nil {
		t.Fatal(err)
	}
	for time.Since(start) < 30*time.Second {
		if n, _ := backend.count(start, time.Time{}); n >= 2*len(forms) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, metrics, _ := demorun.HTTPGet(ctx, run.metricsURL)
	run.stop()
	text := run.log() + string(metrics)
	total := 0
	for name, v := range forms {
		// The matching is on the text as the log holds it: JSON-quoted
		// by zap, so a backslash is doubled.
		n := strings.Count(text, v) + strings.Count(text, strings.ReplaceAll(v, `\`, `\\`))
		if name == "exact" || name == "prefix12" || name == "suffix12" {
			n = strings.Count(text, v)
		}
		if n > 0 {
			t.Errorf("the %s form of the key appears %d times in the log or metrics", name, n)
		}
		total += n
	}
	figure(t, "occurrences_of_any_form", float64(total), "occurrences")
}

// TestHostileValidateLeaks: validate's errors never repeat a credential,
// also for endpoints that do not parse; credential-like query names are
// refused.
func TestHostileValidateLeaks(t *testing.T) {
	t.Parallel()
	const secret = "S3cretPassw0rd"
	leaked := 0
	for _, endpoint := range []string{
		"htps://admin:" + secret + "@example.com:4318",
		"http://admin:" + secret + "@[::1",
		"http://example.com/%zz?api_key=" + secret,
	} {
		out, code := runValidate(t, "    traces_endpoint: \""+endpoint+"\"")
		if code == 0 {
			t.Errorf("validate accepted %s", strings.ReplaceAll(endpoint, secret, "…"))
		}
		if strings.Contains(out, secret) {
			leaked++
			t.Errorf("validate repeated the password for an endpoint that does not parse:\n%s", out)
		}
	}
	figure(t, "outputs_with_the_password", float64(leaked), "of 3")
	accepted := 0
	for _, name := range []string{"jwt", "credential", "sessionid", "license", "pass", "private", "dsn", "ingestkey", "code"} {
		out, code := runValidate(t, "    traces_endpoint: \"http://example.com/v1/traces?"+name+"="+secret+"\"")
		if code == 0 {
			accepted++
			t.Errorf("validate accepted the credential-like query parameter %s", name)
		} else if !strings.Contains(out, name) {
			t.Errorf("validate refused ?%s= without naming it:\n%s", name, out)
		}
	}
	figure(t, "credential_query_names_accepted", float64(accepted), "of 9")
}
