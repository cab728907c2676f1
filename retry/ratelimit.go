// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"time"
)

// RateLimitSource says which form of rate-limit headers a RateLimit came from.
type RateLimitSource string

const (
	// SourceRateLimit: the structured fields RateLimit and RateLimit-Policy of
	// the current draft-ietf-httpapi-ratelimit-headers (-08 and later):
	//
	//	RateLimit-Policy: "default";q=2000;w=1
	//	RateLimit: "default";r=1500;t=1
	SourceRateLimit RateLimitSource = "ratelimit"
	// SourceRateLimitDraft7: RateLimit as a Dictionary, from draft -07
	// (still sent by express-rate-limit's "draft-7" mode and others):
	//
	//	RateLimit: limit=100, remaining=25, reset=5
	//	RateLimit-Policy: 100;w=60
	SourceRateLimitDraft7 RateLimitSource = "ratelimit-draft7"
	// SourceRateLimitTriple: RateLimit-Limit, RateLimit-Remaining and
	// RateLimit-Reset, from drafts -00 to -06.
	SourceRateLimitTriple RateLimitSource = "ratelimit-triple"
	// SourceXRateLimit: the common X-RateLimit-Limit, X-RateLimit-Remaining
	// and X-RateLimit-Reset.
	SourceXRateLimit RateLimitSource = "x-ratelimit"
)

// RateLimitReject is why a rate-limit value was rejected.
type RateLimitReject string

const (
	// RejectMalformed: not a number where one is needed, the wrong type, a
	// field that is not valid structured-field syntax, or a required
	// parameter missing.
	RejectMalformed RateLimitReject = "malformed"
	// RejectNegative: a count or a time below zero.
	RejectNegative RateLimitReject = "negative"
	// RejectHuge: beyond the bounds below.
	RejectHuge RateLimitReject = "huge"
	// RejectExcess: beyond the caps on what is read at all: a field
	// longer than maxRateLimitFieldBytes (ignored whole), or the policies
	// after the first maxRateLimitPolicies of a field.
	RejectExcess RateLimitReject = "excess"
	// RejectContradicted: the headers said the quota was spent, and the
	// backend accepted a request sent against them (see QuotaHoldBound):
	// they are ignored until it refuses one. Counted once each time.
	RejectContradicted RateLimitReject = "contradicted"
)

const (
	// maxRateLimitCount bounds quotas and remaining counts: the largest
	// Integer of RFC 9651. Larger ones are rejected as huge.
	maxRateLimitCount = 999_999_999_999_999
	// maxRateLimitReset bounds resets and windows. Longer ones are rejected
	// as huge: no pacing waits that long anyway (retry_after::max caps it).
	maxRateLimitReset = 24 * time.Hour
	// A remaining count more than remainingOverQuota times the policy's quota
	// is rejected as huge.
	remainingOverQuota = 2
	// A RateLimit-Reset or X-RateLimit-Reset above epochSeconds is a Unix
	// time in seconds (no delay is 31 years long), above epochMillis one in
	// milliseconds (no Unix time in seconds is 31 700 years ahead).
	epochSeconds = 1_000_000_000
	epochMillis  = 1_000_000_000_000
	// maxRateLimitFieldBytes caps one rate-limit field, all its lines
	// joined: a longer one is not parsed. Real ones are tens of bytes; the
	// cap keeps a hostile one from costing more than a few microseconds.
	maxRateLimitFieldBytes = 4096
	// maxRateLimitPolicies caps the policies read from one response:
	// those after the first maxRateLimitPolicies distinct names are
	// ignored.
	maxRateLimitPolicies = 16
)

