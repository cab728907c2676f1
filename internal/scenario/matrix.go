// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/otlphttpretry/otlphttpretry/internal/demobackend"
	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// Matrix is the name that runs every cell of the limiter matrix
// (-scenarios matrix); a cell's own name runs that cell alone.
const Matrix = "matrix"

// Cell is one cell of the limiter matrix (issue 15): a limiter in front of
// the demo backend (demobackend.ModeLimiter), and a load of Batch-span
// batches offered at Offered batches a second for For: twice the limit for
// the kinds with one. The scenario benchmark runs it through both
// exporters; retry's model runs it through one retry.Loop in virtual time.
type Cell struct {
	Name    string
	Limiter limiter.Spec
	// Batch is the spans of every request (as the receiver got them: no
	// batch processor).
	Batch int
	// Offered is the load's rate in batches a second, For how long it
	// lasts.
	Offered float64
	For     time.Duration
	// Latency is how long the backend holds an accepted request before it
	// answers (the in-flight limit's requests/s is Limit / Latency); 0
	// answers as fast as it can.
	Latency time.Duration
	// Reference names the cell whose delivery time this one's is judged
	// against (the sporadic cell's never-refusing twin); empty for none.
	Reference string
	// Timeout bounds the wait for full delivery after the load ends: what
	// is not delivered by then counts as lost.
	Timeout time.Duration
}

// cellTimeout is every cell's Timeout.
const cellTimeout = 45 * time.Second

// LimitRPS is the limit in requests a second at the cell's batch size
// (token-bytes: at BatchWireBytes); 0 for the kinds without a limit.
func (c Cell) LimitRPS() float64 {
	return c.Limiter.RequestRate(c.Batch, BatchWireBytes(c.Batch), c.Latency)
}

// Load is the cell's load: two senders, each offered half the rate.
func (c Cell) Load() Load {
	const senders = 2
	per := c.Offered / senders
	return Load{Senders: senders, Spans: c.Batch, Rate: per, Batches: max(1, int(math.Round(per*c.For.Seconds())))}
}

// Batches is how many batches the load offers.
func (c Cell) Batches() int {
	l := c.Load()
	return l.Senders * l.Batches
}

// Description says what the cell does.
func (c Cell) Description() string {
	l := c.Load()
	limit := ""
	if r := c.LimitRPS(); r > 0 {
		limit = fmt.Sprintf(" (limit %.3g requests/s)", r)
	}
	latency := ""
	if c.Latency > 0 {
		latency = fmt.Sprintf("; accepted requests answered after %s", c.Latency)
	}
	return fmt.Sprintf("%d batches of %d spans offered at %.3g/s for %s into %s%s%s",
		l.Senders*l.Batches, c.Batch, c.Offered, c.For, c.Limiter, limit, latency)
}

// Scenario is the cell as the scenario benchmark runs it.
func (c Cell) Scenario() Scenario {
	return Scenario{
		Name:        c.Name,
		Description: c.Description(),
		Backend:     demobackend.Config{Mode: demobackend.ModeLimiter, Limiter: c.Limiter, Latency: c.Latency},
		Load:        c.Load(),
		Timeout:     c.Timeout,
		Cell:        &c,
	}
}

// limited is a cell of kind at rps requests a second (the limit) and
// batches of batch spans, offered twice the limit for d.
func limited(kind limiter.Kind, hint limiter.Hint, rps float64, batch int, d time.Duration) Cell {
	s := limiter.Spec{Kind: kind, Hint: hint, Seed: 1}
	c := Cell{Batch: batch, Offered: 2 * rps, For: d, Timeout: cellTimeout}
	switch kind {
	case limiter.TokenItems:
		s.Rate = rps * float64(batch)
		s.Burst = s.Rate
	case limiter.TokenBytes:
		// As managed endpoints publish: a burst of twice the rate.
		s.Rate = rps * float64(BatchWireBytes(batch))
		s.Burst = 2 * s.Rate
	case limiter.GCRA:
		// A fifth of a second's requests at once, at least 2.
		s.Rate, s.Burst = rps, math.Max(2, math.Round(rps/5))
	case limiter.InFlight:
		panic("limited: use inFlight")
	}
	c.Limiter = s
	c.Name = fmt.Sprintf("%s/%s/%grps/%d", kind, hint, rps, batch)
	return c
}

