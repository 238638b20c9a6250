package persistence

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to write the dirty pages of f's first n
// bytes to disk, after waiting for the writeback it started for them
// earlier, and returns without waiting for the new writes (sync_file_range
// with SYNC_FILE_RANGE_WAIT_BEFORE|SYNC_FILE_RANGE_WRITE, as Pebble does
// for its tables). It makes nothing durable: it only starts early what the
// kernel would otherwise write in one burst. It fails on file systems or
// kernels without sync_file_range, which the caller treats as "not
// supported".
func startWriteback(f *os.File, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), 0, n, unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE)
}
