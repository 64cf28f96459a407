package node

import (
	"strings"
	"testing"
	"time"
)

func TestRetainValidation(t *testing.T) {
	t.Parallel()
	for retain, ok := range map[time.Duration]bool{
		0:                   true,
		time.Minute:         true,
		30 * 24 * time.Hour: true,
		time.Second:         false,
		59 * time.Second:    false,
		-time.Hour:          false,
	} {
		c := Defaults()
		c.Name = "n1"
		c.Retain = retain
		err := c.Validate()
		if ok && err != nil {
			t.Errorf("--retain %s refused: %v", retain, err)
		}
		if !ok && (err == nil || !strings.Contains(err.Error(), "--retain")) {
			t.Errorf("--retain %s: %v, want an error naming --retain", retain, err)
		}
	}
}
