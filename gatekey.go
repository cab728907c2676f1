// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package otlphttpretry

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"sort"
	"strings"
)

// gateKey names the gate (and the pacer) a signal's exporter shares: the
// destination URL plus the sender's identity, so that exporters sending
// with the same credentials to the same URL wait together, and tenants that
// share a URL but not credentials (X-Scope-OrgID, different API keys, a
// different auth extension) do not throttle each other. The identity is
// hashed: no credential is kept in the key.
func gateKey(cfg *Config, url string) string {
	pairs := make([]string, 0, len(cfg.ClientConfig.Headers))
	for _, pair := range cfg.ClientConfig.Headers {
		pairs = append(pairs, http.CanonicalHeaderKey(pair.Name)+"\x00"+string(pair.Value))
	}
	sort.Strings(pairs)
	h := sha256.New()
	h.Write([]byte(url))
	h.Write([]byte{0})
	h.Write([]byte(strings.Join(pairs, "\x01")))
	if cfg.ClientConfig.Auth.HasValue() {
		h.Write([]byte{0})
		h.Write([]byte(cfg.ClientConfig.Auth.Get().AuthenticatorID.String()))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// partitionGateKey is the gate of one partition of sending_queue::batch:
// the destination's key plus the partition's metadata values (hashed, as
// they may be credentials too). Without partitions it is base itself, so
// the exporter shares its gate as before.
func partitionGateKey(base, partition string) string {
	if partition == "" {
		return base
	}
	h := sha256.New()
	h.Write([]byte(base))
	h.Write([]byte{0, 'p', 0})
	h.Write([]byte(partition))
	return hex.EncodeToString(h.Sum(nil))
}
