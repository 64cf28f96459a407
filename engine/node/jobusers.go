package node

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jobctl/jobctl/engine/jobuser"
)

// JobUsers are the users jobs run as besides the node's own (--job-user, a
// service's user:), each once. The error names the first that does not
// exist on this machine, or says the node may not switch to other users.
// serve checks it before it touches anything.
func (c *Config) JobUsers() ([]*jobuser.User, error) {
	us, err := resolveJobUsers(*c)
	if err != nil {
		return nil, err
	}
	out := make([]*jobuser.User, 0, len(us))
	for _, u := range us {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *jobuser.User) int { return cmp.Compare(a.UID, b.UID) })
	return out, nil
}

// jobUsers are the users jobs run as, by their USER[:GROUP].
type jobUsers map[string]*jobuser.User

// forService is who jobs of a service run as: its own user, else the
// node's --job-user; nil is the node's own user.
func (us jobUsers) forService(cfg Config, s Service) *jobuser.User {
	if s.User != "" {
		return us[s.User]
	}
	return us[cfg.JobUser]
}

// resolveJobUsers looks up every user the configuration names; nil when
// every job runs as the node's own user.
func resolveJobUsers(cfg Config) (jobUsers, error) {
	us := jobUsers{}
	look := func(spec, what string) error {
		if spec == "" || us[spec] != nil {
			return nil
		}
		u, err := jobuser.Lookup(spec)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		us[spec] = u
		return nil
	}
	if err := look(cfg.JobUser, "--job-user"); err != nil {
		return nil, err
	}
	for _, s := range cfg.Services {
		if err := look(s.User, fmt.Sprintf("service %q", s.Type)); err != nil {
			return nil, err
		}
	}
	if len(us) == 0 {
		return nil, nil
	}
	if err := jobuser.CheckPrivileges(); err != nil {
		return nil, err
	}
	return us, nil
}

// validUserSpec is USER or USER:GROUP, each part non-empty and one word.
func validUserSpec(s string) bool {
	user, group, hasGroup := strings.Cut(s, ":")
	return user != "" && (!hasGroup || (group != "" && !strings.Contains(group, ":"))) &&
		!strings.ContainsAny(s, " \t\r\n\x00")
}

// jobTempBase is where the temporary directories of this node's jobs of
// another user go: in the node's own TMPDIR, under a name that follows its
// state directory, which no two live nodes share, so a node started again
// finds and removes what its earlier process left.
func jobTempBase(cfg Config) string {
	state := cfg.StateDir
	if abs, err := filepath.Abs(state); err == nil && state != "" {
		state = abs
	}
	sum := sha256.Sum256([]byte(fmt.Sprintf("%d\x00%s\x00%s", os.Geteuid(), cfg.Name, state)))
	return filepath.Join(os.TempDir(), "jobctl-jobs-"+hex.EncodeToString(sum[:6]))
}