// RateLimitPolicy is one quota the server enforces and what is left of it.
// Each value is used only when its Has flag is set.
type RateLimitPolicy struct {
	// Name names the policy (the item of RateLimit-Policy and RateLimit);
	// empty in the other forms.
	Name string
	// Quota is how much the window allows (q, limit).
	Quota    int64
	HasQuota bool
	// QuotaUnit is the unit of Quota, Remaining and cost (qu): "requests"
	// when the server does not say; "content-bytes", "concurrent-requests"
	// or another unit it names.
	QuotaUnit string
	// Window is the time window of the quota (w); zero when not given.
	Window time.Duration
	// Remaining is how much of the quota is left (r, remaining).
	Remaining    int64
	HasRemaining bool
	// Reset is when the quota is restored, counted from RateLimit.Observed
	// (t, reset).
	Reset    time.Duration
	HasReset bool
	// PartitionKey is the decoded pk parameter, empty when not given.
	PartitionKey string
}

// RateLimitRejection is one value that was ignored.
type RateLimitRejection struct {
	// Field is the header field, spelt as in the drafts ("RateLimit",
	// "X-RateLimit-Reset").
	Field string
	// Param is the parameter or dictionary key ("r", "t", "q", "remaining"),
	// empty for the whole field or a whole item.
	Param  string
	Reason RateLimitReject
}

// RateLimit is what the rate-limit headers of one response say.
type RateLimit struct {
	// Present is set when at least one policy has a valid quota or
	// remaining count; Policies then holds them and Source says where they
	// came from.
	Present  bool
	Source   RateLimitSource
	Policies []RateLimitPolicy
	// Observed is the now given to ParseRateLimit: each Reset counts from it.
	Observed time.Time
	// Reference is the clock a reset given as a Unix time was compared
	// with (the response's Date header, else the local clock); empty when
	// no reset was a Unix time.
	Reference Reference
	// Rejected lists the values that were ignored. A malformed structured
	// field counts once, whatever it held.
	Rejected []RateLimitRejection
}

// ParseRateLimit reads the rate-limit headers of a response received at now,
// whatever the case of their names, in the first of these forms that gives
// a valid policy: RateLimit/RateLimit-Policy (current draft, or draft -07's
// Dictionary), then the RateLimit-Limit/-Remaining/-Reset triple, then
// X-RateLimit-Limit/-Remaining/-Reset. Forms after the one used are not read.
//
// Several field lines of one field are one field, as if joined by commas.
// In the triple and X- forms only the first comma-separated member counts
// (drafts -00 to -06 append policies after it: "10, 10;w=1, 50;w=60"); a
// window comes from its w or window parameter.
//
// RateLimit's t and RateLimit-Reset are delta seconds by the drafts. Any
// reset of the triple or X- forms above 1e9 is read as a Unix time in
// seconds, and above 1e12 in milliseconds, as many servers send
// X-RateLimit-Reset: the delay is then that time minus the response's Date
// header (else now); a time in the past is a reset of zero. Delta seconds
// may have a fraction ("1.5") in every form.
//
// Malformed, negative or huge values are ignored and listed in Rejected;
// the rest of the policy still counts. So is what lies beyond the caps: a
// field longer than maxRateLimitFieldBytes, the policies after the first
// maxRateLimitPolicies. Time and memory are linear in the headers' size. A policy named twice keeps, value by
// value, the more cautious one: the lower quota and remaining, the longer
// window and reset. Nothing here reads a clock.
func ParseRateLimit(h http.Header, now time.Time) RateLimit {
	b := rlBuilder{rl: RateLimit{Observed: now}, h: h, now: now}
	if b.structured() || b.triple("RateLimit-", SourceRateLimitTriple) || b.triple("X-RateLimit-", SourceXRateLimit) {
		b.rl.Present = true
	}
	return b.rl
}

type rlBuilder struct {
	rl  RateLimit
	h   http.Header
	now time.Time
}

func (b *rlBuilder) reject(field, param string, reason RateLimitReject) {
	b.rl.Rejected = append(b.rl.Rejected, RateLimitRejection{Field: field, Param: param, Reason: reason})
}

