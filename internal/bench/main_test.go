package bench_test

import (
	"context"
	"os"
	"testing"

	"github.com/resque-go/resque-go/internal/cli"
	"github.com/resque-go/resque-go/internal/redistest"
)

const (
	redisEnv = "RESQUE_GO_TEST_REDIS"
	// childEnv makes this test binary act as the resque-go binary: the
	// bench starts its worker processes as `<binary> bench worker ...`.
	childEnv = "RESQUE_GO_BENCH_TEST_CHILD"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(cli.Run(context.Background(), append([]string{"resque-go"}, os.Args[1:]...), os.Stdout, os.Stderr, nil))
	}
	os.Exit(redistest.Main(m, redisEnv))
}
