package commands

import (
	"fmt"
	"io"
	"strings"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/dispatch"
)

// runnableCheck judges each job submit creates against the nodes as they
// are registered, by the dispatcher's rules (dispatch.Feasible): a job no
// node offers, one no node can ever run, and one larger than every node's
// max load are warned about, or with --strict refused before anything is
// written.
type runnableCheck struct {
	nodes  []*engine.Node
	strict bool
	// doubts are the warnings in the order first met, each with how many
	// jobs it is about; index finds one by its text.
	doubts []doubt
	index  map[string]int
}

type doubt struct {
	text  string
	jobs  int
	first int // the batch line of the first job, 0 for a single submit
}

func newRunnableCheck(nodes []*engine.Node, strict bool) *runnableCheck {
	return &runnableCheck{nodes: nodes, strict: strict, index: map[string]int{}}
}

// doubtAbout says what keeps the nodes from ever running a job of this
// type and load, or that it runs only alone; "" when nothing does.
func doubtAbout(nodes []*engine.Node, jobType string, load float64) string {
	f := dispatch.Feasible(&engine.Job{Type: jobType, Load: load}, nodes)
	switch {
	case !f.Offered:
		return fmt.Sprintf("no registered node offers type %q", jobType)
	case f.Never != "":
		return "no node can run it as the cluster is now: " + f.Never + "; " + f.Hint
	case f.Oversized:
		return fmt.Sprintf("its load %s is above every node's max load (the largest is %s): it will run alone on one of the largest nodes, which takes no other job until then",
			engine.FormatNumber(load), engine.FormatNumber(f.LargestMaxLoad))
	}
	return ""
}

// surelyRunnable reports whether what the store learnt of the nodes as it
// inserted the job (engine.JobSubmitted) shows that nothing keeps them
// from running it, so no warning is due and the nodes need not be read:
// the job fits an ONLINE node that offers its type. That node, the
// largest, alone decides it by the dispatcher's rules: the job is offered,
// not above every node's max load, and the node is never out for good.
// False sends the caller to the nodes themselves for what to say.
func surelyRunnable(sub engine.JobSubmitted, jobType string) bool {
	if !sub.OnlineOffered {
		return false
	}
	jobType = strings.TrimSpace(jobType)
	largest := &engine.Node{State: engine.NodeOnline, MaxLoad: sub.LargestMaxLoad,
		Services: []engine.NodeService{{Type: jobType}}}
	return doubtAbout([]*engine.Node{largest}, jobType, sub.Load) == ""
}

// check is engine.SubmitRequest.Check for a job of a batch line (0 for a
// single submit).
func (c *runnableCheck) check(p *engine.JobInsertParams, line int) error {
	text := doubtAbout(c.nodes, p.Type, p.Load)
	if text == "" {
		return nil
	}
	if c.strict {
		return &engine.InvalidError{What: "job", Problems: []string{text + " (refused by --strict)"}}
	}
	i, ok := c.index[text]
	if !ok {
		i = len(c.doubts)
		c.index[text] = i
		c.doubts = append(c.doubts, doubt{text: text, first: line})
	}
	c.doubts[i].jobs++
	return nil
}

// warn writes one warning line per doubt; batch names the --batch file.
func (c *runnableCheck) warn(w io.Writer, batch string) {
	for _, d := range c.doubts {
		var b strings.Builder
		b.WriteString("jobctl: warning: ")
		if batch != "" {
			fmt.Fprintf(&b, "--batch %s: line %d", batch, d.first)
			if d.jobs > 1 {
				fmt.Fprintf(&b, " and %d more", d.jobs-1)
			}
			b.WriteString(": ")
		}
		b.WriteString(d.text)
		if strings.HasPrefix(d.text, "no registered node offers") {
			if d.jobs > 1 {
				b.WriteString("; the jobs wait until one does")
			} else {
				b.WriteString("; the job waits until one does")
			}
		}
		fmt.Fprintln(w, b.String())
	}
}