// finish keeps the valid policies; it reports whether any is left.
func (b *rlBuilder) finish(ps []RateLimitPolicy, remainingField, remainingParam string, src RateLimitSource) bool {
	var out []RateLimitPolicy
	for _, p := range ps {
		if p.HasQuota && p.HasRemaining && p.Remaining > remainingOverQuota*p.Quota {
			b.reject(remainingField, remainingParam, RejectHuge)
			p.Remaining, p.HasRemaining = 0, false
		}
		if p.HasQuota || p.HasRemaining {
			if p.QuotaUnit == "" {
				p.QuotaUnit = "requests"
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return false
	}
	b.rl.Source, b.rl.Policies = src, out
	return true
}

// field is fieldValue, or "" for a field longer than maxRateLimitFieldBytes
// (rejected as excess).
func (b *rlBuilder) field(name string) string {
	v, ok := fieldValue(b.h, name, maxRateLimitFieldBytes)
	if !ok {
		b.reject(name, "", RejectExcess)
	}
	return v
}

// policies collects the policies of a response by name, in order, up to
// maxRateLimitPolicies names.
type policies struct {
	list  []RateLimitPolicy
	index map[string]int
}

// add merges p into the policy of the same name, or adds it: it reports
// false when p is a new name beyond maxRateLimitPolicies.
func (ps *policies) add(p RateLimitPolicy) bool {
	if i, ok := ps.index[p.Name]; ok {
		mergePolicy(&ps.list[i], p)
		return true
	}
	if len(ps.list) >= maxRateLimitPolicies {
		return false
	}
	if ps.index == nil {
		ps.index = map[string]int{}
	}
	ps.index[p.Name] = len(ps.list)
	ps.list = append(ps.list, p)
	return true
}

// structured reads RateLimit and RateLimit-Policy.
func (b *rlBuilder) structured() bool {
	limitRaw := b.field("RateLimit")
	policyRaw := b.field("RateLimit-Policy")
	if limitRaw == "" && policyRaw == "" {
		return false
	}
	var ps policies
	if limitRaw != "" {
		items, err := parseSFList(limitRaw)
		if err != nil {
			if dict, derr := parseSFDictionary(limitRaw); derr == nil && isDraft7(dict) {
				return b.draft7(dict, policyRaw)
			}
			b.reject("RateLimit", "", RejectMalformed)
		}
		b.addItems(&ps, "RateLimit", items, b.limitItem)
	}
	if policyRaw != "" {
		items, err := parseSFList(policyRaw)
		if err != nil {
			b.reject("RateLimit-Policy", "", RejectMalformed)
		}
		b.addItems(&ps, "RateLimit-Policy", items, b.policyItem)
	}
	return b.finish(ps.list, "RateLimit", "r", SourceRateLimit)
}

// addItems reads each item of field into ps; the items beyond
// maxRateLimitPolicies names are ignored and rejected once as excess.
func (b *rlBuilder) addItems(ps *policies, field string, items []sfItem, read func(sfItem) (RateLimitPolicy, bool)) {
	excess := false
	for _, it := range items {
		if p, ok := read(it); ok && !ps.add(p) && !excess {
			excess = true
			b.reject(field, "", RejectExcess)
		}
	}
}

// itemName is the policy name of a RateLimit or RateLimit-Policy item: a
// String, or a Token from a lenient server.
func (b *rlBuilder) itemName(field string, it sfItem) (string, bool) {
	if it.val.kind != sfString && it.val.kind != sfToken {
		b.reject(field, "", RejectMalformed)
		return "", false
	}
	return it.val.s, true
}

// limitItem reads one item of RateLimit: "name";r=<remaining>;t=<reset>.
func (b *rlBuilder) limitItem(it sfItem) (RateLimitPolicy, bool) {
	const field = "RateLimit"
	name, ok := b.itemName(field, it)
	if !ok {
		return RateLimitPolicy{}, false
	}
	p := RateLimitPolicy{Name: name}
	if v, ok := it.params.get("r"); ok {
		p.Remaining, p.HasRemaining = b.count(field, "r", v)
	} else {
		b.reject(field, "r", RejectMalformed) // required
	}
	if v, ok := it.params.get("t"); ok {
		p.Reset, p.HasReset = b.seconds(field, "t", v, true)
	}
	b.partitionKey(field, it, &p)
	return p, true
}

// policyItem reads one item of RateLimit-Policy:
// "name";q=<quota>;w=<window>;qu=<unit>;pk=<key>.
func (b *rlBuilder) policyItem(it sfItem) (RateLimitPolicy, bool) {
	const field = "RateLimit-Policy"
	name, ok := b.itemName(field, it)
	if !ok {
		return RateLimitPolicy{}, false
	}
	p := RateLimitPolicy{Name: name}
	if v, ok := it.params.get("q"); ok {
		p.Quota, p.HasQuota = b.count(field, "q", v)
	} else {
		b.reject(field, "q", RejectMalformed) // required
	}
	if v, ok := it.params.get("w"); ok {
		p.Window, _ = b.seconds(field, "w", v, false)
	}
	if v, ok := it.params.get("qu"); ok {
		if (v.kind == sfString || v.kind == sfToken) && v.s != "" {
			p.QuotaUnit = v.s
		} else {
			b.reject(field, "qu", RejectMalformed)
		}
	}
	b.partitionKey(field, it, &p)
	return p, true
}

func (b *rlBuilder) partitionKey(field string, it sfItem, p *RateLimitPolicy) {
	if v, ok := it.params.get("pk"); ok {
		if v.kind == sfByteSeq {
			p.PartitionKey = v.s
		} else {
			b.reject(field, "pk", RejectMalformed)
		}
	}
}

// count checks a quota or a remaining count: an Integer in [0, maxRateLimitCount].
func (b *rlBuilder) count(field, param string, v sfValue) (int64, bool) {
	switch {
	case v.kind != sfInteger:
		b.reject(field, param, RejectMalformed)
	case v.huge:
		b.reject(field, param, RejectHuge)
	case v.i < 0:
		b.reject(field, param, RejectNegative)
	case v.i > maxRateLimitCount:
		b.reject(field, param, RejectHuge)
	default:
		return v.i, true
	}
	return 0, false
}

// seconds checks a reset or a window: an Integer or a Decimal number of
// seconds in [0, maxRateLimitReset], above zero unless zero is allowed.
func (b *rlBuilder) seconds(field, param string, v sfValue, zeroOK bool) (time.Duration, bool) {
	switch {
	case v.kind != sfInteger && v.kind != sfDecimal:
		b.reject(field, param, RejectMalformed)
	case v.huge:
		b.reject(field, param, RejectHuge)
	case v.i < 0 || v.nanos < 0:
		b.reject(field, param, RejectNegative)
	case v.i > int64(maxRateLimitReset/time.Second):
		b.reject(field, param, RejectHuge)
	default:
		d := time.Duration(v.i)*time.Second + time.Duration(v.nanos)
		if d > maxRateLimitReset {
			b.reject(field, param, RejectHuge)
			return 0, false
		}
		if d == 0 && !zeroOK {
			b.reject(field, param, RejectMalformed)
			return 0, false
		}
		return d, true
	}
	return 0, false
}

// mergePolicy folds p into q, a policy of the same name, keeping value by
// value the more cautious one.
func mergePolicy(q *RateLimitPolicy, p RateLimitPolicy) {
	if p.HasQuota && (!q.HasQuota || p.Quota < q.Quota) {
		q.Quota, q.HasQuota = p.Quota, true
	}
	if p.HasRemaining && (!q.HasRemaining || p.Remaining < q.Remaining) {
		q.Remaining, q.HasRemaining = p.Remaining, true
	}
	if p.HasReset && (!q.HasReset || p.Reset > q.Reset) {
		q.Reset, q.HasReset = p.Reset, true
	}
	q.Window = max(q.Window, p.Window)
	if q.QuotaUnit == "" {
		q.QuotaUnit = p.QuotaUnit
	}
	if q.PartitionKey == "" {
		q.PartitionKey = p.PartitionKey
	}
}

func isDraft7(dict []sfDictMember) bool {
	return slices.ContainsFunc(dict, func(m sfDictMember) bool {
		return m.key == "limit" || m.key == "remaining" || m.key == "reset"
	})
}

// draft7 reads RateLimit as draft -07's Dictionary, "limit=100,
// remaining=25, reset=5", and the window from its RateLimit-Policy,
// "100;w=60": the first item whose quota equals the limit, else the first.
func (b *rlBuilder) draft7(dict []sfDictMember, policyRaw string) bool {
	const field = "RateLimit"
	var p RateLimitPolicy
	for _, m := range dict {
		switch m.key {
		case "limit":
			p.Quota, p.HasQuota = b.count(field, m.key, m.val)
		case "remaining":
			p.Remaining, p.HasRemaining = b.count(field, m.key, m.val)
		case "reset":
			p.Reset, p.HasReset = b.seconds(field, m.key, m.val, true)
		}
	}
	if policyRaw != "" {
		items, err := parseSFList(policyRaw)
		if err != nil {
			b.reject("RateLimit-Policy", "", RejectMalformed)
		}
		i := slices.IndexFunc(items, func(it sfItem) bool { return it.val.kind == sfInteger && p.HasQuota && it.val.i == p.Quota })
		if i < 0 && len(items) > 0 {
			i = 0
		}
		if i >= 0 {
			if w, ok := items[i].params.get("w"); ok {
				p.Window, _ = b.seconds("RateLimit-Policy", "w", w, false)
			}
		}
	}
	return b.finish([]RateLimitPolicy{p}, field, "remaining", SourceRateLimitDraft7)
}

// triple reads <prefix>Limit, <prefix>Remaining and <prefix>Reset.
func (b *rlBuilder) triple(prefix string, src RateLimitSource) bool {
	limitField, remainingField, resetField := prefix+"Limit", prefix+"Remaining", prefix+"Reset"
	limitRaw := firstMember(b.field(limitField))
	remainingRaw := firstMember(b.field(remainingField))
	resetRaw := firstMember(b.field(resetField))
	if limitRaw == "" && remainingRaw == "" && resetRaw == "" {
		return false
	}
	var p RateLimitPolicy
	if limitRaw != "" {
		value, params, _ := strings.Cut(limitRaw, ";")
		p.Quota, p.HasQuota = b.plainCount(limitField, strings.TrimSpace(value))
		for param := range strings.SplitSeq(params, ";") {
			k, v, _ := strings.Cut(param, "=")
			if k = strings.ToLower(strings.TrimSpace(k)); k == "w" || k == "window" {
				if n, ok := b.plainNumber(limitField, k, strings.TrimSpace(v), true); ok {
					p.Window, _ = b.seconds(limitField, k, n, false)
				}
			}
		}
	}
	if remainingRaw != "" {
		p.Remaining, p.HasRemaining = b.plainCount(remainingField, remainingRaw)
	}
	if resetRaw != "" {
		p.Reset, p.HasReset = b.plainReset(resetField, resetRaw)
	}
	return b.finish([]RateLimitPolicy{p}, remainingField, "", src)
}

func (b *rlBuilder) plainCount(field, raw string) (int64, bool) {
	n, ok := b.plainNumber(field, "", raw, false)
	if !ok {
		return 0, false
	}
	return b.count(field, "", n)
}

// plainReset reads a reset of the triple or X- forms: delta seconds, or a
// Unix time in seconds (above 1e9) or milliseconds (above 1e12).
func (b *rlBuilder) plainReset(field, raw string) (time.Duration, bool) {
	n, ok := b.plainNumber(field, "", raw, true)
	if !ok {
		return 0, false
	}
	if n.huge || n.i < 0 || n.nanos < 0 || n.i <= epochSeconds {
		return b.seconds(field, "", n, true)
	}
	var at time.Time
	if n.i > epochMillis {
		at = time.UnixMilli(n.i)
	} else {
		at = time.Unix(n.i, n.nanos)
	}
	serverNow, ref := serverNow(b.h, b.now)
	b.rl.Reference = ref
	d := at.Sub(serverNow)
	if d > maxRateLimitReset {
		b.reject(field, "", RejectHuge)
		return 0, false
	}
	return max(d, 0), true
}

// plainNumber reads "[-]digits[.digits]" into an sfValue (Integer, or a
// Decimal when a fraction is allowed). A "-" makes it negative whatever
// follows, as for Retry-After; more than 15 integer digits make it huge.
func (b *rlBuilder) plainNumber(field, param, raw string, fractionOK bool) (sfValue, bool) {
	neg := strings.HasPrefix(raw, "-")
	intPart, frac, hasFrac := strings.Cut(strings.TrimPrefix(raw, "-"), ".")
	switch {
	case !isDigits(intPart) || (hasFrac && (!fractionOK || !isDigits(frac))):
		b.reject(field, param, RejectMalformed)
		return sfValue{}, false
	case neg:
		b.reject(field, param, RejectNegative)
		return sfValue{}, false
	}
	v := sfValue{kind: sfInteger}
	if len(strings.TrimLeft(intPart, "0")) > 15 {
		v.huge, v.i = true, math.MaxInt64
	} else {
		for _, d := range []byte(intPart) {
			v.i = v.i*10 + int64(d-'0')
		}
	}
	if hasFrac {
		v.kind = sfDecimal
		for i, d := range []byte(frac) {
			if i == 9 {
				break // below a nanosecond
			}
			v.nanos += int64(d-'0') * pow10[8-i]
		}
	}
	return v, true
}

var pow10 = [...]int64{1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000}

// fieldValue joins every line of a field, whatever the case of its name,
// with ", " as RFC 9110 allows, skipping empty lines. Lines under the
// canonical key come first, then other spellings in sorted order, so that
// the result does not depend on map order. A field that would be longer
// than limit is "" and false, and is never joined.
func fieldValue(h http.Header, name string, limit int) (string, bool) {
	var keys []string
	for k := range h {
		if strings.EqualFold(strings.TrimSpace(k), name) {
			keys = append(keys, k)
		}
	}
	canonical := http.CanonicalHeaderKey(name)
	slices.SortFunc(keys, func(a, b string) int {
		switch {
		case a == canonical:
			return -1
		case b == canonical:
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	size := 0
	for _, k := range keys {
		for _, v := range h[k] {
			if v = strings.Trim(v, " \t"); v != "" {
				if size += len(v) + 2; size > limit+2 {
					return "", false
				}
				parts = append(parts, v)
			}
		}
	}
	return strings.Join(parts, ", "), true
}

// firstMember is the first comma-separated member of a field value, trimmed.
func firstMember(v string) string {
	first, _, _ := strings.Cut(v, ",")
	return strings.TrimSpace(first)
}

// Binding is the policy with the fewest requests left, among those with a
// remaining count: its Remaining over cost(policy), what one request
// costs of it in its own unit (policies may count requests, items or
// bytes). A nil cost, or one that is not positive (or NaN), counts one
// unit a request. Ties go to the later reset.
func (r RateLimit) Binding(cost func(RateLimitPolicy) float64) (RateLimitPolicy, bool) {
	requestsLeft := func(p RateLimitPolicy) float64 {
		c := 1.0
		if cost != nil {
			c = sanitizeCost(cost(p))
		}
		return float64(p.Remaining) / c
	}
	var best RateLimitPolicy
	bestLeft, found := 0.0, false
	for _, p := range r.Policies {
		if !p.HasRemaining {
			continue
		}
		left := requestsLeft(p)
		if !found || left < bestLeft || (left == bestLeft && p.Reset > best.Reset) {
			best, bestLeft, found = p, left, true
		}
	}
	return best, found
}

func sanitizeCost(c float64) float64 {
	if !(c > 0) { // also NaN
		return 1
	}
	return c
}
