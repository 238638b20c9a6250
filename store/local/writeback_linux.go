package local

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback asks the kernel to start writing the dirty pages of f's
// bytes [off, off+n) to disk and returns without waiting for the writes
// (sync_file_range with SYNC_FILE_RANGE_WRITE alone). It makes nothing
// durable: it only starts early, and evenly, what the kernel would
// otherwise write in one burst. Unlike Pebble, which also waits for the
// previous range (SYNC_FILE_RANGE_WAIT_BEFORE) to bound its dirty data,
// it never waits for the disk: a ticket commit that waited for it could
// fill the ticket keeper's buffer and hold quotes back during a disk
// stall that the page cache absorbs today. It fails on file systems or
// kernels without sync_file_range, which the caller treats as "not
// supported".
func startWriteback(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
