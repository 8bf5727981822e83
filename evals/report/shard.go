package report

import (
	"fmt"
	"hash/fnv"
	"io"
	"strconv"
	"strings"
)

// ParseShard parses a shard selector "i/n" (1 <= i <= n), as given to
// --shard. Errors start with "parse shard".
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	if !ok {
		return 0, 0, fmt.Errorf("parse shard %q: want i/n, for example 1/4", s)
	}
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("parse shard %q: want i/n with integers, for example 1/4", s)
	}
	if n < 1 || i < 1 || i > n {
		return 0, 0, fmt.Errorf("parse shard %q: want 1 <= i <= n", s)
	}
	return i, n, nil
}

// InShard reports whether the run belongs to shard i of n (1-based): the
// 32-bit FNV-1a hash of runID modulo n equals i-1. The assignment depends
// only on the run id, so every shard agrees on it whatever the suite order.
// It is false when i or n is out of range.
func InShard(runID string, i, n int) bool {
	if n < 1 || i < 1 || i > n {
		return false
	}
	h := fnv.New32a()
	io.WriteString(h, runID)
	return int(h.Sum32()%uint32(n)) == i-1
}
