// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package demobackend

import (
	"net/http"
	"time"
)

// Summary is what the recorded requests add up to.
type Summary struct {
	// Requests is every request recorded; Refused the 429s, Unauthorized
	// the 401s, Unavailable the 503s, Accepted the 200s, Malformed the 4xx
	// for bad requests, Rejected the other scripted errors (ModeEcho's 400
	// and 403).
	Requests, Refused, Unauthorized, Unavailable, Accepted, Malformed, Rejected int

	// DistinctKeys is how many idempotency keys were seen; KeysReused how
	// many of them came on more than one request (a retry reusing its key);
	// DuplicateKeysAccepted how many were accepted more than once (must be 0).
	DistinctKeys, KeysReused, DuplicateKeysAccepted int
	// MissingKeys counts requests without an idempotency key.
	MissingKeys int
	// KeysWithChangedBody counts keys whose requests did not all carry the
	// same body bytes (must be 0: a retry resends the same bytes). A body
	// that did not arrive whole (Record.Truncated) is left out: its bytes
	// are what came before the connection ended, not what was sent.
	KeysWithChangedBody int
	// TruncatedBodies counts requests whose body did not arrive whole.
	TruncatedBodies int
	// RefusedKeysNeverAccepted counts keys that got a 429 and never a 200.
	RefusedKeysNeverAccepted int

	// ItemsAccepted is the sum of items in accepted requests. For traces,
	// DistinctItemsAccepted counts distinct spans among them and
	// DuplicateItemsAccepted the spans accepted more than once.
	ItemsAccepted, DistinctItemsAccepted, DuplicateItemsAccepted int

	// FirstRequest and FirstRefusal and FirstAccept are arrival times (zero when none).
	FirstRequest, FirstRefusal, FirstAccept time.Time

	// InsideRefusedWindow counts requests that arrived after a 429 was
	// decided and before its Retry-After had passed; AnyInsideRefusedWindow
	// is InsideRefusedWindow > 0.
	InsideRefusedWindow    int
	AnyInsideRefusedWindow bool
}

// Summarize adds up records (in arrival order).
func Summarize(records []Record) Summary {
	var s Summary
	type keyInfo struct {
		requests, accepted int
		refused            bool
		hash               string
		changed            bool
	}
	keys := map[string]*keyInfo{}
	var order []string
	spans := map[string]int{}
	for _, r := range records {
		s.Requests++
		if r.Truncated {
			s.TruncatedBodies++
		}
		if s.FirstRequest.IsZero() {
			s.FirstRequest = r.Arrival
		}
		if r.InRefusedWindow {
			s.InsideRefusedWindow++
		}
		switch {
		case r.Status == http.StatusOK:
			s.Accepted++
			s.ItemsAccepted += r.Items
			if s.FirstAccept.IsZero() {
				s.FirstAccept = r.Arrival
			}
			for _, id := range r.ItemIDs {
				spans[id]++
			}
		case r.Status == http.StatusTooManyRequests:
			s.Refused++
			if s.FirstRefusal.IsZero() {
				s.FirstRefusal = r.Arrival
			}
		case r.Status == http.StatusUnauthorized:
			s.Unauthorized++
		case r.Status == http.StatusServiceUnavailable:
			s.Unavailable++
		case r.Err != "":
			s.Malformed++
		default:
			s.Rejected++
		}
		if r.Key == "" {
			s.MissingKeys++
			continue
		}
		k, ok := keys[r.Key]
		if !ok {
			k = &keyInfo{}
			keys[r.Key] = k
			order = append(order, r.Key)
		}
		k.requests++
		switch {
		case r.Truncated:
		case k.hash == "":
			k.hash = r.BodyHash
		case k.hash != r.BodyHash:
			k.changed = true
		}
		switch r.Status {
		case http.StatusOK:
			k.accepted++
		case http.StatusTooManyRequests:
			k.refused = true
		}
	}
	s.DistinctKeys = len(keys)
	for _, key := range order {
		k := keys[key]
		if k.requests > 1 {
			s.KeysReused++
		}
		if k.accepted > 1 {
			s.DuplicateKeysAccepted++
		}
		if k.changed {
			s.KeysWithChangedBody++
		}
		if k.refused && k.accepted == 0 {
			s.RefusedKeysNeverAccepted++
		}
	}
	s.DistinctItemsAccepted = len(spans)
	for _, n := range spans {
		if n > 1 {
			s.DuplicateItemsAccepted += n - 1
		}
	}
	s.AnyInsideRefusedWindow = s.InsideRefusedWindow > 0
	return s
}

// AcceptedSpans returns how many times each span ("traceid/spanid") was accepted.
func AcceptedSpans(records []Record) map[string]int {
	out := map[string]int{}
	for _, r := range records {
		if r.Status != http.StatusOK {
			continue
		}
		for _, id := range r.ItemIDs {
			out[id]++
		}
	}
	return out
}
