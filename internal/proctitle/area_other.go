//go:build !linux

package proctitle

func commandLineArea() ([]byte, int) { return nil, 0 }
