package main_test

import (
	"encoding/json"
	"net/http"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"
)

// dashboardFile is the Grafana dashboard the packages install under
// /usr/share/jobctl.
const dashboardFile = "packaging/grafana-dashboard.json"

// dashboardPanel is what the test reads of a Grafana panel.
type dashboardPanel struct {
	Title   string           `json:"title"`
	Type    string           `json:"type"`
	Panels  []dashboardPanel `json:"panels"` // a row's
	Targets []struct {
		Expr string `json:"expr"`
	} `json:"targets"`
}

// TestDashboardQueriesNameExportedMetrics: every query of the Grafana
// dashboard is valid PromQL, and every metric it names is one a real node
// exports on /metrics, scraped after the node ran a job so that the series
// made on first use (by type, by status) are there too.
func TestDashboardQueriesNameExportedMetrics(t *testing.T) {
	t.Parallel()
	exprs := dashboardQueries(t)

	c := sqliteCluster(t)
	n := c.serve("solo", "--exec")
	id := c.submit("--", "true")
	c.ok("wait", id, "--timeout", "30s")
	var exported map[string]bool
	c.eventually(30*time.Second, "the job's run in /metrics", func() bool {
		exported = scrapeNames(t, n)
		return exported["jobctl_job_run_seconds_bucket"]
	})

	used := map[string]bool{}
	for title, es := range exprs {
		for _, e := range es {
			for _, name := range metricNames(t, title, e) {
				used[name] = true
				if !exported[name] {
					t.Errorf("panel %q: %s names %s, which a node does not export", title, e, name)
				}
			}
		}
	}
	// What the dashboard is for: the queue, dispatch, wait and run time,
	// node load against max load, and the lease holder.
	for _, want := range []string{"jobctl_jobs", "jobctl_dispatched_total", "jobctl_job_wait_seconds_bucket",
		"jobctl_job_run_seconds_bucket", "jobctl_node_load", "jobctl_node_max_load", "jobctl_lease_held", "jobctl_node_info"} {
		if !used[want] {
			t.Errorf("no panel shows %s", want)
		}
	}
	if t.Failed() {
		names := make([]string, 0, len(exported))
		for n := range exported {
			names = append(names, n)
		}
		sort.Strings(names)
		t.Logf("the node exports: %s", strings.Join(names, " "))
	}
}

// dashboardQueries reads the dashboard and returns each panel's queries
// by its title; it fails on a panel without any.
func dashboardQueries(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Title  string           `json:"title"`
		UID    string           `json:"uid"`
		Panels []dashboardPanel `json:"panels"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.Title == "" || d.UID == "" || len(d.Panels) == 0 {
		t.Fatalf("%s: not a dashboard (title %q, uid %q, %d panels)", dashboardFile, d.Title, d.UID, len(d.Panels))
	}
	out := map[string][]string{}
	var walk func([]dashboardPanel)
	walk = func(ps []dashboardPanel) {
		for _, p := range ps {
			if p.Type == "row" {
				walk(p.Panels)
				continue
			}
			if _, dup := out[p.Title]; dup || p.Title == "" {
				t.Errorf("panel title %q is empty or not unique", p.Title)
			}
			if len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
			for _, tg := range p.Targets {
				out[p.Title] = append(out[p.Title], tg.Expr)
			}
		}
	}
	walk(d.Panels)
	return out
}

// grafanaVariable is a dashboard variable in a query: $name or ${name}.
var grafanaVariable = regexp.MustCompile(`\$\{?__[a-z_]+\}?|\$\{?[a-zA-Z_]+\}?`)

// metricNames parses a query with Prometheus's own PromQL parser, Grafana's
// interval variables given a value first, and returns the metric names its
// selectors name.
func metricNames(t *testing.T, title, expr string) []string {
	t.Helper()
	promql := grafanaVariable.ReplaceAllStringFunc(expr, func(v string) string {
		if strings.Contains(v, "interval") {
			return "5m"
		}
		t.Errorf("panel %q: %s uses variable %s, which the test cannot fill in", title, expr, v)
		return v
	})
	e, err := parser.NewParser(parser.Options{}).ParseExpr(promql)
	if err != nil {
		t.Errorf("panel %q: %s is not PromQL: %v", title, expr, err)
		return nil
	}
	var names []string
	parser.Inspect(e, func(node parser.Node, _ []parser.Node) error {
		if vs, ok := node.(*parser.VectorSelector); ok {
			name := vs.Name
			for _, m := range vs.LabelMatchers {
				if m.Name == model.MetricNameLabel {
					name = m.Value
				}
			}
			if name == "" {
				t.Errorf("panel %q: %s selects series without a metric name", title, expr)
			}
			names = append(names, name)
		}
		return nil
	})
	if len(names) == 0 {
		t.Errorf("panel %q: %s names no metric", title, expr)
	}
	return slices.Compact(names)
}

// scrapeNames reads the node's /metrics and returns the names of the
// series it exports: a histogram's _bucket, _sum and _count.
func scrapeNames(t *testing.T, n *node) map[string]bool {
	t.Helper()
	resp, err := http.Get("http://" + n.addr + "/metrics")
	if err != nil {
		t.Fatalf("node %s /metrics: %v", n.name, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("node %s /metrics: %s", n.name, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("node %s /metrics: %v", n.name, err)
	}
	names := map[string]bool{}
	for name, f := range families {
		switch f.GetType() {
		case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
			names[name+"_bucket"], names[name+"_sum"], names[name+"_count"] = true, true, true
		case dto.MetricType_SUMMARY:
			names[name], names[name+"_sum"], names[name+"_count"] = true, true, true
		default:
			names[name] = true
		}
	}
	return names
}
