package tui

import (
	"fmt"
	"strconv"
	"time"

	"github.com/jobctl/jobctl/engine"
	"github.com/jobctl/jobctl/engine/human"
)

// DetailView shows one job as 'jobctl show' and 'jobctl explain' tell it,
// who cancelled it and why, and the last lines of its log, following them
// while it is open.
type DetailView struct {
	styles Styles
	width  int
	height int

	id    int64
	in    *Inspection
	lines []string // the log's last lines
	err   error    // the last read's, shown until one succeeds
}

// NewDetailView returns an empty view.
func NewDetailView(s Styles) DetailView { return DetailView{styles: s} }

// SetSize sets the view's space.
func (v *DetailView) SetSize(width, height int) { v.width, v.height = width, height }

// Show starts the view on job id, before anything of it is read.
func (v *DetailView) Show(id int64) {
	*v = DetailView{styles: v.styles, width: v.width, height: v.height, id: id}
}

// SetData shows what the last read found, and the log as it stands.
func (v *DetailView) SetData(in *Inspection, lines []string, err error) {
	if in != nil {
		v.in = in
	}
	v.lines, v.err = lines, err
}

// View renders the job's fields, the explanation's conclusion, then as
// many of the log's last lines as fit, and on its last line the keys.
func (v DetailView) View() string {
	rows := max(0, v.height-1)
	lines := v.fields()
	if v.err != nil {
		lines = append(lines, v.styles.Error.Render("error: "+v.err.Error()))
	}
	head := "Log · last lines, following"
	if v.in != nil && v.in.Job.Status.Terminal() {
		head = "Log · last lines"
	}
	lines = append(lines, v.styles.ColumnHead.Render(head))
	if len(v.lines) == 0 {
		lines = append(lines, v.styles.Dim.Render("  no output"))
	}
	if room := rows - len(lines); room > 0 && len(v.lines) > 0 {
		lines = append(lines, v.lines[max(0, len(v.lines)-room):]...)
	}
	if len(lines) > rows {
		lines = lines[:rows]
	}
	for len(lines) < rows {
		lines = append(lines, "")
	}
	foot := "esc back · l whole log · e explain · c cancel · p pause/resume · r requeue"
	return joinLines(append(lines, v.styles.Dim.Render(foot)), v.height, v.width)
}

// fields are the lines above the log.
func (v DetailView) fields() []string {
	if v.in == nil {
		return []string{v.styles.Title.Render(fmt.Sprintf("Job %d", v.id)), "reading the job…"}
	}
	j, at := v.in.Job, v.in.At
	label := func(k, val string) string { return v.styles.ColumnHead.Render(fmt.Sprintf("%-9s", k)) + " " + val }
	title := fmt.Sprintf("Job %d · %s · ", j.ID, j.Type) + v.styles.status(j.Status)
	if j.Node != "" {
		title += " on " + j.Node
	}
	lines := []string{v.styles.Title.Render(title)}
	switch {
	case v.in.EndedBy != nil:
		lines = append(lines, label("message", v.styles.Prompt.Render(engine.EndedText(v.in.EndedBy))))
	case j.Message != "":
		lines = append(lines, label("message", cleanLine(j.Message)))
	}
	if cmd := commandText(j); cmd != "" {
		lines = append(lines, label("command", cmd))
	}
	if liveRun(j) || j.Progress > 0 {
		p := strconv.Itoa(j.Progress) + "%"
		if j.ProgressMessage != "" {
			p += " " + cleanLine(j.ProgressMessage)
		}
		lines = append(lines, label("progress", p))
	}
	run := fmt.Sprintf("attempt %d of %d", j.Attempt-j.AttemptBase, j.MaxAttempts)
	if j.ExitCode != nil {
		run += fmt.Sprintf(" · exit code %d", *j.ExitCode)
	}
	run += " · load " + engine.FormatNumber(j.Load) + " · priority " + strconv.Itoa(j.Priority)
	if j.Key != "" {
		run += " · key " + j.Key
	}
	if j.ParentID != nil {
		run += fmt.Sprintf(" · parent %d", *j.ParentID)
	}
	lines = append(lines, label("run", run))
	times := "created " + ago(at, &j.CreatedAt)
	if j.StartedAt != nil {
		times += " · started " + ago(at, j.StartedAt)
	}
	if j.FinishedAt != nil {
		times += " · ended " + ago(at, j.FinishedAt)
	}
	if j.Creator != "" {
		times += " · by " + j.Creator
	}
	lines = append(lines, label("times", times))
	if e := v.in.Explanation; e != nil {
		lines = append(lines, label("explain", cleanLine(e.Conclusion)))
		if e.Hint != "" {
			lines = append(lines, label("hint", cleanLine(e.Hint)))
		}
	}
	return lines
}

// ago says how long before at t was: "12m ago".
func ago(at time.Time, t *time.Time) string {
	return human.Age(at.Sub(*t)) + " ago"
}

// LogView is a job's log, following its new output, and scrolled back on
// request.
type LogView struct {
	styles Styles
	keys   KeyMap
	width  int
	height int

	id    int64
	job   *engine.Job
	lines []string
	// back is how many lines the view is scrolled up from the end; 0
	// follows new output.
	back int
}

// NewLogView returns an empty view.
func NewLogView(s Styles, k KeyMap) LogView { return LogView{styles: s, keys: k} }

// SetSize sets the view's space.
func (v *LogView) SetSize(width, height int) {
	v.width, v.height = width, height
	v.clamp()
}

// Show starts the view on job id, following.
func (v *LogView) Show(id int64) {
	*v = LogView{styles: v.styles, keys: v.keys, width: v.width, height: v.height, id: id}
}

// SetData shows the log as it stands; a view scrolled back stays on the
// same lines as new ones come.
func (v *LogView) SetData(job *engine.Job, lines []string) {
	if job != nil {
		v.job = job
	}
	if v.back > 0 {
		v.back += max(0, len(lines)-len(v.lines))
	}
	v.lines = lines
	v.clamp()
}

func (v *LogView) rows() int { return max(0, v.height-2) }

func (v *LogView) clamp() { v.back = max(0, min(v.back, len(v.lines)-v.rows())) }

// Scroll moves the view by n lines, back (up) for n > 0; to the end, which
// follows again, for end.
func (v *LogView) Scroll(n int, end bool) {
	if end {
		v.back = 0
		return
	}
	v.back += n
	v.clamp()
}

// Page is how far a page key scrolls.
func (v LogView) Page() int { return max(1, v.rows()-1) }

// View renders the title, the lines in view and the keys.
func (v LogView) View() string {
	title := fmt.Sprintf("Log of job %d", v.id)
	if j := v.job; j != nil {
		title = fmt.Sprintf("Log of job %d · %s · ", j.ID, j.Type) + v.styles.status(j.Status)
	}
	switch {
	case v.back > 0:
		title += fmt.Sprintf(" · %d lines below", v.back)
	case v.job == nil || !v.job.Status.Terminal():
		title += " · following"
	}
	rows := v.rows()
	end := len(v.lines) - v.back
	shown := v.lines[max(0, end-rows):max(0, end)]
	lines := append([]string{v.styles.Title.Render(title)}, shown...)
	if len(v.lines) == 0 {
		lines = append(lines, v.styles.Dim.Render("  no output"))
	}
	for len(lines) < rows+1 {
		lines = append(lines, "")
	}
	foot := "↑/↓ pgup/pgdn scroll · end follow · esc back"
	return joinLines(append(lines, v.styles.Dim.Render(foot)), v.height, v.width)
}
