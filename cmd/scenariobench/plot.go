// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"image/color"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/otlphttpretry/otlphttpretry/internal/scenario"
)

// series is one exporter's requests through a window.
type series struct {
	name              string
	arrivals          []time.Time
	origin, windowEnd time.Time
}

// binWidth is the plot's time resolution; rates are per second.
const binWidth = 500 * time.Millisecond

// plotRates draws the backend's requests per second of each series on the
// same axes, in seconds since each load's start, with the window's end as
// a dashed line, into a PNG at path.
func plotRates(path, title string, all []series) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "seconds since the load started"
	p.Y.Label.Text = "requests per second at the backend (0.5 s bins)"
	p.Legend.Top = true
	colors := []color.Color{color.RGBA{R: 200, G: 40, B: 40, A: 255}, color.RGBA{R: 30, G: 90, B: 200, A: 255}}
	ymax := 1.0
	for i, s := range all {
		end := s.origin
		for _, t := range s.arrivals {
			if t.After(end) {
				end = t
			}
		}
		rates := scenario.Rates(s.arrivals, s.origin, end.Add(binWidth), binWidth)
		pts := make(plotter.XYs, len(rates))
		for j, r := range rates {
			pts[j].X = (time.Duration(j)*binWidth + binWidth/2).Seconds()
			pts[j].Y = r
			ymax = max(ymax, r)
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return err
		}
		l.Color = colors[i%len(colors)]
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	if len(all) > 0 && !all[0].windowEnd.IsZero() {
		x := all[0].windowEnd.Sub(all[0].origin).Seconds()
		w, err := plotter.NewLine(plotter.XYs{{X: x, Y: 0}, {X: x, Y: ymax}})
		if err != nil {
			return err
		}
		w.Color = color.Gray{Y: 90}
		w.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(w)
		p.Legend.Add("window ends", w)
	}
	p.Add(plotter.NewGrid())
	p.Y.Min = 0
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.Legend.Padding = vg.Points(2)
	return p.Save(8*vg.Inch, 4*vg.Inch, path)
}
