package simulate

import (
	"encoding/xml"
	"io"
	"math"
	"strings"
	"testing"
	"time"
)

func TestBuckets(t *testing.T) {
	t.Parallel()
	n := NodeTimeline{Name: "a", MaxLoad: 2, Steps: []Step{{At: time.Second, Load: 2}, {At: 3 * time.Second, Load: 1}, {At: 4 * time.Second, Load: 0}}}
	got := n.Buckets(4*time.Second, 4)
	want := []float64{0, 1, 1, 0.5}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("buckets %v; want %v", got, want)
		}
	}
	// Slices that do not fall on step boundaries average what they cover.
	got = n.Buckets(4*time.Second, 3)
	want = []float64{0.25, 1, 0.625}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-6 {
			t.Fatalf("3 buckets: %v; want %v", got, want)
		}
	}
}

func TestTimelineAndSVG(t *testing.T) {
	t.Parallel()
	jobs := loadJobs(t, "- {load: 4, duration: 10s}\n- {load: 1, duration: 5s, submit_at: 10s}\n")
	res, err := Run(t.Context(), Config{Nodes: twoNodes(t), Jobs: jobs, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteTimeline(&b, res, 10); err != nil {
		t.Fatal(err)
	}
	// Rounds at 0, 0.05, then 10.05: the second job runs 10.05-15.05 on big
	// (both idle: the larger node), a quarter of its max load.
	want := `loadfactor: load factor per node over 15.05s, 1.51s per column
  big   |██████▆▂▂▂|
  small |          |
`
	if b.String() != want {
		t.Errorf("timeline:\n%s\nwant:\n%s", b.String(), want)
	}
	var svg strings.Builder
	if err := WriteSVG(&svg, []*Result{res, res}); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(strings.NewReader(svg.String()))
	paths := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the SVG is not well-formed: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "path" {
			paths++
		}
	}
	if paths != 4 {
		t.Errorf("%d paths; want one per node per run", paths)
	}
}
