package suite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// userHZ is the unit of the CPU times in /proc/PID/stat. The kernel reports
// them in USER_HZ, which is 100 on every Linux architecture Go supports
// (it is fixed for the user ABI, unlike the kernel's own HZ); reading it
// with sysconf(_SC_CLK_TCK) would need cgo for the same answer.
const userHZ = 100

// ProcCPU returns the CPU time (user plus system) process pid has used so
// far, from /proc/PID/stat.
func ProcCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return parseProcStat(b)
}

// parseProcStat reads utime and stime, fields 14 and 15 of a stat line.
// The command name (field 2) is in parentheses and may hold spaces or
// parentheses itself, so fields are counted from the last ')'.
func parseProcStat(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat: no command name in %q", b)
	}
	fields := bytes.Fields(b[i+1:])
	// fields[0] is field 3 (state); utime is field 14, stime field 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("proc stat: %d fields after the command name, want at least 13", len(fields))
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("proc stat: utime %q stime %q", fields[11], fields[12])
	}
	return time.Duration(utime+stime) * time.Second / userHZ, nil
}

// ProcRSS returns the resident set size of process pid in bytes, from the
// VmRSS line of /proc/PID/status.
func ProcRSS(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	return parseProcStatus(b)
}

func parseProcStatus(b []byte) (int64, error) {
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("proc status: VmRSS line %q", line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc status: VmRSS %q: %w", f[0], err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("proc status: no VmRSS line (a kernel thread, or a zombie)")
}

// SelfCPU returns the CPU time (user plus system) this process has used so
// far, from getrusage(RUSAGE_SELF): the generator's own cost, which tells
// whether a limit reached was the server's or the generator's.
func SelfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// CPUShare is the share of the machine's cores that cpu time over wall time
// amounts to: 1 means every core busy for the whole time.
func CPUShare(cpu, wall time.Duration, cores int) float64 {
	if wall <= 0 || cores <= 0 {
		return 0
	}
	return cpu.Seconds() / wall.Seconds() / float64(cores)
}

// ProcSample is one reading of a process.
type ProcSample struct {
	// T is seconds since the suite started.
	T float64 `json:"t"`
	// CPU is the share of the machine's cores the process used since the
	// previous sample (0 to 1).
	CPU float64 `json:"cpu"`
	// RSS is its resident memory in bytes.
	RSS int64 `json:"rss"`
}

// ProcSeries is the samples of one process.
type ProcSeries struct {
	Name    string       `json:"name"`
	PID     int          `json:"pid"`
	Samples []ProcSample `json:"samples"`
}

// Sampler reads one process's CPU and memory every interval until
// stopped, for the report's charts over time.
type Sampler struct {
	name     string
	pid      int
	origin   time.Time
	interval time.Duration
	cores    int
	mu       sync.Mutex
	samples  []ProcSample
	cancel   context.CancelFunc
	done     chan struct{}
}

// maxSamples bounds a series: at the quickest interval the suite uses, more
// than any bounded run needs.
const maxSamples = 20000

// StartSampler starts sampling pid every interval; times are relative to
// origin. A read error (the process exited) ends the series quietly.
func StartSampler(name string, pid int, origin time.Time, interval time.Duration) *Sampler {
	ctx, cancel := context.WithCancel(context.Background())
	s := &Sampler{name: name, pid: pid, origin: origin, interval: interval, cores: runtime.NumCPU(), cancel: cancel, done: make(chan struct{})}
	go s.loop(ctx)
	return s
}

func (s *Sampler) loop(ctx context.Context) {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	lastCPU, err := ProcCPU(s.pid)
	if err != nil {
		return
	}
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		cpu, err1 := ProcCPU(s.pid)
		rss, err2 := ProcRSS(s.pid)
		if err1 != nil || err2 != nil {
			return
		}
		now := time.Now()
		sample := ProcSample{T: now.Sub(s.origin).Seconds(), CPU: CPUShare(cpu-lastCPU, now.Sub(last), s.cores), RSS: rss}
		lastCPU, last = cpu, now
		s.mu.Lock()
		if len(s.samples) < maxSamples {
			s.samples = append(s.samples, sample)
		}
		s.mu.Unlock()
	}
}

// Stop ends sampling and returns the series.
func (s *Sampler) Stop() ProcSeries {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return ProcSeries{Name: s.name, PID: s.pid, Samples: append([]ProcSample(nil), s.samples...)}
}
