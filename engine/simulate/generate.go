package simulate

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/jobctl/jobctl/engine"
)

// GenerateHelp documents the --generate grammar.
const GenerateHelp = `A generated workload is comma-separated key=value settings:
  count=N            how many jobs (default 100)
  rate=R/s|R/m|R/h   mean arrival rate, arrivals at random (Poisson); absent:
                     every job is submitted at once
  load=X or X..Y     each job's load; a range is drawn uniformly, in whole
                     numbers when both ends are whole (default 1)
  duration=D or D..E how long each job runs, Go durations or seconds, drawn
                     uniformly from a range; 0 never ends (default 10s)
  types=a:3,b:1      job types with relative weights (default sleep)`

// Generator describes a random workload; see GenerateHelp.
type Generator struct {
	Count        int
	Rate         float64 // jobs per second; 0: all at once
	LoadMin      float64
	LoadMax      float64
	DurationMin  time.Duration
	DurationMax  time.Duration
	Types        []string
	TypeWeights  []float64
	wholeLoads   bool
	totalWeights float64
}

// maxGenerated keeps a typo from asking for more memory than a machine has.
const maxGenerated = 100_000_000

// ParseGenerator reads a --generate spec.
func ParseGenerator(spec string) (*Generator, error) {
	g := &Generator{Count: 100, LoadMin: 1, LoadMax: 1, DurationMin: 10 * time.Second, DurationMax: 10 * time.Second}
	settings := map[string][]string{}
	var keys []string // in the order given, so the first bad one is reported
	var key string
	for tok := range strings.SplitSeq(spec, ",") {
		tok = strings.TrimSpace(tok)
		k, v, ok := strings.Cut(tok, "=")
		switch {
		case ok:
			key = strings.ToLower(strings.TrimSpace(k))
			if _, dup := settings[key]; dup {
				return nil, fmt.Errorf("%s is set twice", key)
			}
			settings[key] = []string{strings.TrimSpace(v)}
			keys = append(keys, key)
		case key == "types" && tok != "":
			settings[key] = append(settings[key], tok) // types=a:3,b:1
		default:
			return nil, fmt.Errorf("%q is not a key=value setting", tok)
		}
	}
	for _, k := range keys {
		vs := settings[k]
		var err error
		switch k {
		case "count":
			if g.Count, err = strconv.Atoi(vs[0]); err != nil || g.Count < 1 || g.Count > maxGenerated {
				err = fmt.Errorf("must be a whole number between 1 and %d", maxGenerated)
			}
		case "rate":
			g.Rate, err = parseRate(vs[0])
		case "load":
			err = g.parseLoad(vs[0])
		case "duration":
			err = g.parseDuration(vs[0])
		case "types":
			err = g.parseTypes(vs)
		default:
			return nil, fmt.Errorf("unknown setting %q (valid: count, rate, load, duration, types)", k)
		}
		if err != nil {
			return nil, fmt.Errorf("%s=%s: %w", k, strings.Join(vs, ","), err)
		}
	}
	if len(g.Types) == 0 {
		g.Types, g.TypeWeights = []string{engine.TypeSleep}, []float64{1}
	}
	for _, w := range g.TypeWeights {
		g.totalWeights += w
	}
	return g, nil
}

// parseRate reads "50/s", "300/m", "2/h" or "50" (per second).
func parseRate(s string) (float64, error) {
	num, unit, _ := strings.Cut(s, "/")
	per := map[string]float64{"": 1, "s": 1, "m": 60, "min": 60, "h": 3600}[unit]
	r, err := strconv.ParseFloat(num, 64)
	if err != nil || per == 0 || !(r > 0) || math.IsInf(r, 0) {
		return 0, errors.New("must be a positive number per s, m or h, such as 50/s")
	}
	return r / per, nil
}

// splitRange reads "X" or "X..Y".
func splitRange(s string) (lo, hi string) {
	lo, hi, ok := strings.Cut(s, "..")
	if !ok {
		hi = lo
	}
	return strings.TrimSpace(lo), strings.TrimSpace(hi)
}

func (g *Generator) parseLoad(s string) error {
	lo, hi := splitRange(s)
	var err1, err2 error
	g.LoadMin, err1 = strconv.ParseFloat(lo, 64)
	g.LoadMax, err2 = strconv.ParseFloat(hi, 64)
	switch {
	case err1 != nil || err2 != nil || !(g.LoadMin >= 0) || g.LoadMax > engine.MaxJobLoad:
		return fmt.Errorf("must be a load >= 0 or a range such as 1..4")
	case g.LoadMax < g.LoadMin:
		return errors.New("the range ends below its start")
	}
	g.wholeLoads = g.LoadMin == math.Trunc(g.LoadMin) && g.LoadMax == math.Trunc(g.LoadMax)
	return nil
}

func (g *Generator) parseDuration(s string) error {
	lo, hi := splitRange(s)
	var err error
	if g.DurationMin, err = parseDuration(lo); err != nil {
		return err
	}
	if g.DurationMax, err = parseDuration(hi); err != nil {
		return err
	}
	if g.DurationMax < g.DurationMin {
		return errors.New("the range ends below its start")
	}
	return nil
}

func (g *Generator) parseTypes(vs []string) error {
	for _, v := range vs {
		name, weight, hasWeight := strings.Cut(v, ":")
		w := 1.0
		if hasWeight {
			var err error
			if w, err = strconv.ParseFloat(weight, 64); err != nil || !(w > 0) || math.IsInf(w, 0) {
				return fmt.Errorf("weight of %q must be a positive number", name)
			}
		}
		if name = strings.TrimSpace(name); name == "" {
			return errors.New("a type has no name")
		}
		g.Types, g.TypeWeights = append(g.Types, name), append(g.TypeWeights, w)
	}
	return nil
}

// Jobs draws the workload from seed; the same seed gives the same jobs.
func (g *Generator) Jobs(seed uint64) []JobSpec {
	rng := rand.New(rand.NewPCG(seed, seed^0x5851f42d4c957f2d))
	jobs := make([]JobSpec, g.Count)
	var at float64 // seconds
	for i := range jobs {
		if g.Rate > 0 && i > 0 {
			at += rng.ExpFloat64() / g.Rate
		}
		load := g.LoadMin
		if g.LoadMax > g.LoadMin {
			if g.wholeLoads {
				load += float64(rng.IntN(int(g.LoadMax-g.LoadMin) + 1))
			} else {
				load = math.Round((g.LoadMin+rng.Float64()*(g.LoadMax-g.LoadMin))*100) / 100
			}
		}
		d := g.DurationMin
		if g.DurationMax > g.DurationMin {
			d += time.Duration(rng.Int64N(int64(g.DurationMax - g.DurationMin + 1)))
			d = max(d.Round(time.Millisecond), g.DurationMin)
		}
		jobs[i] = JobSpec{
			ID: int64(i + 1), Type: g.pickType(rng), Load: &load, Duration: Duration(d),
			SubmitAt: Duration(time.Duration(at * float64(time.Second)).Round(time.Millisecond)),
		}
	}
	return jobs
}

func (g *Generator) pickType(rng *rand.Rand) string {
	if len(g.Types) == 1 {
		return g.Types[0]
	}
	x := rng.Float64() * g.totalWeights
	for i, w := range g.TypeWeights {
		if x < w {
			return g.Types[i]
		}
		x -= w
	}
	return g.Types[len(g.Types)-1]
}
