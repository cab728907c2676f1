// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"testing"
)

func TestParseLine(t *testing.T) {
	r, ok := parseLine("BenchmarkCompress/type=gzip/impl=stdlib-2   	    3436	    349033 ns/op	        15.31 ratio	  55.99 MB/s	  1024 B/op	  12 allocs/op")
	if !ok {
		t.Fatal("a result line was not read")
	}
	want := map[string]float64{"sec/op": 349033e-9, "ratio": 15.31, "B/s": 55.99e6, "B/op": 1024, "allocs/op": 12}
	if r.Name != "BenchmarkCompress/type=gzip/impl=stdlib-2" || r.Iterations != 3436 || len(r.Metrics) != len(want) {
		t.Fatalf("%+v", r)
	}
	for k, v := range want {
		if got := r.Metrics[k]; got < v*(1-1e-12) || got > v*(1+1e-12) {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	for _, line := range []string{"goos: linux", "PASS", "ok  	github.com/x	12.3s", "BenchmarkX-2 --- FAIL", "BenchmarkX-2 12 abc ns/op"} {
		if _, ok := parseLine(line); ok {
			t.Errorf("%q read as a result", line)
		}
	}
}
