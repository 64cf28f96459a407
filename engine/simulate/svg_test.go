package simulate

import (
	"encoding/xml"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestAxisTicks(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		end  time.Duration
		want []string
	}{
		{0, []string{"0"}},
		{15050 * time.Millisecond, []string{"0", "2s", "4s", "6s", "8s", "10s", "12s", "14s"}},
		{10 * time.Second, []string{"0", "1s", "2s", "3s", "4s", "5s", "6s", "7s", "8s", "9s", "10s"}},
		{90 * time.Minute, []string{"0", "10m", "20m", "30m", "40m", "50m", "1h", "1h10m", "1h20m", "1h30m"}},
		{5 * time.Hour, []string{"0", "30m", "1h", "1h30m", "2h", "2h30m", "3h", "3h30m", "4h", "4h30m", "5h"}},
		{7 * time.Hour, []string{"0", "1h", "2h", "3h", "4h", "5h", "6h", "7h"}},
		{800 * time.Millisecond, []string{"0", "100ms", "200ms", "300ms", "400ms", "500ms", "600ms", "700ms", "800ms"}},
		{30 * 24 * time.Hour, []string{"0", "96h", "192h", "288h", "384h", "480h", "576h", "672h"}},
	} {
		var got []string
		for _, at := range axisTicks(tc.end, svgMaxTicks) {
			got = append(got, axisLabel(at))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ticks over %s: %q; want %q", tc.end, got, tc.want)
		}
	}
}

// TestSVGRendersToPNG renders the chart with librsvg, as a browser or an
// image viewer would, and looks at the pixels: the title, the legend, each
// lane filled to its node's load, the load scale beside it and the time
// axis below.
func TestSVGRendersToPNG(t *testing.T) {
	t.Parallel()
	rsvg, err := exec.LookPath("rsvg-convert")
	if err != nil {
		t.Fatal("rendering the chart needs rsvg-convert: apt-get install librsvg2-bin")
	}
	jobs := loadJobs(t, "- {load: 4, duration: 10s}\n- {load: 1, duration: 5s, submit_at: 10s}\n")
	res, err := Run(t.Context(), Config{Nodes: twoNodes(t), Jobs: jobs, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	svgFile, pngFile := filepath.Join(dir, "chart.svg"), filepath.Join(dir, "chart.png")
	var svg strings.Builder
	if err := WriteSVG(&svg, []*Result{res}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(svgFile, []byte(svg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.CommandContext(t.Context(), rsvg, "-o", pngFile, svgFile).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v: %s", err, out)
	}
	f, err := os.Open(pngFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("rsvg-convert wrote no PNG: %v", err)
	}
	width, height := svgPlotLeft+svgColumns+svgScaleWidth, svgPanelsTop+svgHeading+2*svgLaneHeight+svgAxisHeight+svgGap
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Fatalf("rendered %dx%d; want %dx%d", b.Dx(), b.Dy(), width, height)
	}

	end := res.Timeline.End
	if end != 15050*time.Millisecond {
		t.Fatalf("the run ends at %s; the pixels below are placed for 15.05s", end)
	}
	x := func(at time.Duration) int { return svgPlotLeft + timeX(at, end) }
	big, small := svgPanelsTop+svgHeading, svgPanelsTop+svgHeading+svgLaneHeight // lane tops
	axis := svgPanelsTop + svgHeading + 2*svgLaneHeight
	blue, room := color.RGBA{0x3b, 0x7d, 0xd8, 0xff}, color.RGBA{0xe8, 0xe8, 0xe8, 0xff}
	for _, p := range []struct {
		what string
		x, y int
		want color.RGBA
	}{
		{"big's lane while full", x(5 * time.Second), big + 5, blue},
		{"big's lane low while a quarter full", x(12500 * time.Millisecond), big + svgLaneFill - 3, blue},
		{"big's lane high while a quarter full", x(12500 * time.Millisecond), big + 3, room},
		{"small's lane, idle", x(5 * time.Second), small + 5, room},
		{"the legend's load swatch", svgPlotLeft + 7, svgLegendTop + 7, blue},
	} {
		if got := rgba(img, p.x, p.y); !near(got, p.want) {
			t.Errorf("%s at (%d,%d): %v; want %v", p.what, p.x, p.y, got, p.want)
		}
	}
	for _, d := range []struct {
		what                    string
		x0, y0, x1, y1, atLeast int
	}{
		{"the title", 8, 4, 400, svgTitleHeight, 200},
		{"the legend's text", svgPlotLeft + 20, svgLegendTop, svgPlotLeft + 360, svgLegendTop + 16, 100},
		{"big's name", 8, big, svgPlotLeft - 10, big + 16, 10},
		{"big's load scale", svgPlotLeft + svgColumns + 3, big, width, big + svgLaneFill + 2, 20},
		{"the time axis line", svgPlotLeft, axis - 1, svgPlotLeft + svgColumns, axis + 2, svgColumns},
		{"the 10s tick and its label", x(10*time.Second) - 10, axis + 3, x(10*time.Second) + 10, axis + 20, 15},
		{"the axis caption", svgPlotLeft + svgColumns - 200, axis + 22, svgPlotLeft + svgColumns, axis + svgAxisHeight, 50},
	} {
		if n := darkPixels(img, d.x0, d.y0, d.x1, d.y1); n < d.atLeast {
			t.Errorf("%s: %d dark pixels in (%d,%d)-(%d,%d); want at least %d: not drawn", d.what, n, d.x0, d.y0, d.x1, d.y1, d.atLeast)
		}
	}
	if n := darkPixels(img, x(10*time.Second)+30, axis+3, x(10*time.Second)+50, axis+20); n != 0 {
		t.Errorf("%d dark pixels between the ticks: the checks above would pass on a dark image", n)
	}

	texts := svgTexts(t, svg.String())
	for _, want := range []string{svgTitle, "loadfactor: 2 nodes, the last job done at 15.05s", "big", "max load 4", "small", "max load 2",
		"100%", "50%", "0", "2s", "14s", "simulated time since the start", "room left"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no text %q among %q", want, texts)
		}
	}
}

func rgba(img image.Image, x, y int) color.RGBA {
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8), uint8(a >> 8)}
}

