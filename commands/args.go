package commands

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jobctl/jobctl/engine"

	"github.com/spf13/cobra"
)

// exactArgs requires exactly n arguments, as a usage error naming them.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < n:
			return usageErrorf(cmd, "missing %s", what)
		case len(args) > n:
			return usageErrorf(cmd, "too many arguments: want %s, got %q", what, args)
		}
		return nil
	}
}

// minArgs requires at least n arguments, as a usage error naming them.
func minArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usageErrorf(cmd, "missing %s", what)
		}
		return nil
	}
}

// parseIDs reads job ids, dropping repeats so each job is handled once.
func parseIDs(cmd *cobra.Command, args []string) ([]int64, error) {
	ids := make([]int64, 0, len(args))
	for _, a := range args {
		id, err := parseID(cmd, a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func parseID(cmd *cobra.Command, s string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErrorf(cmd, "invalid job id %q: ids are positive whole numbers", s)
	}
	return id, nil
}

// checkHostPort refuses a flag value that is not host:port with a port
// number, so a typo is a usage error before anything starts rather than a
// failure to listen after the node has opened its database.
func checkHostPort(flag, v string) error {
	host, port, err := net.SplitHostPort(v)
	if err != nil {
		return fmt.Errorf("invalid %s %q: want HOST:PORT, as in 127.0.0.1:7420 or :7420", flag, v)
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return fmt.Errorf("invalid %s %q: the port must be a number from 0 to 65535", flag, v)
	}
	if strings.ContainsAny(host, " /\\") {
		return fmt.Errorf("invalid %s %q: %q is not a host name or address", flag, v, host)
	}
	return nil
}

// checkNodeName refuses a node name no store keeps: empty, longer than
// engine.MaxNodeName bytes, or with control characters (it is shown in
// listings and logs).
func checkNodeName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return fmt.Errorf("invalid --node: the name is empty")
	case len(name) > engine.MaxNodeName:
		return fmt.Errorf("invalid --node: the name is longer than %d bytes", engine.MaxNodeName)
	case !utf8.ValidString(name) || strings.ContainsFunc(name, unicode.IsControl):
		return fmt.Errorf("invalid --node %q: the name may not hold control characters or invalid UTF-8", name)
	}
	return nil
}
