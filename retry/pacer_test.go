// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package retry_test

import (
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/otlphttpretry/otlphttpretry/retry"
	"github.com/otlphttpretry/otlphttpretry/retry/retrytest"
)

// bucket is a token-bucket quota like a backend's: rate items per second,
// at most burst banked.
type bucket struct {
	rate, burst, tokens float64
	at                  time.Time
}

func (b *bucket) take(now time.Time, items int) (ok bool, wait time.Duration) {
	b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.at).Seconds()*b.rate)
	b.at = now
	if b.tokens >= float64(items) {
		b.tokens -= float64(items)
		return true, 0
	}
	return false, time.Duration((float64(items) - b.tokens) / b.rate * float64(time.Second))
}

// header is the answer's RateLimit headers for the bucket.
func (b *bucket) header() retry.RateLimit {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"q";q=`+strconv.Itoa(int(b.burst))+`;w=1`)
	h.Set("RateLimit", `"q";r=`+strconv.Itoa(int(b.tokens))+`;t=1`)
	return retry.ParseRateLimit(h, b.at)
}

// simulate offers a bucket twice its rate for d: one sender after another,
// as fast as the pacer lets them, each refusal holding the sender for the
// wait the bucket names (as the gate would). It returns requests, refusals
// and items accepted in the second half (after the pacer had time to learn).
func simulate(t *testing.T, p *retry.Pacer, clock *retrytest.Clock, b *bucket, d time.Duration, withHeaders bool) (requests, refused, items int) {
	t.Helper()
	const size = 100
	end := clock.Now().Add(d)
	half := clock.Now().Add(d / 2)
	offer := clock.Now() // the load: 2 x rate, a payload every size/(2 rate)
	for clock.Now().Before(end) {
		if offer.After(clock.Now()) {
			clock.Advance(offer.Sub(clock.Now()))
		}
		if slot := p.Reserve(clock.Now(), size).At; slot.After(clock.Now()) {
			clock.Advance(slot.Sub(clock.Now()))
		}
		for {
			slot := p.Depart(clock.Now()).At
			if !slot.After(clock.Now()) {
				break
			}
			clock.Advance(slot.Sub(clock.Now()))
		}
		ok, wait := b.take(clock.Now(), size)
		var rl retry.RateLimit
		if withHeaders {
			rl = b.header()
		}
		counted := clock.Now().After(half)
		if counted {
			requests++
		}
		if ok {
			p.Accepted(clock.Now(), size, 0, rl)
			if counted {
				items += size
			}
			offer = offer.Add(time.Duration(float64(size) / (2 * b.rate) * float64(time.Second)))
			continue
		}
		p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: size, Probe: false}, rl)
		if counted {
			refused++
		}
		clock.Advance(wait.Round(time.Second) + time.Second)
	}
	return requests, refused, items
}

func TestPacerConvergesOnABucket(t *testing.T) {
	for _, withHeaders := range []bool{false, true} {
		t.Run(map[bool]string{false: "rate learned from refusals", true: "with RateLimit headers"}[withHeaders], func(t *testing.T) {
			clock := retrytest.NewClock(t0)
			cfg := retry.NewDefaultPacingConfig()
			cfg.RateLimitHeaders = withHeaders
			p := retry.NewPacer(clock, cfg, 5*time.Minute)
			b := &bucket{rate: 2000, burst: 2000, tokens: 2000, at: t0}
			requests, refused, items := simulate(t, p, clock, b, 120*time.Second, withHeaders)
			share := float64(refused) / float64(requests)
			used := float64(items) / (60 * b.rate)
			t.Logf("second minute: %d requests, %d refused (%.1f%%), %.0f%% of the quota used, learned rate %.0f items/s",
				requests, refused, 100*share, 100*used, p.Rate())
			maxShare := 0.05
			if withHeaders {
				maxShare = 0.02
			}
			assert.LessOrEqual(t, share, maxShare, "share of requests refused")
			assert.GreaterOrEqual(t, used, 0.9, "share of the quota used")
		})
	}
}

func TestPacerRecoversAfterTheQuietPeriod(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	assert.Zero(t, p.Rate(), "unlimited until throttled")
	slot := p.Reserve(t0, 100)
	assert.Equal(t, t0, slot.At)
	assert.Equal(t, retry.PaceNone, slot.Source)

	for i := range 10 {
		p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: false}, retry.RateLimit{})
	rate := p.Rate()
	assert.InDelta(t, 1000, rate, 1e-6, "what was accepted in the second before")

	// Paced: two requests in a row leave items/rate apart.
	now := clock.Now()
	first := p.Reserve(now, 100)
	second := p.Reserve(now, 100)
	assert.Equal(t, retry.PaceRate, second.Source)
	assert.Equal(t, time.Duration(100/rate*float64(time.Second)), second.At.Sub(first.At))

	clock.Advance(time.Minute)
	assert.Zero(t, p.Rate(), "unlimited again a quiet period after the last refusal")
	slot = p.Reserve(clock.Now(), 100)
	assert.Equal(t, clock.Now(), slot.At)
	assert.Equal(t, retry.PaceNone, slot.Source)
}

// TestPacerGrowsAfterARefusal: after a refusal the pace is the rate
// accepted before it, and grows from there by 0.15 requests a second every
// second (the same for every exporter, whatever its pace), and also in
// proportion to the ceiling, faster the longer no refusal comes, so that a
// ceiling learned too low costs seconds, not minutes.
func TestPacerGrowsAfterARefusal(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	for i := range 20 {
		p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(2 * time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: false}, retry.RateLimit{})
	ceiling := 1900.0 / 2 // accepted over the last two seconds
	for _, step := range []struct {
		after time.Duration
		rate  float64
	}{
		{0, ceiling},
		{time.Second, ceiling*1.005 + 15},     // 0.15 of a request of 100 items a second more, and 0.5 %
		{3 * time.Second, ceiling*1.045 + 45}, // 4.5 %
		{10 * time.Second, ceiling*1.5 + 150}, // half the ceiling more
		{20 * time.Second, ceiling*3 + 300},   // twice the ceiling more
	} {
		clock.Advance(t0.Add(2*time.Second + step.after).Sub(clock.Now()))
		assert.InDelta(t, step.rate, p.Rate(), 1e-6, "%s after the refusal", step.after)
	}
}

// refusedAfterASecondOf1000 returns a pacer that accepted requests of 100
// items for a second, 1000 items a second, and was then refused: its pace
// is 1000 items a second from the clock's now.
func refusedAfterASecondOf1000(t *testing.T) (*retrytest.Clock, *retry.Pacer) {
	t.Helper()
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	for i := range 10 {
		p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: false}, retry.RateLimit{})
	require.InDelta(t, 1000, p.Rate(), 1e-6)
	return clock, p
}

// TestPacerCutsAtEachRefusal: each refusal of a request that left after the
// last cut sets the pace to what the backend accepted since that cut, over
// the time since, and to at most 60 % of the pace of the moment. Requests
// in flight together with the refused one, and the refused probe of a hold,
// cut nothing more.
func TestPacerCutsAtEachRefusal(t *testing.T) {
	clock, p := refusedAfterASecondOf1000(t)
	first := clock.Now()

	// Three seconds later, after more was accepted than the pace allowed
	// (what the pace allowed binds): 60 % of the pace of the moment.
	for i := range 60 {
		p.Accepted(first.Add(time.Duration(i)*50*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(3 * time.Second)
	second := clock.Now()
	pace := 1000*1.045 + 45
	p.Refused(retry.Refusal{At: second, Sent: second.Add(-10 * time.Millisecond), Items: 100, Probe: false}, retry.RateLimit{})
	assert.InDelta(t, 0.6*pace, p.Rate(), 1e-6, "60 %% of the pace of the moment")

	clock.Advance(20 * time.Millisecond)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: second.Add(-5 * time.Millisecond), Items: 100, Probe: false}, retry.RateLimit{})
	uncut := 0.6*pace*(1+0.005*0.02*0.02) + 0.15*100*0.02 // 20 ms of growth
	assert.InDelta(t, uncut, p.Rate(), 1e-6, "a request in flight with the refused one cuts nothing")
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: true}, retry.RateLimit{})
	assert.InDelta(t, uncut, p.Rate(), 1e-6, "a hold's refused probe cuts nothing")

	// A second later, after less was accepted than 60 % of the pace: 90 %
	// of what was accepted binds (paceMargin: a token bucket is empty at
	// both refusals, and a pace started at its rate would cross it as soon
	// as it grew).
	for i := range 3 {
		p.Accepted(second.Add(time.Duration(100+i*100)*time.Millisecond), 100, 0, retry.RateLimit{})
	}
	clock.Advance(second.Add(time.Second).Sub(clock.Now()))
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Probe: false}, retry.RateLimit{})
	assert.InDelta(t, 0.9*300, p.Rate(), 1e-6, "90 %% of the 300 items accepted in the second since the last cut")
}

// TestPacerRefusalVoidsBookedSlots: slots booked before a refusal are no
// longer current (their payloads pass the gate again), and the pace starts
// afresh from the refusal instead of after them.
func TestPacerRefusalVoidsBookedSlots(t *testing.T) {
	clock, p := refusedAfterASecondOf1000(t)
	var booked []retry.Slot
	for range 10 {
		booked = append(booked, p.Reserve(clock.Now(), 100))
	}
	assert.True(t, p.Current(booked[9]))
	assert.Greater(t, booked[9].At.Sub(clock.Now()), 800*time.Millisecond, "ten slots booked ahead")

	clock.Advance(3 * time.Second)
	cut := clock.Now()
	p.Refused(retry.Refusal{At: cut, Sent: cut, Items: 100, Probe: false}, retry.RateLimit{})
	for _, b := range booked {
		assert.False(t, p.Current(b), "booked before the refusal")
	}
	next := p.Reserve(clock.Now(), 100)
	assert.Equal(t, clock.Now(), next.At, "the pace starts again at the refusal")
	assert.True(t, p.Current(next))

	// Refusals of requests that were in flight with the first one change
	// nothing more.
	clock.Advance(100 * time.Millisecond)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: cut.Add(-time.Millisecond), Items: 100, Probe: false}, retry.RateLimit{})
	assert.True(t, p.Current(next))
}

func TestPacerNeverWaitsLongerThanTheCap(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 10*time.Second)
	for range 5 {
		p.Accepted(t0, 1, 0, retry.RateLimit{})
	}
	p.Refused(retry.Refusal{At: t0, Sent: t0, Items: 1, Probe: false}, retry.RateLimit{}) // rate: five items a second
	var last time.Time
	for range 100 {
		last = p.Reserve(t0, 1).At
	}
	assert.Equal(t, t0.Add(10*time.Second), last, "capped at retry_after::max")
}

// TestPacerQuotaWaitNeverLongerThanTheCap: a reset announced an hour away
// is waited for retry_after::max at most, in all (when it is below
// QuotaHoldBound): then a request goes.
func TestPacerQuotaWaitNeverLongerThanTheCap(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 2*time.Second)
	p.Accepted(clock.Now(), 1, 0, rateLimit(clock.Now(), 100, 3600, 0, 3600))
	slot := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, slot.Source)
	assert.Equal(t, t0.Add(2*time.Second), slot.At, "capped at retry_after::max")
	clock.Advance(2 * time.Second)
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "asked again at the cap, it goes")
}

func TestPacerWaitsForTheQuotaReset(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=10;w=60`)
	h.Set("RateLimit", `"default";r=2;t=30`)
	p.Accepted(t0, 1, 0, retry.ParseRateLimit(h, t0))

	assert.Equal(t, t0, p.Reserve(t0, 1).At, "not paced: the quota is checked at departure")
	first := p.Depart(t0)
	second := p.Depart(t0)
	assert.Equal(t, t0, first.At, "two left")
	assert.Equal(t, t0, second.At)
	third := p.Depart(t0)
	assert.Equal(t, retry.PaceQuota, third.Source)
	assert.Equal(t, t0.Add(retry.QuotaHoldBound), third.At, "the quota is spent: wait for its reset, QuotaHoldBound at most")

	off := retry.NewDefaultPacingConfig()
	off.RateLimitHeaders = false
	q := retry.NewPacer(clock, off, 5*time.Minute)
	q.Accepted(t0, 1, 0, retry.ParseRateLimit(h, t0))
	for range 5 {
		assert.Equal(t, t0, q.Depart(t0).At, "headers not read when ratelimit_headers is off")
	}
}

