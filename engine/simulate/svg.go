package simulate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/template"
	"time"
)

// The SVG chart's geometry, in pixels. A chart is a title, a legend, then a
// panel per run: its heading, a lane per node and a time axis below them.
const (
	svgColumns     = 800 // time slices across the plot
	svgPlotLeft    = 150 // node names and max loads go left of the plot
	svgScaleWidth  = 44  // the load scale goes right of it
	svgTitleHeight = 30
	svgLegendTop   = 38 // the legend's row
	svgPanelsTop   = 64
	svgHeading     = 26 // a panel's heading, above its lanes
	svgLaneHeight  = 40 // one node's lane: svgLaneFill of plot and a gap
	svgLaneFill    = 34
	svgAxisHeight  = 36 // the time axis under the lanes: line, ticks, labels
	svgGap         = 14 // between panels
	svgMaxTicks    = 10
)

// svgTitle heads every chart.
const svgTitle = "jobctl simulate: each node's load over simulated time"

// svgChart is the data the SVG template draws.
type svgChart struct {
	Width, Height int
	Title         string
	PlotLeft      int
	PlotRight     int
	Panels        []svgPanel
}

type svgPanel struct {
	Y       int // top of the panel
	Heading string
	Lanes   []svgLane
	AxisY   int // the time axis line, from the panel's top
	Ticks   []svgTick
}

type svgLane struct {
	Y       int    // top of the lane's plot, from the panel's top
	Name    string // node name
	MaxLoad string // "max 4"
	Path    string // the filled load-factor area
}

type svgTick struct {
	X     int
	Label string
}

var svgTemplate = template.Must(template.New("svg").Funcs(template.FuncMap{
	"add": func(a, b int) int { return a + b },
	"esc": escapeXML,
}).Parse(`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<text x="8" y="` + fmt.Sprint(svgTitleHeight-8) + `" font-size="17" font-weight="bold">{{esc .Title}}</text>
<g id="legend" transform="translate({{.PlotLeft}} ` + fmt.Sprint(svgLegendTop) + `)">
<rect x="0" y="0" width="14" height="14" fill="#3b7dd8"/>
<text x="20" y="12">load, as a share of the node's max load (lane full: 100%)</text>
<rect x="380" y="0" width="14" height="14" fill="#e8e8e8" stroke="#bbbbbb"/>
<text x="400" y="12">room left</text>
<line x1="480" y1="7" x2="500" y2="7" stroke="#999999" stroke-dasharray="3,3"/>
<text x="506" y="12">50% of max load</text>
</g>
{{- range .Panels}}
<g transform="translate(0 {{.Y}})">
<text x="8" y="17" font-size="14" font-weight="bold">{{esc .Heading}}</text>
{{- range .Lanes}}
<text x="8" y="{{add .Y 15}}">{{esc .Name}}</text>
<text x="8" y="{{add .Y 29}}" font-size="10" fill="#555555">{{esc .MaxLoad}}</text>
<rect x="{{$.PlotLeft}}" y="{{.Y}}" width="` + fmt.Sprint(svgColumns) + `" height="` + fmt.Sprint(svgLaneFill) + `" fill="#e8e8e8"/>
<path d="{{.Path}}" fill="#3b7dd8"/>
<line x1="{{$.PlotLeft}}" y1="{{add .Y ` + fmt.Sprint(svgLaneFill/2) + `}}" x2="{{$.PlotRight}}" y2="{{add .Y ` + fmt.Sprint(svgLaneFill/2) + `}}" stroke="#999999" stroke-dasharray="3,3" stroke-width="0.8"/>
<line x1="{{$.PlotRight}}" y1="{{.Y}}" x2="{{$.PlotRight}}" y2="{{add .Y ` + fmt.Sprint(svgLaneFill) + `}}" stroke="#444444"/>
<text x="{{add $.PlotRight 4}}" y="{{add .Y 9}}" font-size="9">100%</text>
<text x="{{add $.PlotRight 4}}" y="{{add .Y ` + fmt.Sprint(svgLaneFill/2+3) + `}}" font-size="9">50%</text>
<text x="{{add $.PlotRight 4}}" y="{{add .Y ` + fmt.Sprint(svgLaneFill) + `}}" font-size="9">0</text>
{{- end}}
<g class="time-axis">
<line x1="{{$.PlotLeft}}" y1="{{.AxisY}}" x2="{{$.PlotRight}}" y2="{{.AxisY}}" stroke="#222222" stroke-width="1.5"/>
{{- $axis := .AxisY}}
{{- range .Ticks}}
<line x1="{{.X}}" y1="{{$axis}}" x2="{{.X}}" y2="{{add $axis 6}}" stroke="#222222"/>
<text x="{{.X}}" y="{{add $axis 18}}" font-size="10" text-anchor="middle">{{esc .Label}}</text>
{{- end}}
<text x="{{$.PlotRight}}" y="{{add .AxisY 32}}" font-size="10" text-anchor="end" fill="#555555">simulated time since the start</text>
</g>
</g>
{{- end}}
</svg>
`))