// windowed is a fixed or sliding window of rps × window requests per window.
func windowed(kind limiter.Kind, hint limiter.Hint, window time.Duration, rps float64, batch int, d time.Duration) Cell {
	c := Cell{Batch: batch, Offered: 2 * rps, For: d, Timeout: cellTimeout}
	c.Limiter = limiter.Spec{Kind: kind, Hint: hint, Limit: int(math.Round(rps * window.Seconds())), Window: window, Seed: 1}
	c.Name = fmt.Sprintf("%s-%s/%s/%grps/%d", kind, window, hint, rps, batch)
	return c
}

// inFlight is an in-flight limit of n, each accepted request answered
// after latency: n / latency requests a second, offered twice that.
func inFlight(hint limiter.Hint, n int, latency time.Duration, batch int, d time.Duration) Cell {
	rps := float64(n) / latency.Seconds()
	return Cell{
		Name:    fmt.Sprintf("in-flight-%d/%s/%grps/%d", n, hint, rps, batch),
		Limiter: limiter.Spec{Kind: limiter.InFlight, Hint: hint, Limit: n, Seed: 1},
		Batch:   batch, Offered: 2 * rps, For: d, Latency: latency, Timeout: cellTimeout,
	}
}

// unlimitedLoad is a cell without a limit offered rps batches a second:
// refusing at random a share of them (sporadic), shedding them (shed), or
// none (unlimited).
func unlimitedLoad(kind limiter.Kind, hint limiter.Hint, share, rps float64, batch int, d time.Duration) Cell {
	name := string(kind)
	if share > 0 {
		name = fmt.Sprintf("%s-%g%%", kind, 100*share)
	}
	return Cell{
		Name:    fmt.Sprintf("%s/%s/%grps/%d", name, hint, rps, batch),
		Limiter: limiter.Spec{Kind: kind, Hint: hint, Share: share, Seed: 1},
		Batch:   batch, Offered: rps, For: d, Timeout: cellTimeout,
	}
}

// flapping is a backend without a limit, offered rps batches a second,
// that refuses everything for down of every period (limiter.Flapping),
// named after both ("flapping-6s/none/20rps/100/down2s").
func flapping(hint limiter.Hint, period, down time.Duration, rps float64, batch int, d time.Duration) Cell {
	return Cell{
		Name:    fmt.Sprintf("%s-%s/%s/%grps/%d/down%s", limiter.Flapping, period, hint, rps, batch, down),
		Limiter: limiter.Spec{Kind: limiter.Flapping, Hint: hint, Window: period, Down: down, Seed: 1},
		Batch:   batch, Offered: rps, For: d, Timeout: cellTimeout,
	}
}

// MatrixCells is the limiter matrix: every kind of limiter at least once,
// each hint, request rates from 2 to 50 a second and batches from 50 to
// 5 000 spans, at the corners that bound the space (the lowest rate with
// the largest batches, the highest with the smallest), bare 429s wherever
// a kind is hardest without a hint. The limited cells are offered twice
// their limit; the sporadic cell has its never-refusing twin as the
// reference; load shedding refuses half the requests.
func MatrixCells() []Cell {
	// Six seconds of load at twice the limit: delivered in 12 s at best,
	// so that both exporters go through every cell in the scenario
	// tool's time budget. The lowest rate and the 10 s window get longer,
	// to see enough requests and windows; the unlimited cells 10 s.
	const d = 6 * time.Second
	sporadic := unlimitedLoad(limiter.Sporadic, limiter.HintNone, 0.05, 20, 100, 10*time.Second)
	reference := unlimitedLoad(limiter.Unlimited, limiter.HintNone, 0, 20, 100, 10*time.Second)
	sporadic.Reference = reference.Name
	return []Cell{
		limited(limiter.GCRA, limiter.HintNone, 2, 5000, 10*time.Second),
		limited(limiter.GCRA, limiter.HintNone, 50, 50, d),
		limited(limiter.GCRA, limiter.HintRateLimit, 20, 200, d),
		limited(limiter.TokenItems, limiter.HintNone, 20, 50, d),
		limited(limiter.TokenBytes, limiter.HintRetryAfter, 4, 5000, d),
		windowed(limiter.FixedWindow, limiter.HintNone, time.Second, 20, 500, d),
		windowed(limiter.FixedWindow, limiter.HintNone, 10*time.Second, 5, 1000, 12*time.Second),
		windowed(limiter.SlidingWindow, limiter.HintRateLimit, time.Second, 50, 50, d),
		inFlight(limiter.HintNone, 2, 100*time.Millisecond, 500, d),
		inFlight(limiter.HintRetryAfter, 5, 250*time.Millisecond, 200, d),
		reference,
		sporadic,
		unlimitedLoad(limiter.Shed, limiter.HintNone, 0.5, 10, 200, 10*time.Second),
	}
}

