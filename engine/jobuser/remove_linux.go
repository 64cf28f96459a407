package jobuser

import (
	"errors"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// removeTree removes parent/name and what it holds. A directory is first
// made this process's own and 0700 (with CAP_CHOWN where it belongs to
// another user), so it can be read and emptied whatever its user did to it.
// Every step goes through a file descriptor of the directory above, and
// nothing is opened through a symbolic link: whatever the job left or
// still swaps in, the removal stays inside the tree.
func removeTree(parent, name string) error {
	fd, err := unix.Open(parent, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: parent, Err: err}
	}
	defer unix.Close(fd)
	return removeAt(fd, name, parent+"/"+name)
}

// removeAt removes name in the directory fd; path names it for errors.
func removeAt(dirfd int, name, path string) error {
	err := unix.Unlinkat(dirfd, name, 0)
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
		return nil
	case !errors.Is(err, unix.EISDIR): // what Linux says to unlinking a directory
		return &os.PathError{Op: "unlink", Path: path, Err: err}
	}
	if err := takeDir(dirfd, name); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return &os.PathError{Op: "chown", Path: path, Err: err}
	}
	sub, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(sub), path)
	names, err := f.Readdirnames(-1)
	var first error
	if err != nil {
		first = err
	}
	for _, n := range names {
		if err := removeAt(sub, n, path+"/"+n); err != nil && first == nil {
			first = err
		}
	}
	f.Close()
	if first != nil {
		return first
	}
	if err := unix.Unlinkat(dirfd, name, unix.AT_REMOVEDIR); err != nil && !errors.Is(err, unix.ENOENT) {
		return &os.PathError{Op: "rmdir", Path: path, Err: err}
	}
	return nil
}

// takeDir makes the directory name in dirfd owned by this process's user
// and mode 0700. It is opened as a path only (O_PATH), which needs no right
// to read it, and never through a link.
func takeDir(dirfd int, name string) error {
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if int(st.Uid) != os.Geteuid() {
		if err := unix.Fchownat(fd, "", os.Geteuid(), -1, unix.AT_EMPTY_PATH); err != nil {
			return err
		}
	}
	if st.Mode&0o7777 == 0o700 && int(st.Uid) == os.Geteuid() {
		return nil
	}
	// A path-only descriptor cannot be chmod'ed itself; its /proc link
	// names exactly the directory it was opened on.
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), 0o700)
}
