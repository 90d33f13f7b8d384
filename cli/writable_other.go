//go:build !unix

package cli

// writable is not checked in advance where access(2) is missing: the
// write itself then fails with the system's reason.
func writable(string) error { return nil }