// longPrefix names a long cell (LongCells).
const longPrefix = "long-"

// LongCells are the matrix's limited cells without a hint, with three
// times the load (and two minutes to deliver it): past the pacer's
// learning, they show what it does window after window, probe after
// probe. They are not in the matrix; a long cell runs by its name
// ("long-" and the cell's).
func LongCells() []Cell {
	var out []Cell
	for _, c := range MatrixCells() {
		if !c.Limiter.Kind.HasQuota() || c.Limiter.Hint != limiter.HintNone {
			continue
		}
		c.Name = longPrefix + c.Name
		c.For *= 3
		c.Timeout = 2 * time.Minute
		out = append(out, c)
	}
	return out
}

// extraPrefix names a cell of ExtraCells.
const extraPrefix = "x-"

// ExtraCells are fifteen cells between the matrix's corners that bound the
// space further: a GCRA at 5 and 10 requests a second without a hint and
// with Retry-After, the quota of issue 7 (a token bucket of 4 requests a
// second of 500 spans, for 20 s) with each hint, a sliding window without
// a hint, a 1 s fixed window at 50 requests a second; the matrix's two
// fixed windows with their windows off the clock's multiples (withOffset:
// the 10 s one 2.5 s past them, the 1 s one 300 ms); and the three cells
// with RateLimit headers with a backend that answers accepted requests
// after 20 ms (withLatency), as one across a network does, where the
// matrix's answer at once on loopback; and two backends without a limit
// that refuse everything for a few seconds of every few (flapping: 2 s of
// every 6 s, 4 s of every 15 s), with bare 429s. They are not in the matrix (the
// scenario tool's time budget): the limiter model scores them with it
// (retry's TestScore with SCORE_EXTRA), and a cell runs by its name ("x-"
// and the cell's).
func ExtraCells() []Cell {
	const d = 6 * time.Second
	x := func(c Cell) Cell {
		c.Name = extraPrefix + c.Name
		return c
	}
	return []Cell{
		x(limited(limiter.GCRA, limiter.HintNone, 10, 500, d)),
		x(limited(limiter.GCRA, limiter.HintNone, 5, 1000, 10*time.Second)),
		x(limited(limiter.GCRA, limiter.HintRetryAfter, 10, 500, d)),
		x(limited(limiter.TokenItems, limiter.HintRetryAfter, 4, 500, 20*time.Second)),
		x(limited(limiter.TokenItems, limiter.HintRateLimit, 4, 500, 20*time.Second)),
		x(limited(limiter.TokenItems, limiter.HintNone, 4, 500, 10*time.Second)),
		x(windowed(limiter.SlidingWindow, limiter.HintNone, time.Second, 10, 200, d)),
		x(windowed(limiter.FixedWindow, limiter.HintNone, time.Second, 50, 50, d)),
		x(withOffset(windowed(limiter.FixedWindow, limiter.HintNone, 10*time.Second, 5, 1000, 12*time.Second), 2500*time.Millisecond)),
		x(withOffset(windowed(limiter.FixedWindow, limiter.HintNone, time.Second, 20, 500, d), 300*time.Millisecond)),
		x(withLatency(limited(limiter.GCRA, limiter.HintRateLimit, 20, 200, d), extraLatency)),
		x(withLatency(windowed(limiter.SlidingWindow, limiter.HintRateLimit, time.Second, 50, 50, d), extraLatency)),
		x(withLatency(limited(limiter.TokenItems, limiter.HintRateLimit, 4, 500, 20*time.Second), extraLatency)),
		x(flapping(limiter.HintNone, 6*time.Second, 2*time.Second, 20, 100, 20*time.Second)),
		x(flapping(limiter.HintNone, 15*time.Second, 4*time.Second, 20, 100, 20*time.Second)),
	}
}

