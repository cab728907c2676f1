// Copyright The otlphttpretry Authors
// SPDX-License-Identifier: Apache-2.0

package monitoring

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// plotColumns is how many panels the PNG puts side by side.
const plotColumns = 3

// palette is Grafana's classic series colours.
var palette = []color.Color{
	color.RGBA{R: 0x73, G: 0xbf, B: 0x69, A: 0xff},
	color.RGBA{R: 0xf2, G: 0xcc, B: 0x0c, A: 0xff},
	color.RGBA{R: 0x8a, G: 0xb8, B: 0xff, A: 0xff},
	color.RGBA{R: 0xff, G: 0x78, B: 0x0a, A: 0xff},
	color.RGBA{R: 0xf2, G: 0x49, B: 0x5c, A: 0xff},
	color.RGBA{R: 0x57, G: 0x94, B: 0xf2, A: 0xff},
	color.RGBA{R: 0xb8, G: 0x77, B: 0xd9, A: 0xff},
	color.RGBA{R: 0x70, G: 0x5d, B: 0xa0, A: 0xff},
}

// PlotRun draws every panel of the stored run on one PNG, in the
// dashboard's order, plotColumns to a row, with the run's events as dashed
// vertical lines. A panel without data says so, as Grafana does.
func PlotRun(r Run, path string) error {
	if len(r.Panels) == 0 {
		return fmt.Errorf("the stored run has no panel data to plot")
	}
	rows := (len(r.Panels) + plotColumns - 1) / plotColumns
	grid := make([][]*plot.Plot, rows)
	for i := range grid {
		grid[i] = make([]*plot.Plot, plotColumns)
	}
	end := 0.0
	for _, p := range r.Panels {
		for _, s := range p.Series {
			for _, pt := range s.Points {
				end = max(end, pt[0])
			}
		}
	}
	for i, p := range r.Panels {
		pl, err := panelPlot(p, r.Events, end)
		if err != nil {
			return fmt.Errorf("panel %q: %w", p.Title, err)
		}
		grid[i/plotColumns][i%plotColumns] = pl
	}
	for i := len(r.Panels); i < rows*plotColumns; i++ {
		grid[i/plotColumns][i%plotColumns] = plot.New()
		grid[i/plotColumns][i%plotColumns].HideAxes()
	}
	w, h := 5*vg.Inch*plotColumns, 3*vg.Inch*vg.Length(rows)
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(96))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: rows, Cols: plotColumns, PadX: vg.Millimeter * 2, PadY: vg.Millimeter * 2,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 2}
	canvases := plot.Align(grid, tiles, dc)
	for i := range grid {
		for j := range grid[i] {
			grid[i][j].Draw(canvases[i][j])
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func panelPlot(p PanelSeries, events []Event, end float64) (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font.Size = vg.Points(11)
	pl.X.Label.Text = "seconds since the scenario started"
	pl.X.Min, pl.X.Max = 0, max(end, 1)
	pl.Y.Min = 0
	pl.Y.Label.Text = unitLabel(p.Unit)
	pl.Legend.Top = true
	pl.Legend.TextStyle.Font.Size = vg.Points(7)
	pl.Legend.Padding = vg.Points(1)
	pl.Add(plotter.NewGrid())
	ymax := 0.0
	for i, s := range p.Series {
		pts := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			pts = append(pts, plotter.XY{X: pt[0], Y: pt[1]})
			ymax = max(ymax, pt[1])
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = palette[i%len(palette)]
		l.Width = vg.Points(1.5)
		pl.Add(l)
		if i < 6 {
			pl.Legend.Add(s.Legend, l)
		}
	}
	if ymax == 0 {
		ymax = 1
	}
	pl.Y.Max = ymax * 1.1
	if len(p.Series) == 0 {
		pl.Title.Text += " (no data)"
	}
	for _, e := range events {
		l, err := plotter.NewLine(plotter.XYs{{X: e.At, Y: 0}, {X: e.At, Y: pl.Y.Max}})
		if err != nil {
			return nil, err
		}
		l.Color = color.Gray{Y: 110}
		l.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		pl.Add(l)
	}
	return pl, nil
}

func unitLabel(unit string) string {
	switch unit {
	case "s":
		return "seconds"
	case "percentunit":
		return "share (0-1)"
	case "reqps":
		return "requests/s"
	}
	return ""
}
