//go:build unix

package cli

import "golang.org/x/sys/unix"

// writable reports whether this process may create files in dir (the
// effective user's permissions and a read-only mount, as access(2) sees
// them).
func writable(dir string) error {
	return unix.Access(dir, unix.W_OK|unix.X_OK)
}
