package placement

import (
	"slices"
	"testing"

	"github.com/jobctl/jobctl/engine"
)

func TestPreferred(t *testing.T) {
	t.Parallel()
	nodes := []*engine.Node{
		mk("enc1", load(2)),   // 0.5: preferred
		mk("enc2", load(3.6)), // 0.9: at or over the threshold
		mk("gen1", load(0)),
		mk("gen2", load(1)),
		mk("enc3", load(3)), // 0.75: preferred
	}
	p := Preferred{Type: "encode", Nodes: []string{"enc1", "enc2", "enc3"}, Threshold: 0.8}
	tests := []struct {
		name string
		sel  Selector
		job  *engine.Job
		want []string
	}{
		{"preferred first, each group in inner order", p, job("encode", 1), []string{"enc1", "enc3", "gen1", "gen2", "enc2"}},
		{"other types untouched", p, job("sleep", 1), []string{"gen1", "gen2", "enc1", "enc3", "enc2"}},
		{"threshold is exclusive", Preferred{Type: "encode", Nodes: []string{"enc1"}, Threshold: 0.5}, job("encode", 1), []string{"gen1", "gen2", "enc1", "enc3", "enc2"}},
		{"inner selector kept", Preferred{Type: "encode", Nodes: []string{"gen2"}, Threshold: 1, Inner: LowerWeight{}}, job("encode", 1), []string{"gen2", "gen1", "enc1", "enc3", "enc2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := names(tt.sel.Order(tt.job, nodes, t0)); !slices.Equal(got, tt.want) {
				t.Errorf("order = %v, want %v", got, tt.want)
			}
		})
	}
	if p.Name() != SelectorLoadFactor {
		t.Errorf("name = %q, want the inner selector's", p.Name())
	}
}
