// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

// Command monitoringkit renders the operator's kit of the otlp_http_retry
// exporter from internal/monitoring:
//
//	monitoringkit rules [-set name=value]...  the Prometheus rules, to stdout
//	monitoringkit dashboard                   the Grafana dashboard JSON, to stdout
//	monitoringkit write [-dir monitoring]     both shipped files, with the default thresholds
//	monitoringkit plot -in run.json -out dashboard.png
//	                                          the dashboard's panels of a stored run, as a PNG
//	monitoringkit table -in run.json          the stored run's alert timings, for docs/monitoring.md
//
// `make monitoring` runs write and plot for the repository's files.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/otlphttpretry/otlphttpretry/internal/monitoring"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "monitoringkit:", err)
		os.Exit(2)
	}
}

const usage = `usage:
  monitoringkit rules [-set name=value]...   Prometheus rules to stdout
  monitoringkit dashboard                    Grafana dashboard JSON to stdout
  monitoringkit write [-dir monitoring]      both files with the default thresholds
  monitoringkit plot -in run.json -out dashboard.png
  monitoringkit table -in run.json
thresholds: ` + "%s"

// setFlags collects repeated -set name=value.
type setFlags []string

func (s *setFlags) String() string     { return strings.Join(*s, ",") }
func (s *setFlags) Set(v string) error { *s = append(*s, v); return nil }

func run(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf(usage, strings.Join(monitoring.Names(), ", "))
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var sets setFlags
	dir := fs.String("dir", "monitoring", "directory of the shipped files (write)")
	in := fs.String("in", "", "stored run (plot)")
	out := fs.String("out", "", "PNG to write (plot)")
	fs.Var(&sets, "set", "threshold as name=value (rules); repeatable")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch args[0] {
	case "rules":
		th := monitoring.Defaults()
		for _, s := range sets {
			name, value, ok := strings.Cut(s, "=")
			if !ok {
				return fmt.Errorf("-set %q: write name=value, e.g. -set outage_for=10m", s)
			}
			if err := th.Set(name, value); err != nil {
				return err
			}
		}
		b, err := monitoring.Rules(th)
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "dashboard":
		b, err := monitoring.Dashboard()
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "write":
		return monitoring.WriteShipped(*dir)
	case "table":
		if *in == "" {
			return errors.New("table needs -in <stored run JSON>")
		}
		rec, err := monitoring.ReadRun(*in)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "From the stored run [`docs/monitoring-run.json`](monitoring-run.json) (%s):\n\n%s\n%s", rec.Stamp(), monitoring.AlertTable(rec), monitoring.CoverageLine(rec))
		return err
	case "plot":
		if *in == "" || *out == "" {
			return errors.New("plot needs -in <stored run JSON> and -out <PNG>")
		}
		rec, err := monitoring.ReadRun(*in)
		if err != nil {
			return err
		}
		return monitoring.PlotRun(rec, filepath.Clean(*out))
	}
	return fmt.Errorf(usage, strings.Join(monitoring.Names(), ", "))
}
