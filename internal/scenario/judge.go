// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package scenario

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/limiter"
)

// The limiter matrix's goals (issue 15).
const (
	// GoalRefused is the most of the requests a limited cell may have
	// refused, and GoalRefusedRateLimit the most in a cell whose limiter
	// sends RateLimit fields.
	GoalRefused          = 0.05
	GoalRefusedRateLimit = 0.02
	// GoalUsed is the least share of the limit a limited cell must use,
	// from the first request to the last delivery (limiter.Spec.Used).
	GoalUsed = 0.90
	// GoalVsCore is how much later than the core exporter a cell may be
	// delivered (ratio of delivery times), and GoalVsReference how much
	// later than its never-refusing twin the sporadic cell may be.
	GoalVsCore      = 1.05
	GoalVsReference = 1.10
)

// CellFigures are what the goals are judged on: one exporter in one cell.
type CellFigures struct {
	// Requests is what reached the backend; Refused the limiter's
	// refusals (429, or 503 when it sheds).
	Requests, Refused int
	// Used is the share of the limit used (nil for the kinds without one,
	// or when nothing was accepted).
	Used *float64
	// DeliverySeconds is from the load's first batch to full delivery;
	// nil when some spans were never delivered.
	DeliverySeconds *float64
	// Spans is the load, Lost what of it was not delivered (dropped, or
	// still undelivered at the cell's timeout).
	Spans, Lost int
	// Dropped is what of Lost the exporter gave up on (nil when unknown:
	// all of Lost counts as dropped); the rest was late.
	Dropped *int
}

// dropped and late split Lost.
func (f CellFigures) dropped() int {
	if f.Dropped == nil {
		return f.Lost
	}
	return min(*f.Dropped, f.Lost)
}

func (f CellFigures) late() int { return f.Lost - f.dropped() }

// RefusedShare is Refused over Requests (0 without requests).
func (f CellFigures) RefusedShare() float64 {
	if f.Requests == 0 {
		return 0
	}
	return float64(f.Refused) / float64(f.Requests)
}

// Check is one goal in one cell.
type Check struct {
	// Goal says what is asked ("refused ≤ 5 %").
	Goal string `json:"goal"`
	// Got says what was measured.
	Got string `json:"got"`
	Met bool   `json:"met"`
	// Ratio is how far the figure is from the goal, 1 at the goal and
	// above 1 when it is missed (measured over goal for a most, goal over
	// measured for a least); +Inf (null in JSON) for spans lost or late.
	Ratio Ratio `json:"ratio"`
}

// Ratio is a figure over its goal; JSON has no infinity, so +Inf (and
// NaN) are written as null.
type Ratio float64

// MarshalJSON writes a finite ratio as a number, any other as null.
func (r Ratio) MarshalJSON() ([]byte, error) {
	if math.IsInf(float64(r), 0) || math.IsNaN(float64(r)) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(r))
}

// Verdict is every goal of one exporter in one cell.
type Verdict struct {
	Cell     string  `json:"cell"`
	Exporter string  `json:"exporter"`
	Run      int     `json:"run,omitempty"`
	Checks   []Check `json:"checks"`
	// Lost is the share of the load the exporter dropped, Late the share
	// not delivered at the cell's timeout but not dropped; Worst the
	// largest Ratio of the checks.
	Lost  float64 `json:"lost_share"`
	Late  float64 `json:"late_share"`
	Worst Ratio   `json:"worst_ratio"`
}

// Met reports whether every goal is met.
func (v Verdict) Met() bool {
	for _, c := range v.Checks {
		if !c.Met {
			return false
		}
	}
	return true
}

// Worse orders verdicts from the worst: the larger share lost first (data
// lost outweighs any rate), then the larger share late, then the larger
// Worst ratio.
func Worse(a, b Verdict) bool {
	switch {
	case a.Lost != b.Lost:
		return a.Lost > b.Lost
	case a.Late != b.Late:
		return a.Late > b.Late
	}
	return a.Worst > b.Worst
}

// Missed lists the checks not met, for a headline.
func (v Verdict) Missed() string {
	var out []string
	for _, c := range v.Checks {
		if !c.Met {
			out = append(out, c.Got+" (goal "+c.Goal+")")
		}
	}
	return strings.Join(out, "; ")
}

// RefusedGoal is the most of its requests a cell with a limit may see
// refused: GoalRefused, or GoalRefusedRateLimit when its limiter answers
// with RateLimit fields.
func (c Cell) RefusedGoal() float64 {
	if c.Limiter.Hint == limiter.HintRateLimit {
		return GoalRefusedRateLimit
	}
	return GoalRefused
}

// Judge checks one exporter's figures in cell c against the goals:
// nothing dropped, and everything delivered within the cell's timeout;
// for a cell with a limit at most GoalRefused of the
// requests refused (GoalRefusedRateLimit with RateLimit fields) and at
// least GoalUsed of the limit used; delivered no later than the core
// exporter within GoalVsCore (when core's figures of the same cell are
// given, and this is not core); the sporadic cell delivered within
// GoalVsReference of its never-refusing twin (ref, the same exporter's).
func Judge(c Cell, exporter string, f CellFigures, core, ref *CellFigures) Verdict {
	v := Verdict{Cell: c.Name, Exporter: exporter}
	add := func(goal, got string, ratio float64) {
		v.Checks = append(v.Checks, Check{Goal: goal, Got: got, Met: ratio <= 1, Ratio: Ratio(ratio)})
		if ratio > float64(v.Worst) || math.IsNaN(ratio) {
			v.Worst = Ratio(ratio)
		}
	}
	if f.Spans > 0 {
		v.Lost = float64(f.dropped()) / float64(f.Spans)
		v.Late = float64(f.late()) / float64(f.Spans)
	}
	inf := func(n int) float64 {
		if n > 0 {
			return math.Inf(1)
		}
		return 0
	}
	add("nothing lost", fmt.Sprintf("%d of %d spans dropped", f.dropped(), f.Spans), inf(f.dropped()))
	add("all delivered within the cell's timeout", fmt.Sprintf("%d of %d spans not delivered in time", f.late(), f.Spans), inf(f.late()))
	if c.Limiter.Kind.HasQuota() {
		goal := c.RefusedGoal()
		add(fmt.Sprintf("refused ≤ %g %%", 100*goal), fmt.Sprintf("%.1f %% refused", 100*f.RefusedShare()), f.RefusedShare()/goal)
		if f.Used != nil {
			add(fmt.Sprintf("used ≥ %g %%", 100*GoalUsed), fmt.Sprintf("%.1f %% of the limit used", 100**f.Used), GoalUsed/math.Max(*f.Used, 1e-9))
		}
	}
	later := func(goal string, limit float64, other *CellFigures, whom string) {
		if other == nil || other.DeliverySeconds == nil {
			return
		}
		if f.DeliverySeconds == nil {
			add(goal, "not all delivered ("+whom+": "+fmt.Sprintf("%.1f s", *other.DeliverySeconds)+")", math.Inf(1))
			return
		}
		r := *f.DeliverySeconds / *other.DeliverySeconds
		add(goal, fmt.Sprintf("delivered in %.1f s, %.2f × %s's %.1f s", *f.DeliverySeconds, r, whom, *other.DeliverySeconds), r/limit)
	}
	if exporter != string(Core) {
		later(fmt.Sprintf("delivered ≤ %.2f × core's time", GoalVsCore), GoalVsCore, core, "core")
	}
	if c.Reference != "" {
		later(fmt.Sprintf("delivered ≤ %.2f × the never-refusing backend's time", GoalVsReference), GoalVsReference, ref, "never refusing")
	}
	return v
}
