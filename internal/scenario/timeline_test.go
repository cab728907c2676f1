// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
)

// TestTimelineNamesEachRequestsTenant: a kept run's timeline.tsv has a row
// per request the backend answered, in milliseconds from the first, with
// when it was answered and its tenant (the fleet's X-Scope-OrgID), so that
// a fleet's run can be read collector by collector.
func TestTimelineNamesEachRequestsTenant(t *testing.T) {
	t0 := time.Date(2026, 12, 2, 20, 0, 0, 0, time.UTC)
	tenant := func(name string) http.Header {
		h := http.Header{}
		h.Set("X-Scope-OrgID", name)
		return h
	}
	dir := t.TempDir()
	writeTimeline(dir, []demobackend.Record{
		{Arrival: t0, Answered: t0.Add(1500 * time.Microsecond), Status: http.StatusOK, Items: 50, Key: "k1", Header: tenant("tenant-7")},
		{Arrival: t0.Add(250 * time.Millisecond), Status: http.StatusTooManyRequests, Items: 50, Key: "k2", Header: tenant("tenant-12")},
		{Arrival: t0.Add(300 * time.Millisecond), Answered: t0.Add(302 * time.Millisecond), Status: http.StatusOK, Items: 50, Key: "k3"},
	})
	b, err := os.ReadFile(filepath.Join(dir, "timeline.tsv"))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"ms\tstatus\titems\tretry_after\tkey\tanswered_ms\ttenant",
		"0\t200\t50\t\tk1\t1.500\ttenant-7",
		"250\t429\t50\t\tk2\t\ttenant-12",
		"300\t200\t50\t\tk3\t302.000\t",
	}, strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
}
