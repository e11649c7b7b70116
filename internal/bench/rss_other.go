//go:build !darwin

package bench

// maxRSSBytes converts ru_maxrss, which Linux and the BSDs report in KiB.
func maxRSSBytes(v int64) int64 { return v << 10 }
