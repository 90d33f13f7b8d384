package features

import "syscall"

// mapPopulate asks mmap to map the file's pages at once.
const mapPopulate = syscall.MAP_POPULATE
