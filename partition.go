// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry // import "github.com/otlphttpretry/otlphttpretry"

import (
	"context"
	"encoding/binary"

	"go.opentelemetry.io/collector/client"
)

// partition is where data belongs with sending_queue::batch::partition::
// metadata_keys: the values of those keys in the client metadata of the
// request that brought it. Batches are formed per partition, and each
// partition has its own gate and pacer (loops.go), so that one tenant's
// 429 holds only that tenant.
type partition struct {
	// key tells partitions apart: for each metadata key, in the configured
	// order, its number of values, then each value's length and bytes
	// (exporterhelper's encoding, so both split alike). "" without keys.
	key string
	// meta is the partition's metadata: the configured keys that had
	// values, with them. A batch carries it in its context, for auth and
	// header-setting extensions, and a persistent queue stores it.
	meta []metaEntry
}

type metaEntry struct {
	key    string
	values []string
}

// partitionOf reads ctx's partition for keys.
func partitionOf(ctx context.Context, keys []string) partition {
	if len(keys) == 0 {
		return partition{}
	}
	info := client.FromContext(ctx)
	var p partition
	for _, k := range keys {
		if vs := info.Metadata.Get(k); len(vs) > 0 {
			p.meta = append(p.meta, metaEntry{key: k, values: append([]string(nil), vs...)})
		}
	}
	p.key = partitionKey(keys, p.meta)
	return p
}

// partitionKey encodes the values of keys found in meta.
func partitionKey(keys []string, meta []metaEntry) string {
	kb := make([]byte, 0, 64)
	for _, k := range keys {
		var values []string
		for _, m := range meta {
			if m.key == k {
				values = m.values
				break
			}
		}
		kb = binary.AppendUvarint(kb, uint64(len(values)))
		for _, v := range values {
			kb = binary.AppendUvarint(kb, uint64(len(v)))
			kb = append(kb, v...)
		}
	}
	return string(kb)
}

// context is the context a batch of the partition is sent with: the
// partition's metadata and nothing else of any one request that went into
// it (a batch holds many).
func (p partition) context() context.Context {
	if len(p.meta) == 0 {
		return context.Background()
	}
	m := make(map[string][]string, len(p.meta))
	for _, e := range p.meta {
		m[e.key] = e.values
	}
	return client.NewContext(context.Background(), client.Info{Metadata: client.NewMetadata(m)})
}
