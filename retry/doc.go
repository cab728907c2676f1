// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Package retry decides what each attempt of an export leads to and carries
// it out: which answers are retried, after how long, on which path (the
// server's Retry-After, counted backoff, an outage or a 401 held at the
// destination's gate), at what pace, and when a payload is dropped. The
// decisions are pure (policy.go); the loop (loop.go) sends, waits on an
// injectable Clock and reports every attempt to an Observer.
//
// Its API is what a sender needs to run the loop and watch it; everything
// else is the package's own (its external tests reach that through
// export_test.go). TestPackageDocListsTheAPI holds this list to the code:
//
//   - Configure: Policy, built from BackoffConfig, RetryAfterConfig,
//     UnauthorizedConfig, OutageConfig and PacingConfig (and
//     NewDefaultBackoffConfig, NewDefaultRetryAfterConfig,
//     NewDefaultUnauthorizedConfig, NewDefaultOutageConfig,
//     NewDefaultPacingConfig); status overrides map a code to an Action.
//
//   - Run: NewLoop and Loop (RunItems, Stop, KeepInterrupted, Waiting, Gate,
//     Pacer), with a SendFunc that returns a Response for each attempt
//     (ConfigError for one that cannot leave the process), and an Outcome
//     (OutcomeKind, DropReason) for each payload.
//
//   - Share a destination: Gates (Get) holds one Gate (open, holding,
//     probing; its State says why and for how long) and one Pacer (Rate,
//     Ceiling, Quota) per destination; HoldReason says why a gate holds.
//
//   - Watch: an Observer gets each Event (EventKind): the attempt's Decision
//     (Next, Path, DelaySource), the RetryAfter it parsed (Usable, ParseResult,
//     Reference), the RateLimit it read (Binding, RateLimitPolicy,
//     RateLimitRejection, RateLimitReject, RateLimitSource), a pacing wait (PaceSource), a hold
//     that began or ended. QuotaHoldBound bounds how long RateLimit headers
//     alone may hold requests back. AttributeValues names every value of
//     these enumerations as the exporter's metrics record them.
//
//   - Classify: ClassifyStatus, ClassifyError (with the Reason… constants
//     of errors without a response); ParseRateLimit reads RateLimit headers.
//
//   - Time: Clock and RealClock (Now, After; retrytest has a fake).
//
//   - Remember and partition: a Gate's Snapshot and Watch give its Hold
//     (reason, end, failures, Version) and Restore puts a kept one back
//     after a restart; a Pacer's Kept and WatchKept give its learned pace
//     as a KeptPace (IsZero when nothing is learned), and its Restore
//     resumes a kept one. WithYield lets a run leave the loop
//     instead of waiting at a held gate (its outcome then carries
//     ErrYielded), so that a sender with a bounded pool of workers shared
//     by many partitions waits for a held one elsewhere.
//
//   - Pass a gate by hand (what Loop does; for a sender that runs its own
//     loop on a shared gate and for tests): NewGate, Gate's Acquire, which
//     gives a Pass (ErrGateDeadline when the payload's deadline comes
//     first), and Report, which says what an answer did to the gate as a
//     Transition.
package retry // import "github.com/otlphttpretry/otlphttpretry/retry"