// TestPacerConcurrentSenders: many senders reserving and reporting at once
// keep the rate finite and positive (run with -race).
func TestPacerConcurrentSenders(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(t0, 1000, 0, retry.RateLimit{})
	p.Refused(retry.Refusal{At: t0, Sent: t0, Items: 10, Probe: false}, retry.RateLimit{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
				p.Reserve(now, 10)
				if (i+g)%7 == 0 {
					p.Refused(retry.Refusal{At: now, Sent: now, Items: 10, Probe: false}, retry.RateLimit{})
				} else {
					p.Accepted(now, 10, 0, retry.RateLimit{})
				}
			}
		}()
	}
	wg.Wait()
	rate := p.Rate()
	require.False(t, math.IsNaN(rate) || math.IsInf(rate, 0))
	assert.Positive(t, rate)
}

// TestPacerChecksTheQuotaAtDeparture: slots are booked ahead at the pace,
// but the quota is read when a request leaves, so that an answer that came
// in meanwhile saying the quota is spent holds the request until the reset.
func TestPacerChecksTheQuotaAtDeparture(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	quota := func(r int) retry.RateLimit { return rateLimit(clock.Now(), 2000, 1, r, 1) }
	p.Accepted(clock.Now(), 500, 0, quota(1500))
	p.Accepted(clock.Now(), 500, 0, quota(1000)) // 500 a request
	for i := range 10 {
		p.Accepted(clock.Now().Add(time.Duration(i)*100*time.Millisecond), 500, 0, retry.RateLimit{})
	}
	clock.Advance(time.Second)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 500, Probe: false}, quota(0)) // paced from now on
	clock.Advance(2 * time.Second)
	p.Accepted(clock.Now(), 500, 0, quota(1500))
	first, second := p.Reserve(clock.Now(), 500), p.Reserve(clock.Now(), 500)
	require.True(t, second.At.After(first.At), "booked at the pace")

	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "1 500 left: the first leaves")
	p.Accepted(clock.Now(), 500, 0, quota(200)) // others spent the quota meanwhile
	clock.Advance(second.At.Sub(clock.Now()))
	dep := p.Depart(clock.Now())
	assert.Equal(t, retry.PaceQuota, dep.Source, "200 left will not cover a request of 500")
	assert.True(t, dep.At.After(clock.Now()))
}

