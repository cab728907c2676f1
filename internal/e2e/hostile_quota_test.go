// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demorun"
)

// hostileWindow is how long the exhausted-quota test offers load: 20 s in
// the README's test command, 60 s for the stored run (HOSTILE_WINDOW=60s).
func hostileWindow(t *testing.T) time.Duration {
	if v := os.Getenv("HOSTILE_WINDOW"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	return 20 * time.Second
}

// quotaDistrustBound is the longest a RateLimit header can hold a
// destination that accepts every request (the README's figure).
const quotaDistrustBound = 5 * time.Second

// TestHostileExhaustedQuotaOn200: a backend that accepts everything but
// says on every 200 that its quota is spent for a day ("default";r=0;t=86400,
// or the same in X-RateLimit-*). After the bound, delivery must be within
// 10 % of the same backend without the header; at SIGTERM no payload is
// lost (each waiting one gets its attempt).
func TestHostileExhaustedQuotaOn200(t *testing.T) {
	t.Parallel()
	window := hostileWindow(t)
	ctx, cancel := context.WithTimeout(context.Background(), window+3*time.Minute)
	defer cancel()
	forms := []struct {
		name    string
		headers map[string]string
	}{
		{"none", nil},
		{"RateLimit", map[string]string{"RateLimit": `"default";r=0;t=86400`, "RateLimit-Policy": `"default";q=100;w=86400`}},
		{"X-RateLimit", map[string]string{"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "86400"}},
	}
	delivered := make([]int, len(forms))
	parent := t // the figures keep the test's own name
	// The forms run as parallel subtests of a group, so that t.Fatal in the
	// harness stops only its own form; the group returns when all are done.
	t.Run("forms", func(t *testing.T) {
		for i, f := range forms {
			t.Run(f.name, func(t *testing.T) {
				t.Parallel()
				hostileExhaustedQuotaForm(ctx, t, parent, window, f.name, f.headers, &delivered[i])
			})
		}
	})
	if t.Failed() {
		return
	}
	for i := 1; i < len(forms); i++ {
		ratio := float64(delivered[i]) / float64(max(delivered[0], 1))
		figure(t, forms[i].name+"/delivery_ratio_to_none", ratio, "after the bound")
		if ratio < 0.9 || ratio > 1.1 {
			t.Errorf("%s: %d requests delivered after the %s bound, against %d without the header: not within 10 %%", forms[i].name, delivered[i], quotaDistrustBound, delivered[0])
		}
	}
}

// hostileExhaustedQuotaForm runs one form of TestHostileExhaustedQuotaOn200:
// the backend sends headers on every 200; delivered gets the requests
// accepted after the distrust bound. Figures go under parent's name.
func hostileExhaustedQuotaForm(ctx context.Context, t, parent *testing.T, window time.Duration, name string, headers map[string]string, delivered *int) {
	backend := newHostileBackend(t, func(w http.ResponseWriter, _ *http.Request, _ int) int {
		for k, v := range headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(http.StatusOK)
		return http.StatusOK
	})
	run := startHostile(ctx, t, backend.URL, "", "info")
	start := time.Now()
	load, err := demorun.Load{Batches: int(window / (100 * time.Millisecond)), SpansPerBatch: 10, Interval: 100 * time.Millisecond}.Send(ctx, run.receiver)
	if err != nil {
		t.Fatal(err)
	}
	end := start.Add(window)
	time.Sleep(time.Until(end))
	_, *delivered = backend.count(start.Add(quotaDistrustBound+time.Second), end)
	_, total := backend.count(start, time.Time{})
	took := run.stop()
	_, afterStop := backend.count(start, time.Time{})
	lost := regexp.MustCompile(`"payloads": (\d+)`).FindStringSubmatch(lostLine(run.log()))
	figure(parent, name+"/delivered_after_bound", float64(*delivered), "requests")
	figure(parent, name+"/delivered_in_window", float64(total), fmt.Sprintf("requests of %d offered", load.Batches))
	figure(parent, name+"/attempts_at_shutdown", float64(afterStop-total), "requests")
	figure(parent, name+"/shutdown_seconds", took.Seconds(), "s")
	if lost != nil {
		n, _ := strconv.Atoi(lost[1])
		figure(parent, name+"/lost_at_shutdown", float64(n), "payloads")
		t.Errorf("%s: payloads lost at shutdown: %s", name, lostLine(run.log()))
	}
	if afterStop != load.Batches {
		t.Errorf("%s: the backend accepted %d of %d requests offered by the end of the shutdown", name, afterStop, load.Batches)
	}
}

func lostLine(log string) string {
	for line := range strings.SplitSeq(log, "\n") {
		if strings.Contains(line, "were lost") {
			return line
		}
	}
	return ""
}
