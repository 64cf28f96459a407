package jobuser

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// User is who a job runs as.
type User struct {
	Name   string   // login name; the uid as a number when it has no passwd entry
	UID    uint32   //
	GID    uint32   // primary group: USER's own, or GROUP of USER:GROUP
	Groups []uint32 // the user's other groups (its own primary one too, under another GROUP)
	Home   string   // its home directory; "/" when it has none
}

// String names the user for messages: "build (uid 1001, gid 1001)".
func (u *User) String() string {
	return fmt.Sprintf("%s (uid %d, gid %d)", u.Name, u.UID, u.GID)
}

// Credential is what a process started as u is given.
func (u *User) Credential() *syscall.Credential {
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: slices.Clone(u.Groups)}
}

// Env are the variables of a job's environment that name its user: HOME,
// USER and LOGNAME.
func (u *User) Env() []string {
	return []string{"HOME=" + u.Home, "USER=" + u.Name, "LOGNAME=" + u.Name}
}

// Dir is where a job of u starts: its home directory, or / when that is
// not a directory, as login(1) does.
func (u *User) Dir() string {
	if fi, err := os.Stat(u.Home); err == nil && fi.IsDir() {
		return u.Home
	}
	return "/"
}

// Lookup finds USER[:GROUP]: a user name or uid, and optionally a group
// name or gid for its primary group (else the user's own). A uid without a
// passwd entry is allowed, with its own number as gid unless GROUP is given,
// no supplementary groups and / as its home.
func Lookup(spec string) (*User, error) {
	name, group, hasGroup := strings.Cut(spec, ":")
	if name == "" || (hasGroup && group == "") || strings.ContainsAny(spec, " \t\n\x00") {
		return nil, fmt.Errorf("user %q: want USER or USER:GROUP", spec)
	}
	u, err := lookupUser(name)
	if err != nil {
		return nil, err
	}
	if hasGroup {
		gid, err := lookupGroup(group)
		if err != nil {
			return nil, err
		}
		u.GID = gid
	}
	// Every group of the user besides the primary one, as login does.
	u.Groups = slices.DeleteFunc(u.Groups, func(g uint32) bool { return g == u.GID })
	return u, nil
}

func lookupUser(name string) (*User, error) {
	pw, err := user.Lookup(name)
	if err != nil && isNumber(name) {
		pw, err = user.LookupId(name)
		var unknown user.UnknownUserIdError
		if errors.As(err, &unknown) {
			id, perr := parseID(name)
			if perr != nil {
				return nil, fmt.Errorf("user %q: %v", name, perr)
			}
			return &User{Name: name, UID: id, GID: id, Home: "/"}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("no user %q on this machine", name)
	}
	uid, err := parseID(pw.Uid)
	if err != nil {
		return nil, fmt.Errorf("user %q: uid %q: %v", name, pw.Uid, err)
	}
	gid, err := parseID(pw.Gid)
	if err != nil {
		return nil, fmt.Errorf("user %q: gid %q: %v", name, pw.Gid, err)
	}
	u := &User{Name: pw.Username, UID: uid, GID: gid, Home: pw.HomeDir}
	if u.Home == "" {
		u.Home = "/"
	}
	ids, err := pw.GroupIds()
	if err != nil {
		return nil, fmt.Errorf("user %q: cannot read its groups: %v", name, err)
	}
	for _, s := range ids {
		if g, err := parseID(s); err == nil && !slices.Contains(u.Groups, g) {
			u.Groups = append(u.Groups, g)
		}
	}
	slices.Sort(u.Groups)
	return u, nil
}

func lookupGroup(name string) (uint32, error) {
	g, err := user.LookupGroup(name)
	if err == nil {
		return parseID(g.Gid)
	}
	if isNumber(name) {
		return parseID(name)
	}
	return 0, fmt.Errorf("no group %q on this machine", name)
}

func isNumber(s string) bool {
	_, err := strconv.ParseUint(s, 10, 32)
	return err == nil
}

func parseID(s string) (uint32, error) {
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil || v == 1<<32-1 { // (uid_t)-1 means "unchanged" to the kernel
		return 0, fmt.Errorf("%q is not a valid id", s)
	}
	return uint32(v), nil
}

// MayRead reports whether u may read the file fi describes by its owner,
// group and mode bits (ACLs and the directories above are not looked at).
func (u *User) MayRead(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	mode := fi.Mode().Perm()
	switch {
	case u.UID == 0:
		return true
	case st.Uid == u.UID:
		return mode&0o400 != 0
	case st.Gid == u.GID || slices.Contains(u.Groups, st.Gid):
		return mode&0o040 != 0
	}
	return mode&0o004 != 0
}