// WriteSVG draws the timelines of the runs as one SVG image: a title and a
// legend, then a panel per run with a lane per node, each filled to the
// node's load factor over time (a load above the node's max load, an
// oversized job alone, fills it), a load scale beside each lane and a time
// axis below them, the same for every run.
func WriteSVG(w io.Writer, results []*Result) error {
	chart := svgChart{
		Width: svgPlotLeft + svgColumns + svgScaleWidth, Title: svgTitle,
		PlotLeft: svgPlotLeft, PlotRight: svgPlotLeft + svgColumns,
	}
	// Every panel spans the longest run, so the runs compare at a glance.
	var end time.Duration
	for _, r := range results {
		if r.Timeline != nil {
			end = max(end, r.Timeline.End)
		}
	}
	y := svgPanelsTop
	for _, r := range results {
		t := r.Timeline
		if t == nil {
			continue
		}
		p := svgPanel{Y: y, Heading: fmt.Sprintf("%s: %d %s, the last job done at %s", r.Selector, len(t.Nodes),
			pluralNodes(len(t.Nodes)), formatSpan(t.End))}
		for i, n := range t.Nodes {
			top := svgHeading + i*svgLaneHeight
			p.Lanes = append(p.Lanes, svgLane{Y: top, Name: n.Name, MaxLoad: "max load " + formatLoad(n.MaxLoad),
				Path: lanePath(n.Buckets(end, svgColumns), top)})
		}
		p.AxisY = svgHeading + len(t.Nodes)*svgLaneHeight
		for _, at := range axisTicks(end, svgMaxTicks) {
			p.Ticks = append(p.Ticks, svgTick{X: svgPlotLeft + timeX(at, end), Label: axisLabel(at)})
		}
		chart.Panels = append(chart.Panels, p)
		y += p.AxisY + svgAxisHeight + svgGap
	}
	chart.Height = y
	return svgTemplate.Execute(w, chart)
}

func pluralNodes(n int) string {
	if n == 1 {
		return "node"
	}
	return "nodes"
}

// formatLoad prints a load without noise: 4, 0.5, 2.25.
func formatLoad(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// timeX is where a point in time falls on the plot, from its left edge.
func timeX(at, end time.Duration) int {
	if end <= 0 {
		return 0
	}
	return int(int64(svgColumns) * int64(at) / int64(end))
}

// tickSteps are the spans between time axis ticks, smallest first: round
// numbers of the units a reader counts in.
var tickSteps = []time.Duration{
	time.Millisecond, 2 * time.Millisecond, 5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond,
	50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond,
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

// axisTicks are the times [0, end] is marked at: 0 and every step after
// it, the step the smallest of tickSteps that needs no more than max
// ticks after 0 (whole days beyond a day).
func axisTicks(end time.Duration, max int) []time.Duration {
	ticks := []time.Duration{0}
	if end <= 0 {
		return ticks
	}
	step := 24 * time.Hour * time.Duration(int64(end)/int64(24*time.Hour)/int64(max)+1)
	for _, s := range tickSteps {
		if int64(end/s) <= int64(max) {
			step = s
			break
		}
	}
	for at := step; at <= end; at += step {
		ticks = append(ticks, at)
	}
	return ticks
}

// axisLabel names a tick briefly: 0, 500ms, 2s, 1m30s, 2h.
func axisLabel(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	s := d.String()
	for _, zero := range []string{"m0s", "h0m"} {
		if strings.HasSuffix(s, zero) {
			s = strings.TrimSuffix(s, zero[1:])
		}
	}
	return s
}

// escapeXML keeps a node name from breaking the markup.
func escapeXML(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// lanePath outlines the area under a lane's load factors, one column per
// slice; a full node fills the lane.
func lanePath(factors []float64, top int) string {
	height := float64(svgLaneFill)
	base := float64(top) + height
	var b strings.Builder
	fmt.Fprintf(&b, "M%d %g", svgPlotLeft, base)
	for _, f := range factors {
		fmt.Fprintf(&b, "V%.1fh1", base-min(max(f, 0), 1)*height)
	}
	b.WriteString("V" + fmt.Sprint(base) + "Z")
	return b.String()
}
