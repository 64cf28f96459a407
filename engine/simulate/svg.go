package simulate

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/template"
)

// The SVG chart's geometry, in pixels.
const (
	svgColumns    = 800 // time slices across the chart
	svgLabelWidth = 140
	svgLaneHeight = 22 // one node's lane
	svgTitle      = 28
	svgGap        = 16
)

// svgChart is the data the SVG template draws: one panel per run.
type svgChart struct {
	Width, Height int
	Panels        []svgPanel
}

type svgPanel struct {
	Y     int
	Title string
	Lanes []svgLane
}

type svgLane struct {
	Y    int    // top of the lane
	Name string // node name
	Path string // the filled load-factor area
}

var svgTemplate = template.Must(template.New("svg").Funcs(template.FuncMap{"add": func(a, b int) int { return a + b }, "esc": escapeXML}).Parse(
	`<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
{{- range .Panels}}
<g transform="translate(0 {{.Y}})">
<text x="4" y="18" font-size="14" font-weight="bold">{{esc .Title}}</text>
{{- range .Lanes}}
<text x="4" y="{{add .Y 15}}">{{esc .Name}}</text>
<rect x="` + fmt.Sprint(svgLabelWidth) + `" y="{{.Y}}" width="` + fmt.Sprint(svgColumns) + `" height="` + fmt.Sprint(svgLaneHeight-2) + `" fill="#f2f2f2"/>
<path d="{{.Path}}" fill="#3b7dd8"/>
{{- end}}
</g>
{{- end}}
</svg>
`))

// WriteSVG draws the timelines of the runs as one SVG image: a panel per
// run, a lane per node, the lane filled to the node's load factor over time.
func WriteSVG(w io.Writer, results []*Result) error {
	chart := svgChart{Width: svgLabelWidth + svgColumns + 10}
	y := 4
	for _, r := range results {
		t := r.Timeline
		if t == nil {
			continue
		}
		p := svgPanel{Y: y, Title: fmt.Sprintf("%s: load factor per node over %s", r.Selector, formatSpan(t.End))}
		for i, n := range t.Nodes {
			top := svgTitle + i*svgLaneHeight
			p.Lanes = append(p.Lanes, svgLane{Y: top, Name: n.Name, Path: lanePath(n.Buckets(t.End, svgColumns), top)})
		}
		chart.Panels = append(chart.Panels, p)
		y += svgTitle + len(t.Nodes)*svgLaneHeight + svgGap
	}
	chart.Height = y
	return svgTemplate.Execute(w, chart)
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
	height := float64(svgLaneHeight - 2)
	base := float64(top) + height
	var b strings.Builder
	fmt.Fprintf(&b, "M%d %g", svgLabelWidth, base)
	for _, f := range factors {
		fmt.Fprintf(&b, "V%.1fh1", base-min(max(f, 0), 1)*height)
	}
	b.WriteString("V" + fmt.Sprint(base) + "Z")
	return b.String()
}
