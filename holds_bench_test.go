// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// BenchmarkHoldStoreAtStart is what remembering holds costs a healthy start
// (nothing was held): opening the holds' storage client on file_storage and
// reading its one record, once per signal, before the queue's consumers
// start. No request waits for anything: a gate with no kept hold is open.
func BenchmarkHoldStoreAtStart(b *testing.B) {
	host, stop := startFileStorage(b, b.TempDir())
	defer stop()
	cfg := persistConfig("http://localhost:4318")
	ctx := context.Background()
	for b.Loop() {
		s, err := openHoldStore(ctx, host, cfg, persistExporterID, "traces", zap.NewNop(), retry.RealClock{})
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := s.restored("k"); ok {
			b.Fatal("a hold restored from an empty store")
		}
		if err := s.close(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHoldStorePaceWrite is what writing a changed pace costs: one
// record written to file_storage (the bound, paceWriteEvery, lets at most
// one through a second; here the clock moves past it every time).
func BenchmarkHoldStorePaceWrite(b *testing.B) {
	host, stop := startFileStorage(b, b.TempDir())
	defer stop()
	clock := retrytest.NewClock(start)
	s, err := openHoldStore(context.Background(), host, persistConfig("http://localhost:4318"), persistExporterID, "traces", zap.NewNop(), clock)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}()
	v := uint64(0)
	for b.Loop() {
		v++
		clock.Advance(paceWriteEvery)
		s.putPace("k", retry.KeptPace{At: clock.Now(), Version: v, Mode: "paced", Ceiling: float64(v), Since: clock.Now(), ItemsPerRequest: 100,
			Bare: true, Plateau: float64(v) + 1, Regain: 2 * time.Second, Measured: true, BackgroundAnswered: 9, BackgroundRefused: 1})
	}
	if s.writes != int(v) {
		b.Fatalf("%d writes for %d changes", s.writes, v)
	}
}
