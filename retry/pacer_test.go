package retry_test

import (
	"math"
	"net/http"
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
		slot, _ := p.Reserve(clock.Now(), size)
		if slot.After(clock.Now()) {
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
			p.Accepted(clock.Now(), size, rl)
			if counted {
				items += size
			}
			offer = offer.Add(time.Duration(float64(size) / (2 * b.rate) * float64(time.Second)))
			continue
		}
		p.Refused(clock.Now(), size, rl)
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
	slot, source := p.Reserve(t0, 100)
	assert.Equal(t, t0, slot)
	assert.Equal(t, retry.PaceNone, source)

	for i := range 10 {
		p.Accepted(t0.Add(time.Duration(i)*100*time.Millisecond), 100, retry.RateLimit{})
	}
	p.Refused(t0.Add(time.Second), 100, retry.RateLimit{})
	rate := p.Rate()
	assert.InDelta(t, 0.9*1000/2, rate, 1, "90% of what was accepted over the last two seconds")

	// Paced: two requests in a row leave items/rate apart.
	now := t0.Add(time.Second)
	first, _ := p.Reserve(now, 100)
	second, source := p.Reserve(now, 100)
	assert.Equal(t, retry.PaceRate, source)
	assert.Equal(t, time.Duration(100/rate*float64(time.Second)), second.Sub(first))

	clock.Advance(time.Minute + time.Second)
	assert.Zero(t, p.Rate(), "unlimited again a quiet period after the last refusal")
	slot, source = p.Reserve(clock.Now(), 100)
	assert.Equal(t, clock.Now(), slot)
	assert.Equal(t, retry.PaceNone, source)
}

func TestPacerNeverWaitsLongerThanTheCap(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 10*time.Second)
	p.Accepted(t0, 1, retry.RateLimit{})
	p.Refused(t0, 1, retry.RateLimit{}) // rate: one item a second
	var last time.Time
	for range 100 {
		last, _ = p.Reserve(t0, 1)
	}
	assert.Equal(t, t0.Add(10*time.Second), last, "capped at retry_after::max")
}

func TestPacerWaitsForTheQuotaReset(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	h := http.Header{}
	h.Set("RateLimit-Policy", `"default";q=10;w=60`)
	h.Set("RateLimit", `"default";r=2;t=30`)
	p.Accepted(t0, 1, retry.ParseRateLimit(h, t0))

	first, _ := p.Reserve(t0, 1)
	second, _ := p.Reserve(t0, 1)
	assert.Equal(t, t0, first, "two left")
	assert.Equal(t, t0, second)
	third, source := p.Reserve(t0, 1)
	assert.Equal(t, retry.PaceQuota, source)
	assert.Equal(t, t0.Add(30*time.Second), third, "the quota is spent: wait for its reset")

	off := retry.NewDefaultPacingConfig()
	off.RateLimitHeaders = false
	q := retry.NewPacer(clock, off, 5*time.Minute)
	q.Accepted(t0, 1, retry.ParseRateLimit(h, t0))
	for range 5 {
		slot, _ := q.Reserve(t0, 1)
		assert.Equal(t, t0, slot, "headers not read when ratelimit_headers is off")
	}
}

// TestPacerConcurrentSenders: many senders reserving and reporting at once
// keep the rate finite and positive (run with -race).
func TestPacerConcurrentSenders(t *testing.T) {
	clock := retrytest.NewClock(t0)
	p := retry.NewPacer(clock, retry.NewDefaultPacingConfig(), 5*time.Minute)
	p.Accepted(t0, 1000, retry.RateLimit{})
	p.Refused(t0, 10, retry.RateLimit{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				now := t0.Add(time.Duration(i) * 10 * time.Millisecond)
				p.Reserve(now, 10)
				if (i+g)%7 == 0 {
					p.Refused(now, 10, retry.RateLimit{})
				} else {
					p.Accepted(now, 10, retry.RateLimit{})
				}
			}
		}()
	}
	wg.Wait()
	rate := p.Rate()
	require.False(t, math.IsNaN(rate) || math.IsInf(rate, 0))
	assert.Positive(t, rate)
}
