package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Noop is the builtin of the noop service: it succeeds at once.
func Noop(context.Context, Spec, *Gate, Output) error { return nil }

// Sleep is the builtin of the sleep service. It sleeps the duration given by
// the payload, {"duration":"5s"} or "5s", else by the first argument, and
// reports progress as it goes. Time paused does not count; cancelling
// returns ctx's error.
func Sleep(ctx context.Context, s Spec, gate *Gate, out Output) error {
	total, err := SleepDuration(s)
	if err != nil {
		return err
	}
	step := min(max(total/100, 100*time.Millisecond), 10*time.Second)
	var slept time.Duration
	lastPercent := -1
	for slept < total {
		if err := gate.Wait(ctx); err != nil {
			return err
		}
		paused, changed := gate.State()
		if paused {
			continue
		}
		chunk := min(step, total-slept)
		began := time.Now()
		timer := time.NewTimer(chunk)
		select {
		case <-ctx.Done():
			timer.Stop()
			return ctx.Err()
		case <-changed: // paused mid-chunk: keep what was slept so far
			timer.Stop()
			slept += min(time.Since(began), chunk)
		case <-timer.C:
			slept += chunk
		}
		if percent := int(float64(slept) / float64(total) * 100); percent != lastPercent {
			lastPercent = percent
			out.Progress(percent, fmt.Sprintf("slept %s of %s", slept.Round(time.Millisecond), total))
		}
	}
	return nil
}

// SleepDuration reads the duration to sleep from the payload or the first argument.
func SleepDuration(s Spec) (time.Duration, error) {
	text, err := sleepDurationText(s)
	if err != nil {
		return 0, err
	}
	d, err := time.ParseDuration(text)
	if err != nil {
		return 0, fmt.Errorf("sleep: invalid duration %q: use a Go duration such as 5s or 1m30s", text)
	}
	if d < 0 {
		return 0, fmt.Errorf("sleep: negative duration %q", text)
	}
	return d, nil
}

func sleepDurationText(s Spec) (string, error) {
	payload := bytes.TrimSpace(s.Stdin)
	if len(payload) > 0 && !bytes.Equal(payload, []byte("null")) {
		var bare string
		if json.Unmarshal(payload, &bare) == nil {
			return bare, nil
		}
		var obj struct {
			Duration *string `json:"duration"`
		}
		if err := json.Unmarshal(payload, &obj); err != nil {
			return "", fmt.Errorf(`sleep: payload must be {"duration":"5s"} or "5s": %w`, err)
		}
		if obj.Duration != nil {
			return *obj.Duration, nil
		}
	}
	if len(s.Argv) > 0 {
		return s.Argv[0], nil
	}
	return "", errors.New(`sleep: no duration: give a payload such as {"duration":"5s"} or an argument such as 5s`)
}
