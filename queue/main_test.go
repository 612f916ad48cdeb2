package queue_test

import (
	"os"
	"testing"

	"github.com/ria-go/ria/internal/redistest"
)

func TestMain(m *testing.M) {
	// The SIGKILL test re-executes this binary as a worker process.
	if os.Getenv(workerProcessEnv) != "" {
		os.Exit(workerProcess())
	}
	redistest.Main(m)
}
