// Package cli is dpfeat's command line: one file per command, each thin —
// parse and check flags, call a package, print text or --json. No algorithm
// lives here.
//
// Exit codes (docs/design.md): 0 on success, 1 on a user error (a
// bad flag, a bad file, an impossible budget) with a one-line message that
// names the culprit, 2 on an internal error. With --json a command prints one
// JSON object on stdout; progress and logs go to stderr.
package cli
