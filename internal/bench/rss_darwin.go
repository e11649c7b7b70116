package bench

// maxRSSBytes converts ru_maxrss, which macOS reports in bytes.
func maxRSSBytes(v int64) int64 { return v }
