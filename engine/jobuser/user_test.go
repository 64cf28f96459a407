package jobuser

import (
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestLookup(t *testing.T) {
	t.Parallel()
	root, err := Lookup("root")
	if err != nil || root.UID != 0 || root.GID != 0 || root.Name != "root" || root.Home == "" {
		t.Fatalf("Lookup(root) = %+v, %v", root, err)
	}
	if u, err := Lookup("0:0"); err != nil || u.UID != 0 || u.Name != "root" {
		t.Errorf("Lookup(0:0) = %+v, %v; want root by its ids", u, err)
	}
	// A uid without a passwd entry, as containers run them.
	if u, err := Lookup("4000123"); err != nil || u.UID != 4000123 || u.GID != 4000123 || u.Home != "/" || len(u.Groups) != 0 {
		t.Errorf("Lookup(4000123) = %+v, %v; want that uid and gid, home /", u, err)
	}
	if u, err := Lookup("4000123:5"); err != nil || u.GID != 5 {
		t.Errorf("Lookup(4000123:5) = %+v, %v; want gid 5", u, err)
	}
	for _, bad := range []string{"", ":", "root:", ":root", "no-such-user-of-jobctl", "root:no-such-group-of-jobctl", "ro ot", "4294967295"} {
		if u, err := Lookup(bad); err == nil {
			t.Errorf("Lookup(%q) = %+v, want an error", bad, u)
		}
	}
}

// The groups of USER:GROUP are GROUP first, then every other group of the
// user, its own primary one among them.
func TestLookupGroups(t *testing.T) {
	t.Parallel()
	pw, err := user.Lookup("root")
	if err != nil {
		t.Skip("no user root here")
	}
	ids, _ := pw.GroupIds()
	u, err := Lookup("root:65534")
	if err != nil {
		t.Fatal(err)
	}
	if u.GID != 65534 || slices.Contains(u.Groups, 65534) || (len(ids) > 0 && !slices.Contains(u.Groups, 0)) {
		t.Errorf("Lookup(root:65534) = gid %d, groups %v; want 65534 and root's own groups beside it", u.GID, u.Groups)
	}
	c := u.Credential()
	if c.Uid != 0 || c.Gid != 65534 || !slices.Equal(c.Groups, u.Groups) || c.NoSetGroups {
		t.Errorf("Credential = %+v", c)
	}
}

func TestUserEnvAndDir(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	u := &User{Name: "build", UID: 1001, GID: 1001, Home: home}
	if got := strings.Join(u.Env(), " "); got != "HOME="+home+" USER=build LOGNAME=build" {
		t.Errorf("Env = %s", got)
	}
	if u.Dir() != home {
		t.Errorf("Dir = %s, want the home %s", u.Dir(), home)
	}
	u.Home = filepath.Join(home, "missing")
	if u.Dir() != "/" {
		t.Errorf("Dir of a user without a home = %s, want /", u.Dir())
	}
}

func TestMayRead(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	uid, gid := uint32(os.Getuid()), uint32(os.Getgid())
	for _, tc := range []struct {
		u    User
		mode os.FileMode
		want bool
	}{
		{User{UID: uid + 1, GID: gid}, 0o640, true},                            // by its group
		{User{UID: uid + 1, GID: gid + 1, Groups: []uint32{gid}}, 0o640, true}, // by a supplementary group
		{User{UID: uid + 1, GID: gid + 1}, 0o640, false},                       // neither owner nor group
		{User{UID: uid + 1, GID: gid + 1}, 0o604, true},                        // others may
		{User{UID: uid + 1, GID: gid}, 0o604, false},                           // its group may not
	} {
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if uid == 0 {
			tc.u.UID += 1000 // never root, who may read anything
		}
		if got := tc.u.MayRead(fi); got != tc.want {
			t.Errorf("uid %d gid %d groups %v, mode %04o: MayRead = %v, want %v", tc.u.UID, tc.u.GID, tc.u.Groups, tc.mode, got, tc.want)
		}
	}
}