// rateLimit is an answer's RateLimit headers: q per w seconds, r left, t
// seconds to the reset.
func rateLimit(at time.Time, q, w, r, reset int) retry.RateLimit {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=`+strconv.Itoa(q)+`;w=`+strconv.Itoa(w))
	h.Set("RateLimit", `"default";r=`+strconv.Itoa(r)+`;t=`+strconv.Itoa(reset))
	return retry.ParseRateLimit(h, at)
}

// TestPacerWaitsForARefillingQuotaOnlyAsLongAsItNeeds: a quota seen to come
// back before its announced reset (a token bucket) is waited for until
// enough of it has, at the policy's q/w, not until the reset; what each
// request costs is read from how the count fell, the refill credited.
func TestPacerWaitsForARefillingQuotaOnlyAsLongAsItNeeds(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	answer := func(r int) {
		require.Equal(t, clock.Now(), p.Depart(clock.Now()).At)
		p.Accepted(clock.Now(), 500, 0, rateLimit(clock.Now(), 2000, 1, r, 1))
	}
	p.Accepted(clock.Now(), 500, 0, rateLimit(clock.Now(), 2000, 1, 1500, 1))
	clock.Advance(100 * time.Millisecond)
	answer(1200) // fell 300 in 100 ms: refilled? not known yet
	clock.Advance(500 * time.Millisecond)
	answer(1700) // rose before the reset: it refills, at 2 000 a second
	clock.Advance(100 * time.Millisecond)
	answer(1400) // 300 + 200 refilled: a request costs 500
	clock.Advance(100 * time.Millisecond)
	answer(1100)
	departNow(t, clock, p, 2) // 600 left, then 100

	slot := p.Depart(clock.Now())
	assert.Equal(t, retry.PaceQuota, slot.Source)
	// 100 left, 500 needed (and 5 % slack): 425 at 2 000 a second.
	assert.Equal(t, 212500*time.Microsecond, slot.At.Sub(clock.Now()), "until enough came back, not the 1 s reset")
	clock.Advance(slot.At.Sub(clock.Now()))
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "then it goes")
	next := p.Depart(clock.Now())
	assert.Equal(t, retry.PaceQuota, next.Source, "the one that went is counted at once")
}

// TestPacerSendsOneRequestFirstAfterAReset: of requests waiting for a
// window's reset, one goes first, and the others wait for its answer, which
// tells what is left and what a request costs.
func TestPacerSendsOneRequestFirstAfterAReset(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 1, 0, rateLimit(clock.Now(), 100, 60, 3, 4))
	clock.Advance(time.Second)
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At)
	p.Accepted(clock.Now(), 1, 0, rateLimit(clock.Now(), 100, 60, 2, 3)) // a request costs 1
	departNow(t, clock, p, 2)
	waiting := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, waiting.Source)
	require.Equal(t, t0.Add(4*time.Second), waiting.At, "spent: wait for the reset")

	clock.Advance(waiting.At.Sub(clock.Now()))
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "the first after the reset goes")
	var second retry.Slot
	for range 3 {
		second = p.Depart(clock.Now())
		assert.Equal(t, retry.PaceQuota, second.Source, "the others wait for its answer")
		assert.True(t, second.At.After(clock.Now()))
	}
	require.NotNil(t, second.Answered, "they wait for the answer itself, not for a period")
	p.Accepted(clock.Now(), 1, 0, rateLimit(clock.Now(), 100, 60, 99, 60))
	select {
	case <-second.Answered:
	default:
		t.Fatal("the answer did not wake the requests waiting for it")
	}
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "then they go")

	// An answer that does not come is waited for a second, not more.
	p.Accepted(clock.Now(), 1, 0, rateLimit(clock.Now(), 100, 60, 0, 1))
	clock.Advance(time.Second)
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "the first after the next reset")
	require.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source)
	clock.Advance(time.Second)
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "a second later the others stop waiting for it")
}

// TestPacerCostNotReadFromRequestsInFlightTogether: answers to requests in
// flight together may come in another order than the backend counted them;
// the fall between them says nothing of one request's cost, and a count
// that comes after a lower one is older than it: once every answer is in,
// the lowest count is what is left.
func TestPacerCostNotReadFromRequestsInFlightTogether(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 10, 0, rateLimit(clock.Now(), 1000, 60, 1000, 60))
	clock.Advance(time.Second)
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At)
	p.Accepted(clock.Now(), 10, 0, rateLimit(clock.Now(), 1000, 60, 990, 59)) // 10 a request
	departNow(t, clock, p, 3)
	clock.Advance(time.Second)
	// Counted 980, 970, 960; answered 960, 980, 970.
	for _, r := range []int{960, 980, 970} {
		p.Accepted(clock.Now(), 10, 0, rateLimit(clock.Now(), 1000, 60, r, 58))
	}
	// The 980 and 970 that came after the 960 are older counts: with
	// every answer in, 960 are left, at 10 a request: 96 go before the
	// quota is spent (taken as they came, the last, 970, let a 97th go; 960
	// less the two in flight when it came, 94).
	for i := range 96 {
		require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "request %d", i)
	}
	assert.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source)
}

// TestPacerCountsTheRequestsInFlightUntilTheirAnswersCome: while answers
// to requests in flight together are out, the lowest count less the
// requests still in flight is what is left; a request that finds it spent
// waits for the next answer (which may show it was not) as well as for the
// reset, and the last answer in tells what is left.
func TestPacerCountsTheRequestsInFlightUntilTheirAnswersCome(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 1, 1, rateLimit(clock.Now(), 10, 1, 10, 1))
	departNow(t, clock, p, 3)
	p.Accepted(clock.Now(), 1, 3, rateLimit(clock.Now(), 10, 1, 7, 1)) // counted third: 7 less 2 in flight
	departNow(t, clock, p, 5)
	wait := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, wait.Source, "5 went on the 5 thought left")
	require.NotNil(t, wait.Answered, "it waits for the next answer too")
	assert.Equal(t, t0.Add(time.Second), wait.At, "and for the window's reset at the latest")
	p.Accepted(clock.Now(), 1, 3, rateLimit(clock.Now(), 10, 1, 9, 1)) // counted first
	select {
	case <-wait.Answered:
	default:
		t.Fatal("the answer did not wake the request waiting for it")
	}
	departNow(t, clock, p, 1, "7 less the 6 still in flight: the one waiting goes")
	require.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source)
	p.Accepted(clock.Now(), 1, 3, rateLimit(clock.Now(), 10, 1, 8, 1)) // counted second: the last of the three in
	departNow(t, clock, p, 1, "7 less the 6 in flight that it did not count")
	assert.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source)
}

// TestPacerReadsTheCostFromTheFirstAnswerAfterAReset: a bucket that refills
// while it is drained shows a smaller fall than a request costs; after a
// reset, the quota was whole and one request was counted, so the first
// answer shows the whole cost, and only as many follow as it covers.
func TestPacerReadsTheCostFromTheFirstAnswerAfterAReset(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 500, 0, rateLimit(clock.Now(), 2000, 1, 1500, 1))
	for _, r := range []int{1240, 980, 720, 460, 200} { // 260 a request, as far as it shows
		clock.Advance(125 * time.Millisecond)
		require.Equal(t, clock.Now(), p.Depart(clock.Now()).At)
		p.Accepted(clock.Now(), 500, 0, rateLimit(clock.Now(), 2000, 1, r, 1))
	}
	clock.Advance(125 * time.Millisecond)
	reset := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, reset.Source, "200 left, 260 a request")
	clock.Advance(reset.At.Sub(clock.Now()))
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "the first after the reset")
	p.Accepted(clock.Now(), 500, 0, rateLimit(clock.Now(), 2000, 1, 1500, 1))
	for i := range 3 {
		assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "1 500 left covers three of 500: request %d", i)
	}
	assert.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source, "not a fourth")
}

// TestPacerSlowStartsAfterAHoldWithNothingLearned: a throttle hold that
// ends before anything was learned (the backend refused from its first
// answer) starts the pace at one request a second, doubling every second,
// until the next refusal sets a ceiling, however soon it comes.
func TestPacerSlowStartsAfterAHoldWithNothingLearned(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 50, Probe: false}, retry.RateLimit{}) // a window from the first answer
	assert.Zero(t, p.Rate(), "nothing learned from a refusal alone")
	clock.Advance(5 * time.Second)
	p.Accepted(clock.Now(), 50, 0, retry.RateLimit{}) // the probe
	p.HoldEnded(clock.Now(), 50, 1)
	for _, step := range []struct {
		after time.Duration
		rate  float64
	}{{0, 50}, {time.Second, 100}, {3 * time.Second, 400}} {
		clock.Advance(t0.Add(5*time.Second + step.after).Sub(clock.Now()))
		assert.InDelta(t, step.rate, p.Rate(), 1e-9, "%s into the slow start", step.after)
	}
	for range 10 {
		p.Accepted(clock.Now(), 50, 0, retry.RateLimit{})
	}
	clock.Advance(500 * time.Millisecond)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 50, Probe: false}, retry.RateLimit{})
	// 500 items accepted over the 3.5 s since the slow start began.
	assert.InDelta(t, 500/3.5, p.Rate(), 1e-9, "the refusal ends the slow start with a ceiling")

	p.HoldEnded(clock.Now(), 50, 1)
	assert.InDelta(t, 500/3.5, p.Rate(), 1e-9, "a learned pace is kept after a hold")

	// A refusal at the very instant a slow start began leaves a finite
	// pace of one request a second.
	q := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	q.HoldEnded(clock.Now(), 50, 1)
	q.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 50, Probe: false}, retry.RateLimit{})
	assert.InDelta(t, 50, q.Rate(), 1e-9)
}

// TestPacerDistrustsAQuotaTheBackendContradicts: a backend that accepts
// everything while its headers say the quota is spent for a day (issue
// 19). The headers hold requests for QuotaHoldBound at most; then one
// request goes, alone; accepted, it shows the headers wrong, and they are
// ignored (reported once) until the backend refuses a request.
func TestPacerDistrustsAQuotaTheBackendContradicts(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	spent := func() retry.RateLimit { return rateLimit(clock.Now(), 100, 86400, 0, 86400) }
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "nothing known yet")
	assert.False(t, p.Accepted(clock.Now(), 1, 0, spent()))

	held := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, held.Source)
	assert.Equal(t, t0.Add(retry.QuotaHoldBound), held.At, "held for the bound, not for the day")
	clock.Advance(time.Second)
	assert.Equal(t, t0.Add(retry.QuotaHoldBound), p.Depart(clock.Now()).At, "asked again, the bound stays where it was")
	clock.Advance(t0.Add(retry.QuotaHoldBound).Sub(clock.Now()))
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "at the bound one request goes against the headers")
	other := p.Depart(clock.Now())
	assert.Equal(t, retry.PaceQuota, other.Source, "alone: the others wait for its answer")

	assert.True(t, p.Accepted(clock.Now(), 1, 0, spent()), "accepted: the headers are wrong, reported once")
	for range 5 {
		assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "ignored from now on")
		assert.False(t, p.Accepted(clock.Now(), 1, 0, spent()), "reported once")
	}

	// A refusal makes them count again.
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 1}, spent())
	assert.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source, "trusted again after a refusal")
}

// TestPacerKeepsAQuotaTheBackendConfirms: a window really spent: the
// request sent against the headers at the bound is refused (429), and
// the headers keep counting.
func TestPacerKeepsAQuotaTheBackendConfirms(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	spent := func() retry.RateLimit { return rateLimit(clock.Now(), 100, 3600, 0, 3600) }
	p.Depart(clock.Now())
	p.Accepted(clock.Now(), 1, 0, spent())
	require.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source, "held from now")
	clock.Advance(retry.QuotaHoldBound)
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "the test request")
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 1}, spent())
	assert.Equal(t, retry.PaceQuota, p.Depart(clock.Now()).Source, "still obeyed")
	assert.False(t, p.Accepted(clock.Now(), 1, 0, spent()), "an acceptance not sent against the headers tests nothing")
}

// TestPacerWaitsForAnAnswerAtTheConcurrencyLimit: a refusal that left with
// more requests in flight than any the backend accepted sets a concurrency
// limit; then a request finding that many in flight waits for the next
// answer, not for a time.
func TestPacerWaitsForAnAnswerAtTheConcurrencyLimit(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	var inFlight []int
	for range 2 {
		slot := p.Depart(clock.Now())
		require.Equal(t, clock.Now(), slot.At)
		inFlight = append(inFlight, slot.InFlight)
	}
	assert.Equal(t, []int{1, 2}, inFlight, "each counts the requests in flight, itself included")
	p.Accepted(clock.Now(), 100, 1, retry.RateLimit{})
	p.Accepted(clock.Now(), 100, 2, retry.RateLimit{})
	departNow(t, clock, p, 3)
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 3}, retry.RateLimit{})
	assert.Equal(t, 2, p.State().Concurrency, "refused with three in flight, accepted with two")
	assert.False(t, p.State().Tentative)
	assert.Zero(t, p.Rate(), "the pace is not cut for it")

	// Two in flight: the next waits for an answer.
	slot := p.Depart(clock.Now())
	require.Equal(t, retry.PaceConcurrency, slot.Source)
	require.NotNil(t, slot.Answered)
	select {
	case <-slot.Answered:
		t.Fatal("woken before any answer")
	default:
	}
	p.Accepted(clock.Now(), 100, 2, retry.RateLimit{})
	select {
	case <-slot.Answered:
	default:
		t.Fatal("not woken by the answer")
	}
	assert.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "one in flight now: it goes")
}

// TestPacerLearnsConcurrencyFromTheFirstRefusal: refused before anything
// was accepted, with two requests still in flight: a tentative limit of
// two, which the next request waits under; an acceptance of one of the two
// confirms it. When both are refused too (the backend refuses everything),
// it is forgotten.
func TestPacerLearnsConcurrencyFromTheFirstRefusal(t *testing.T) {
	clock := retrytest.NewClock(t0)
	start := func() *retry.Pacer {
		p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
		for range 3 {
			p.Depart(clock.Now())
		}
		r := retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 3}
		accepted, crowding := p.Lately(r)
		assert.False(t, accepted)
		assert.Equal(t, retry.CrowdedFirst, crowding, "two ahead of it still out")
		p.Refused(r, retry.RateLimit{})
		s := p.State()
		assert.Equal(t, 2, s.Concurrency)
		assert.True(t, s.Tentative)
		assert.Equal(t, 2, s.Pending, "the two in flight with it")
		return p
	}

	p := start()
	slot := p.Depart(clock.Now())
	require.Equal(t, retry.PaceConcurrency, slot.Source, "two in flight: the next waits for an answer")
	p.Accepted(clock.Now(), 100, 1, retry.RateLimit{})
	assert.Equal(t, 2, p.State().Concurrency, "one of the two accepted: confirmed")
	assert.False(t, p.State().Tentative)
	assert.Zero(t, p.Rate(), "no pace")

	p = start()
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 1}, retry.RateLimit{})
	assert.Equal(t, 1, p.State().Concurrency, "a second refused, one still out: at most one at once, tentatively")
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 1}, retry.RateLimit{})
	assert.Zero(t, p.State().Concurrency, "all three refused, nothing accepted: the backend refuses everything, not a concurrency limit")

	p = start()
	p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 2}, retry.RateLimit{})
	assert.Equal(t, 1, p.State().Concurrency, "refused with one ahead of it: at most one at once, tentatively")
	p.Unanswered()
	assert.Zero(t, p.State().Concurrency, "the last of them unanswered: none was accepted, forgotten")
}

// TestPacerEverythingRefusedAtOnceIsUnlearned: three requests leave
// together to a destination nothing is known of, and all three are
// refused bare. The first two refusals, with others still out, set a
// tentative concurrency limit (TestPacerLearnsConcurrencyFromTheFirstRefusal);
// the last, with none left out and nothing accepted, forgets it. The
// policy reads that last refusal as one to a destination nothing is known
// of (a first bare hold of 1 s, whose accepted probe leaves the pace
// unlimited), as a single request refused alone is: read with the
// tentative limit still set, it held the destination retry_after::default
// (5 s), and its accepted probe then released every queued payload at
// once. Behind a limiter closed for 5 s (the bare fleet of 50), the
// collectors that took that path sent tens of requests each in the first
// second after it reopened, most of them refused (docs/benchmarks.md,
// "two misreadings at a destination's start").
func TestPacerEverythingRefusedAtOnceIsUnlearned(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	for range 3 {
		p.Depart(clock.Now())
	}
	for i, want := range []retry.Crowding{retry.CrowdedFirst, retry.CrowdedFirst, retry.NotCrowded} {
		r := retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: 3}
		_, crowding := p.Lately(r)
		require.Equal(t, want, crowding, "refusal %d", i+1)
		if want == retry.NotCrowded {
			assert.True(t, p.LatelyUnlearned(r), "the last refusal: nothing is known of the destination")
		}
		p.Refused(r, retry.RateLimit{})
	}
	assert.Zero(t, p.State().Concurrency, "the tentative limit forgotten")
	assert.True(t, p.State().Unlearned())
}

// TestPacerSheddingKeepsThePace: a backend that answers half of the
// requests 503 whatever the pace (load shedding) slows the pace, but never
// to a trickle: each 503 cut holds it 5 % below the rate requests went at
// (not what was accepted), and it climbs back; it settles above half of
// what requests were offered at (the pace a cut to what was accepted would
// halve at every cut).
func TestPacerSheddingKeepsThePace(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	next := t0
	var paces []float64
	for i := range 600 { // a minute at the pace, or at 10 requests a second
		if slot := p.Reserve(clock.Now(), 100); slot.At.After(clock.Now()) {
			clock.Advance(slot.At.Sub(clock.Now()))
		}
		if next.After(clock.Now()) {
			clock.Advance(next.Sub(clock.Now()))
		}
		next = clock.Now().Add(100 * time.Millisecond)
		dep := p.Depart(clock.Now())
		if i%2 == 0 {
			p.Accepted(clock.Now(), 100, dep.InFlight, retry.RateLimit{})
		} else {
			p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, Shed: true, InFlight: dep.InFlight}, retry.RateLimit{})
		}
		if i >= 300 {
			paces = append(paces, p.Rate())
		}
	}
	slices.Sort(paces)
	t.Logf("second half: pace %.0f–%.0f items/s, median %.0f", paces[0], paces[len(paces)-1], paces[len(paces)/2])
	assert.GreaterOrEqual(t, paces[0], 500.0, "never below half of the 1 000 items a second requests are offered at")
}

// TestPacerSporadicRefusalsKeepThePace: a backend without a limit that
// refuses one request in twenty at random does not bring the pace below
// what requests go at.
func TestPacerSporadicRefusalsKeepThePace(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	rng := rand.New(rand.NewPCG(1, 2))
	late := time.Duration(0)
	for range 1200 { // a minute at 20 requests a second
		clock.Advance(50 * time.Millisecond)
		if slot := p.Reserve(clock.Now(), 100); slot.At.After(clock.Now()) {
			late += slot.At.Sub(clock.Now())
			clock.Advance(slot.At.Sub(clock.Now()))
		}
		dep := p.Depart(clock.Now())
		if rng.Float64() < 0.05 {
			p.Refused(retry.Refusal{At: clock.Now(), Sent: clock.Now(), Items: 100, Bare: true, InFlight: dep.InFlight}, retry.RateLimit{})
		} else {
			p.Accepted(clock.Now(), 100, dep.InFlight, retry.RateLimit{})
		}
	}
	t.Logf("held back %s in a minute; pace %.0f items/s", late, p.Rate())
	assert.Less(t, late, 6*time.Second, "held back less than a tenth of the time")
}

// TestPacerQuotaOfABucketCappedBelowItsQuota: RateLimit headers of a
// request-rate bucket (GCRA) announce q=20;w=1 but never more than its
// burst of 4 left. The first answer after a reset then shows a fall of 17
// units, far more than requests were seen to cost (1): the quota is a
// bucket that comes back at 20 a second, not a window whole at its reset.
func TestPacerQuotaOfABucketCappedBelowItsQuota(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	for _, r := range []int{3, 2, 1, 0} {
		require.Equal(t, clock.Now(), p.Depart(clock.Now()).At)
		p.Accepted(clock.Now(), 200, 1, rateLimit(clock.Now(), 20, 1, r, 1))
	}
	firstAfterReset(t, clock, p)
	p.Accepted(clock.Now(), 200, 1, rateLimit(clock.Now(), 20, 1, 3, 1))
	departNow(t, clock, p, 3, "three left")
	next := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, next.Source)
	assert.Less(t, next.At.Sub(clock.Now()), 100*time.Millisecond, "a request's worth comes back in 50 ms, not at the 1 s reset")
}

// TestPacerQuotaOfABucketCappedBelowItsQuotaAfterABurst: a GCRA of 20
// requests a second that takes 4 at once, announced in RateLimit fields,
// offered requests faster than it answers: the first four leave together,
// and their answers, in any order, show 3, 2, 1 and 0 left. None came alone,
// so none shows a request's cost by itself; their spread does (3 over 4
// answers: one each). The first answer after the reset, 3 left of 20, is
// then a bucket capped below its quota, not a request that cost 17: three
// more go, and the next waits for a request's worth of refill (50 ms), not
// for the reset a second away. (Read as a cost of 17, every reset let one
// request through: a request a second behind a limit of 20.)
func TestPacerQuotaOfABucketCappedBelowItsQuotaAfterABurst(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	departNow(t, clock, p, 4, "nothing known: the first four leave together")
	clock.Advance(20 * time.Millisecond)
	for i, r := range []int{2, 3, 0, 1} {
		p.Accepted(clock.Now(), 200, 4-i, rateLimit(clock.Now(), 20, 1, r, 1))
	}
	firstAfterReset(t, clock, p)
	clock.Advance(20 * time.Millisecond)
	p.Accepted(clock.Now(), 200, 1, rateLimit(clock.Now(), 20, 1, 3, 1))
	departNow(t, clock, p, 3, "three left, at a request each")
	next := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, next.Source)
	assert.Less(t, next.At.Sub(clock.Now()), 100*time.Millisecond, "a request's worth comes back in 50 ms, not at the 1 s reset")
}

// TestPacerSpreadCountsOnlyAcceptedAnswers: the spread of the answers in
// flight together shows a request's cost only over requests the backend
// counted; refused ones are not counted in its window. A window of 4 a
// second whose requests cost 2 (its unit not requests): six leave
// together, two are accepted (2 and 0 left) and four refused (0 left).
// The spread shows a cost of 2, and the first answer after the reset, 2
// left of 4, a fall of one request's cost: a window, not a bucket capped
// below its quota. One more request goes and the next waits for the reset
// a second away. (Counting the refused answers, the spread showed 0.4, the
// fall of 2 passed for five requests' worth, a bucket refilling at 4 a
// second, and requests went before the window's reset.)
func TestPacerSpreadCountsOnlyAcceptedAnswers(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	departNow(t, clock, p, 6, "nothing known: six leave together")
	clock.Advance(20 * time.Millisecond)
	p.Accepted(clock.Now(), 100, 6, rateLimit(clock.Now(), 4, 1, 2, 1))
	p.Accepted(clock.Now(), 100, 5, rateLimit(clock.Now(), 4, 1, 0, 1))
	for range 4 {
		p.Refused(retry.Refusal{At: clock.Now(), Sent: t0, Items: 100}, rateLimit(clock.Now(), 4, 1, 0, 1))
	}
	firstAfterReset(t, clock, p)
	clock.Advance(20 * time.Millisecond)
	p.Accepted(clock.Now(), 100, 1, rateLimit(clock.Now(), 4, 1, 2, 1))
	departNow(t, clock, p, 1, "2 left: one request of 2")
	next := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, next.Source)
	assert.Equal(t, clock.Now().Add(time.Second), next.At, "a window: the next waits for its reset")
}

// TestPacerRefillNotReadFromAnswersInFlightTogether: answers to requests in
// flight together come in any order; a count that rose between two of
// them does not show a quota that comes back as it goes.
func TestPacerRefillNotReadFromAnswersInFlightTogether(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 1, 1, rateLimit(clock.Now(), 10, 1, 10, 1))
	departNow(t, clock, p, 3)
	for _, r := range []int{7, 9, 8} { // counted 9, 8, 7
		p.Accepted(clock.Now(), 1, 3, rateLimit(clock.Now(), 10, 1, r, 1))
	}
	departNow(t, clock, p, 7) // 7 left: 9 and 8, older, add nothing
	slot := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, slot.Source)
	assert.Equal(t, clock.Now().Add(time.Second), slot.At, "a window: wait for its reset")
}

// TestPacerRefusalsInARow: bare 429s in a row (each sent after the last
// came back) push the next slot out further and further; with RateLimit
// headers the quota tracker says when there is room, and they do not.
func TestPacerRefusalsInARow(t *testing.T) {
	for _, tt := range []struct {
		name   string
		rl     retry.RateLimit
		streak int
	}{
		{"bare", retry.RateLimit{}, 3},
		{"with RateLimit headers", rateLimit(t0, 2000, 1, 0, 1), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := retrytest.NewClock(t0)
			p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
			for range 10 {
				p.Accepted(clock.Now(), 100, 1, retry.RateLimit{})
				clock.Advance(100 * time.Millisecond)
			}
			for range 3 {
				clock.Advance(time.Millisecond)
				sent := clock.Now() // after the last refusal came back
				clock.Advance(10 * time.Millisecond)
				p.Refused(retry.Refusal{At: clock.Now(), Sent: sent, Items: 100, Bare: true}, tt.rl)
			}
			assert.Equal(t, tt.streak, p.State().Streak)
		})
	}
}

// TestPacerCountsRequestsInFlightBeforeTheCostIsLearned: before any answer
// showed what a request costs, a request still counts as one unit of the
// quota, also when an answer that does not count the requests in flight
// comes: one left, one in flight, nothing for the next.
func TestPacerCountsRequestsInFlightBeforeTheCostIsLearned(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 50, 0, rateLimit(clock.Now(), 50, 1, 3, 1))
	departNow(t, clock, p, 2) // two in flight together: their answers teach no cost
	clock.Advance(10 * time.Millisecond)
	p.Accepted(clock.Now(), 50, 0, rateLimit(clock.Now(), 50, 1, 1, 1)) // the other is still in flight
	next := p.Depart(clock.Now())
	assert.Equal(t, retry.PaceQuota, next.Source, "1 left, 1 in flight: nothing for a third")
	assert.True(t, next.At.After(clock.Now()))
}

// TestPacerRefillNotReadFromAnAnswerThatHadCompany: an answer that comes
// when its request is the only one left in flight was still in flight with
// the others: its count, higher than the one before, is older than it, and
// shows no quota coming back before the reset.
func TestPacerRefillNotReadFromAnAnswerThatHadCompany(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(clock.Now(), 1, 1, rateLimit(clock.Now(), 10, 1, 3, 1))
	departNow(t, clock, p, 2)
	clock.Advance(10 * time.Millisecond)
	p.Accepted(clock.Now(), 1, 2, rateLimit(clock.Now(), 10, 1, 1, 1)) // counted second
	p.Accepted(clock.Now(), 1, 2, rateLimit(clock.Now(), 10, 1, 2, 1)) // counted first, alone in flight now
	// The 1 counted both: 1 is left, and then a window is waited for until
	// its reset.
	departNow(t, clock, p, 1, "the older 2 adds nothing to the 1")
	slot := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, slot.Source, "the older 2 adds nothing to the 1")
	assert.Equal(t, clock.Now().Add(time.Second), slot.At, "a window: wait for its reset, no refill read from the 2 after the 1")
}

// firstAfterReset requires p to hold the next request for a spent quota,
// advances the clock to the slot it names (the reset), and requires the
// first request after the reset to leave then.
func firstAfterReset(t *testing.T, clock *retrytest.Clock, p *retry.Pacer) {
	t.Helper()
	wait := p.Depart(clock.Now())
	require.Equal(t, retry.PaceQuota, wait.Source, "nothing left")
	clock.Advance(wait.At.Sub(clock.Now()))
	require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, "the first after the reset")
}

// departNow asks p to let n requests leave at the clock's time, and
// requires each to leave then.
func departNow(t *testing.T, clock *retrytest.Clock, p *retry.Pacer, n int, msgAndArgs ...any) {
	t.Helper()
	for range n {
		require.Equal(t, clock.Now(), p.Depart(clock.Now()).At, msgAndArgs...)
	}
}