func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return x-y < 10 || y-x < 10 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B) && d(a.A, b.A)
}

// darkPixels counts the pixels of a rectangle darker than mid grey, the
// ink of text and lines on the white background.
func darkPixels(img image.Image, x0, y0, x1, y1 int) int {
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			c := rgba(img, x, y)
			if c.A > 128 && int(c.R)+int(c.G)+int(c.B) < 3*110 {
				n++
			}
		}
	}
	return n
}

// svgTexts lists the text of every <text> element, checking that the
// SVG is well-formed XML on the way.
func svgTexts(t *testing.T, svg string) []string {
	t.Helper()
	dec := xml.NewDecoder(strings.NewReader(svg))
	var texts []string
	inText := false
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return texts
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			inText = tok.Name.Local == "text"
		case xml.CharData:
			if inText {
				texts = append(texts, string(tok))
			}
		case xml.EndElement:
			inText = false
		}
	}
}

// TestSVGRunsShareTheTimeAxis: every panel spans the longest run, so a
// shorter run's panel ends early instead of stretching to the width.
func TestSVGRunsShareTheTimeAxis(t *testing.T) {
	t.Parallel()
	long, err := Run(t.Context(), Config{Nodes: twoNodes(t), Timeline: true,
		Jobs: loadJobs(t, "- {load: 4, duration: 10s}\n- {load: 1, duration: 5s, submit_at: 10s}\n")})
	if err != nil {
		t.Fatal(err)
	}
	short, err := Run(t.Context(), Config{Nodes: twoNodes(t), Timeline: true, Jobs: loadJobs(t, "- {load: 4, duration: 5s}\n")})
	if err != nil {
		t.Fatal(err)
	}
	var svg strings.Builder
	if err := WriteSVG(&svg, []*Result{short, long}); err != nil {
		t.Fatal(err)
	}
	texts := svgTexts(t, svg.String())
	count := func(s string) int {
		n := 0
		for _, t := range texts {
			if t == s {
				n++
			}
		}
		return n
	}
	if count("14s") != 2 || count("5s") != 0 {
		t.Errorf("tick labels %q; want both panels marked 0 to 14s every 2s", texts)
	}
	if !slices.Contains(texts, "loadfactor: 2 nodes, the last job done at 5s") {
		t.Errorf("no heading for the short run among %q", texts)
	}
}
