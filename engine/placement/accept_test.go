package placement

import "testing"

func TestAccept(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   AcceptInput
		want Decision
	}{
		{
			name: "fits",
			in:   AcceptInput{MaxLoad: 4, Load: 2, Running: 2, MaxJobs: 200, JobLoad: 2},
			want: Decision{Accept: true},
		},
		{
			name: "fits exactly despite float rounding",
			in:   AcceptInput{MaxLoad: 0.3, Load: 0.2, Running: 1, MaxJobs: 10, JobLoad: 0.1},
			want: Decision{Accept: true},
		},
		{
			name: "busy: load",
			in:   AcceptInput{MaxLoad: 4, Load: 3.5, Running: 3, MaxJobs: 200, JobLoad: 1},
			want: Decision{Reason: ReasonBusy, Detail: "busy: load 3.5 + 1 exceeds max 4"},
		},
		{
			name: "busy: max jobs",
			in:   AcceptInput{MaxLoad: 4, Load: 0, Running: 200, MaxJobs: 200, JobLoad: 0},
			want: Decision{Reason: ReasonBusy, Detail: "at max jobs (200)"},
		},
		{
			name: "max jobs 0 is no limit",
			in:   AcceptInput{MaxLoad: 4, Running: 5000, JobLoad: 1},
			want: Decision{Accept: true},
		},
		{
			name: "oversized declined",
			in:   AcceptInput{MaxLoad: 4, JobLoad: 5, MaxJobs: 200},
			want: Decision{Reason: ReasonOversizedDeclined, Detail: "job load 5 exceeds this node's max load 4"},
		},
		{
			name: "oversized declined on a busy node names the lasting reason",
			in:   AcceptInput{MaxLoad: 4, Load: 3, Running: 2, JobLoad: 5, MaxJobs: 200},
			want: Decision{Reason: ReasonOversizedDeclined, Detail: "job load 5 exceeds this node's max load 4"},
		},
		{
			name: "oversized accepted on an idle node, with a warning",
			in:   AcceptInput{MaxLoad: 4, JobLoad: 5, MaxJobs: 200, AcceptExceeding: true},
			want: Decision{Accept: true, Warning: "job load 5 exceeds this node's max load 4; running it alone (accept-exceeding is on)"},
		},
		{
			name: "oversized waits for the node to be idle",
			in:   AcceptInput{MaxLoad: 4, Load: 0.5, Running: 1, JobLoad: 5, MaxJobs: 200, AcceptExceeding: true},
			want: Decision{Reason: ReasonBusy, Detail: "busy: job load 5 is above max 4, so it waits until the node is idle (load now 0.5)"},
		},
		{
			name: "a job of exactly max load is not oversized",
			in:   AcceptInput{MaxLoad: 4, JobLoad: 4, MaxJobs: 200},
			want: Decision{Accept: true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Accept(tt.in); got != tt.want {
				t.Errorf("Accept(%+v)\n got %+v\nwant %+v", tt.in, got, tt.want)
			}
		})
	}
}
