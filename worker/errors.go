package worker

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Error is a job failure with the fields a failed entry shows. Handlers
// return it to choose the exception name and backtrace; any other error is
// recorded with its Go type as the exception.
type Error struct {
	Exception string
	Message   string
	Backtrace []string
}

func (e *Error) Error() string { return e.Exception + ": " + e.Message }

// Describe gives err the fields of a failed entry: an *Error's own (a
// missing exception named by its Go type, a nil backtrace as none), or for
// any other error its Go type ("Error" for plain errors.New and fmt.Errorf
// values), its text and no backtrace.
func Describe(err error) (exception, message string, backtrace []string) {
	return exceptionName(err), errorMessage(err), errorBacktrace(err)
}

// exceptionName names an error the way a failed entry shows it.
func exceptionName(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Exception != "" {
		return e.Exception
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	name := t.String()
	switch name {
	case "errors.errorString", "fmt.wrapError", "fmt.wrapErrors", "errors.joinError":
		return "Error"
	}
	return strings.TrimPrefix(name, "*")
}

func errorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return err.Error()
}

func errorBacktrace(err error) []string {
	var e *Error
	if errors.As(err, &e) && e.Backtrace != nil {
		return e.Backtrace
	}
	return []string{}
}

// panicError carries a recovered panic and its stack.
func panicError(v any, stack []byte) *Error {
	lines := strings.Split(strings.TrimSpace(string(stack)), "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	return &Error{Exception: "ResqueGo::Panic", Message: fmt.Sprint(v), Backtrace: lines}
}
