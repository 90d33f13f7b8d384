//go:build unix && !linux

package features

// mapPopulate: other systems fault pages in as they are read.
const mapPopulate = 0
