// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

//go:build e2e

package e2e

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"testing"

	"go.uber.org/goleak"
)

// e2eParallel is how many tests run at once unless -parallel is given. The
// scenarios spend nearly all their time waiting on the backend's script
// and the exporter's timers, not on the CPU, so they run side by side even
// where -parallel defaults to GOMAXPROCS (2 on a small CI machine), which
// would run them two at a time and stretch the suite past three minutes.
const e2eParallel = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(e2eParallel)); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	// No goroutine of the tests (demo backends, collector process waits,
	// scrapes) outlives them: the same check as goleak.VerifyTestMain,
	// after the -parallel default above.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}
