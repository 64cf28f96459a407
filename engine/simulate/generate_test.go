package simulate

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseGenerator(t *testing.T) {
	t.Parallel()
	g, err := ParseGenerator("count=1000, rate=50/s,load=1..4,duration=10s..2m,types=a:3,b:1")
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 1000 || g.Rate != 50 || g.LoadMin != 1 || g.LoadMax != 4 || !g.wholeLoads ||
		g.DurationMin != 10*time.Second || g.DurationMax != 2*time.Minute ||
		!reflect.DeepEqual(g.Types, []string{"a", "b"}) || !reflect.DeepEqual(g.TypeWeights, []float64{3, 1}) {
		t.Errorf("parsed %+v", g)
	}
	g, err = ParseGenerator("rate=120/m,load=0.5..1.5,duration=30,types=x")
	if err != nil {
		t.Fatal(err)
	}
	if g.Count != 100 || g.Rate != 2 || g.wholeLoads || g.DurationMin != 30*time.Second || g.Types[0] != "x" {
		t.Errorf("parsed %+v", g)
	}
	for spec, want := range map[string]string{
		"count=0":               "count=0: must be a whole number",
		"rate=5/d":              "rate=5/d: must be a positive number per s, m or h",
		"load=a":                "load=a: must be a load",
		"duration=2m..1m":       "duration=2m..1m: the range ends below its start",
		"types=a:0":             `types=a:0: weight of "a" must be a positive number`,
		"speed=3":               `unknown setting "speed"`,
		"count=3,,":             `"" is not a key=value setting`,
		"count=1,count=2":       "count is set twice",
		"count=x,rate=y":        "count=x",
		"count=1,load=1,b:2":    `"b:2" is not a key=value setting`,
		"duration=5s..x,load=q": `duration=5s..x: duration "x"`,
	} {
		if _, err := ParseGenerator(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v; want %q", spec, err, want)
		}
	}
}

func TestGeneratedJobs(t *testing.T) {
	t.Parallel()
	g, err := ParseGenerator("count=2000,rate=10/s,load=1..4,duration=1s..3s,types=a:3,b:1")
	if err != nil {
		t.Fatal(err)
	}
	jobs := g.Jobs(5)
	if !reflect.DeepEqual(jobs, g.Jobs(5)) {
		t.Fatal("the same seed drew different jobs")
	}
	if reflect.DeepEqual(jobs, g.Jobs(6)) {
		t.Fatal("seeds 5 and 6 drew the same jobs")
	}
	types := map[string]int{}
	loads := map[float64]int{}
	for i, j := range jobs {
		types[j.Type]++
		loads[*j.Load]++
		d := time.Duration(j.Duration)
		if j.ID != int64(i+1) || d < time.Second || d > 3*time.Second || d%time.Millisecond != 0 {
			t.Fatalf("job %d = %+v", i, j)
		}
		if i > 0 && j.SubmitAt < jobs[i-1].SubmitAt {
			t.Fatalf("job %d is submitted before job %d", j.ID, jobs[i-1].ID)
		}
	}
	if len(loads) != 4 || loads[2.5] != 0 {
		t.Errorf("loads %v; want the whole numbers 1 to 4", loads)
	}
	if a := types["a"]; a < 1400 || a > 1600 {
		t.Errorf("types %v; want about 3 a for every b", types)
	}
	// 2000 arrivals at 10/s span about 200s.
	if last := time.Duration(jobs[len(jobs)-1].SubmitAt); last < 170*time.Second || last > 230*time.Second {
		t.Errorf("last arrival at %s; want about 200s", last)
	}
	all, _ := ParseGenerator("count=3")
	for _, j := range all.Jobs(1) {
		if j.SubmitAt != 0 || *j.Load != 1 || time.Duration(j.Duration) != 10*time.Second || j.Type != "sleep" {
			t.Errorf("without settings: %+v", j)
		}
	}
}