// extraLatency is how long the backend of the extra cells with a latency
// holds an accepted request before it answers.
const extraLatency = 20 * time.Millisecond

// withLatency is c with a backend that answers accepted requests after
// latency, named after it (".../20ms").
func withLatency(c Cell, latency time.Duration) Cell {
	c.Latency = latency
	c.Name = fmt.Sprintf("%s/%s", c.Name, latency)
	return c
}

// withOffset is c, a fixed window, with its windows starting offset past
// the clock's multiples (limiter.Spec.Offset), named after it
// (".../off2.5s"): a limiter whose clock is off from the exporter's, or
// one that starts its windows where it pleases.
func withOffset(c Cell, offset time.Duration) Cell {
	c.Limiter.Offset = offset
	c.Name = fmt.Sprintf("%s/off%s", c.Name, offset)
	return c
}

// OfferedMultiples are the loads, as multiples of the limit, that
// OfferedCells offers besides the matrix's twice the limit.
var OfferedMultiples = []float64{1.25, 4}

// OfferedCells are the matrix's and the extra cells with a limit, offered
// at each of OfferedMultiples times their limit instead of twice it, the
// same load in all (the same batches, offered for longer or shorter),
// named after the multiple (".../offered4x"). A law tuned on loads of
// twice the limit alone would be tuned on one case: a limit's burst is
// spent sooner or later, requests are in flight together or alone, a first
// cut measures more or less. They are not in the matrix: the limiter
// model scores them (retry's TestScore with SCORE_OFFERED), and a cell
// runs by its name.
func OfferedCells() []Cell {
	var out []Cell
	for _, m := range OfferedMultiples {
		for _, c := range slices.Concat(MatrixCells(), ExtraCells()) {
			if !c.Limiter.Kind.HasQuota() {
				continue
			}
			out = append(out, offeredAt(c, m))
		}
	}
	return out
}

// offeredAt is c, offered twice its limit, offered at m times it, the
// same batches over 2/m of the time.
func offeredAt(c Cell, m float64) Cell {
	c.Offered *= m / 2
	c.For = time.Duration(float64(c.For) * 2 / m)
	c.Name = fmt.Sprintf("%s/offered%gx", c.Name, m)
	return c
}

// CellByName returns the cell of that name: the matrix's, a long one, an
// extra one, or one offered at another multiple of its limit.
func CellByName(name string) (Cell, bool) {
	for _, c := range slices.Concat(MatrixCells(), LongCells(), ExtraCells(), OfferedCells()) {
		if c.Name == name {
			return c, true
		}
	}
	return Cell{}, false
}

var wireBytes sync.Map // batch spans → int

// BatchWireBytes is the size of a batch of spans, as the load builds it,
// once gzipped (the standard library's default level; the exporters'
// own gzip differs by a few per cent), to the nearest 100 bytes (the
// spans' timestamps move it by a few bytes from run to run): what a bytes
// bucket counts of one request. The first batch of instance 0 stands for
// all.
func BatchWireBytes(spans int) int {
	if v, ok := wireBytes.Load(spans); ok {
		return v.(int)
	}
	body := NewBodies().Get(0, 0, spans)
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	_, _ = w.Write(body)
	_ = w.Close()
	n := max(100, int(math.Round(float64(b.Len())/100)*100))
	wireBytes.Store(spans, n)
	return n
}
