//go:build !linux

package local

import (
	"errors"
	"os"
)

// startWriteback is Linux's sync_file_range; elsewhere the kernel writes
// the ticket log back on its own schedule.
func startWriteback(*os.File, int64, int64) error { return errors.ErrUnsupported }
