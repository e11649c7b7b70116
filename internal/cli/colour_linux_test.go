package cli

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"unsafe"
)

// openPTY returns the terminal side of a new pseudo-terminal.
func openPTY(t *testing.T) *os.File {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlock pty: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("pty number: %v", e)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open pty: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return tty
}

// Colours and screen codes go to a terminal only, and not when NO_COLOR is
// set (not parallel: it sets NO_COLOR).
func TestColourfulOnlyOnTerminalWithoutNoColor(t *testing.T) {
	tty := openPTY(t)
	t.Setenv("NO_COLOR", "")
	if !colourful(tty) {
		t.Error("a terminal without NO_COLOR gets no colours")
	}
	t.Setenv("NO_COLOR", "1")
	if colourful(tty) {
		t.Error("NO_COLOR=1: a terminal still gets colours")
	}
}
