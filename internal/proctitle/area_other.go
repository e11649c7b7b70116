//go:build !linux

package proctitle

func commandLineArea() []byte { return nil }
