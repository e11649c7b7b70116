//go:build !linux

package proctitle

func commandLineArea() ([]byte, int, int) { return nil, 0, 0 }
