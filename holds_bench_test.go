// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"
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
		s, err := openHoldStore(ctx, host, cfg, persistExporterID, "traces", zap.NewNop(), time.Now())
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
