// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

func randomSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// leaks reports where text holds secret, or any 16-character piece of it
// (a redaction that keeps a short tail is fine; one that keeps most of the
// secret is not).
func leaks(text, secret string) []string {
	const piece = 16
	var found []string
	for i := 0; i+piece <= len(secret); i++ {
		if j := strings.Index(text, secret[i:i+piece]); j >= 0 {
			start, end := max(j-120, 0), min(j+piece+40, len(text))
			found = append(found, text[start:end])
			break
		}
	}
	return found
}

// TestSecretsNeverLogged: the exporter sends an Authorization bearer token
// and an X-Api-Key from its headers config; the backend answers 400
// (text/plain), 403 (JSON) and 503 (text) with bodies that echo every
// request header. Neither secret may appear anywhere in the collector's
// log (debug level, stdout and stderr) nor on its metrics endpoint.
func TestSecretsNeverLogged(t *testing.T) {
	t.Parallel()
	const echoes = 6 // two of each form
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bearer, apiKey := randomSecret(t), randomSecret(t)
	h := newHarness(t, demobackend.Config{Mode: demobackend.ModeEcho, FailRequests: echoes}, scenario{
		Headers:  map[string]string{"Authorization": "Bearer " + bearer, "X-Api-Key": apiKey},
		LogLevel: "debug",
	})
	h.start(ctx)
	load, err := demorun.Load{Batches: 8, SpansPerBatch: 3, Interval: 400 * time.Millisecond}.Send(ctx, h.receiverURL())
	if err != nil {
		t.Fatal(err)
	}
	recs, ok := h.waitRecords(ctx, 60*time.Second, func(r []demobackend.Record) bool {
		return len(r) > echoes && countStatus(r, http.StatusOK) > 0
	})
	if !ok {
		t.Fatalf("the backend did not get past its %d echo answers: %s", echoes, statusLine(recs))
	}
	// Every answer the backend gave has reached the exporter (and so its log).
	m, ok := h.scrapeUntil(ctx, 30*time.Second, func(m demorun.Metrics) bool {
		return int(m.Sum(prefix+"attempts", ident)) >= len(h.Backend.Records())
	})
	if !ok {
		t.Errorf("attempts = %v, backend saw %d requests", m.Sum(prefix+"attempts", ident), len(h.Backend.Records()))
	}
	code, metricsText, err := demorun.HTTPGet(ctx, h.metricsURL())
	if err != nil || code != http.StatusOK {
		t.Fatalf("metrics endpoint: %d %v", code, err)
	}
	h.stop()
	recs = h.Backend.Records()
	logText := h.logText()

	// The secrets did reach the backend, which echoed them.
	echoed := 0
	for _, r := range recs[:echoes] {
		if r.Header.Get("Authorization") != "Bearer "+bearer || r.Header.Get("X-Api-Key") != apiKey {
			t.Fatalf("request %d did not carry the configured headers: %v", r.Seq, r.Header)
		}
		if r.Status != http.StatusOK {
			echoed++
		}
	}
	t.Logf("%d batches sent; backend: %s; log %d bytes; metrics %d bytes", load.Batches, statusLine(recs), len(logText), len(metricsText))
	if echoed != echoes {
		t.Fatalf("%d echo answers, want %d", echoed, echoes)
	}
	// The exporter did log about the echoing answers, so their absence
	// below means something.
	for _, status := range []string{"400", "403", "503"} {
		if !strings.Contains(logText, status) {
			t.Errorf("the collector log never mentions a %s: the echo answers were not logged at all", status)
		}
	}

	for name, secret := range map[string]string{"Authorization bearer token": bearer, "X-Api-Key": apiKey} {
		for _, where := range leaks(logText, secret) {
			t.Errorf("the %s appears in the collector log: …%s…", name, where)
		}
		for _, where := range leaks(string(metricsText), secret) {
			t.Errorf("the %s appears on the metrics endpoint: …%s…", name, where)
		}
	}
}
