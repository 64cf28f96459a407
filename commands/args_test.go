package commands

import "testing"

func TestCheckHostPort(t *testing.T) {
	for v, ok := range map[string]bool{
		"127.0.0.1:7420": true, ":7420": true, "[::1]:0": true, "node-a.example:80": true,
		"notahostport": false, "127.0.0.1": false, ":99999": false, ":http": false, "a b:1": false, "": false, ":-1": false,
	} {
		if err := checkHostPort("--listen", v); (err == nil) != ok {
			t.Errorf("checkHostPort(%q) = %v; want ok %v", v, err, ok)
		}
	}
}

func TestCheckNodeName(t *testing.T) {
	for name, ok := range map[string]bool{
		"node-a": true, "n": true, "": false, "  ": false, "a\nb": false, "\xff": false,
		string(make([]byte, 256)): false,
	} {
		if err := checkNodeName(name); (err == nil) != ok {
			t.Errorf("checkNodeName(%q) = %v; want ok %v", name, err, ok)
		}
	}
}
