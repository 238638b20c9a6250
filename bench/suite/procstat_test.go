package suite

import (
	"os"
	"runtime"
	"testing"
	"time"
)

// burn spins until this process has used want more CPU time, or 5 s pass.
func burn(t *testing.T, want time.Duration) {
	t.Helper()
	start, err := SelfCPU()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	x := 0
	for time.Now().Before(deadline) {
		for i := range 100000 {
			x += i
		}
		if now, _ := SelfCPU(); now-start >= want {
			break
		}
	}
	runtime.KeepAlive(x)
}

func TestProcCPUFollowsOwnProcess(t *testing.T) {
	pid := os.Getpid()
	before, err := ProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	selfBefore, _ := SelfCPU()
	burn(t, 200*time.Millisecond)
	after, err := ProcCPU(pid)
	if err != nil {
		t.Fatal(err)
	}
	selfAfter, _ := SelfCPU()
	procDelta, selfDelta := after-before, selfAfter-selfBefore
	// /proc counts in 10 ms ticks and getrusage in microseconds; both saw
	// the same burn.
	if procDelta < 150*time.Millisecond || procDelta > selfDelta+100*time.Millisecond {
		t.Fatalf("/proc says %v of CPU, getrusage %v", procDelta, selfDelta)
	}
}

func TestProcRSSFollowsOwnProcess(t *testing.T) {
	pid := os.Getpid()
	before, err := ProcRSS(pid)
	if err != nil || before <= 0 {
		t.Fatalf("rss %d: %v", before, err)
	}
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	after, err := ProcRSS(pid)
	runtime.KeepAlive(buf)
	if err != nil || after-before < 32<<20 {
		t.Fatalf("rss %d -> %d after touching 64 MiB: %v", before, after, err)
	}
}

func TestParseProcStat(t *testing.T) {
	// A command name with spaces and parentheses; utime 250, stime 50.
	line := []byte("4242 (we (ird) name) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 9 0 123 456 789\n")
	d, err := parseProcStat(line)
	if err != nil || d != 3*time.Second {
		t.Fatalf("got %v, %v; want 3s", d, err)
	}
	if _, err := parseProcStat([]byte("4242 (short) S 1 2")); err == nil {
		t.Fatal("short line accepted")
	}
	rss, err := parseProcStatus([]byte("Name:\tx\nVmPeak:\t  900 kB\nVmRSS:\t  1234 kB\nThreads:\t3\n"))
	if err != nil || rss != 1234<<10 {
		t.Fatalf("rss %d: %v", rss, err)
	}
	if _, err := parseProcStatus([]byte("Name:\tkthreadd\n")); err == nil {
		t.Fatal("status without VmRSS accepted")
	}
}

func TestSamplerOnOwnProcess(t *testing.T) {
	origin := time.Now()
	s := StartSampler("self", os.Getpid(), origin, 20*time.Millisecond)
	burn(t, 100*time.Millisecond)
	time.Sleep(60 * time.Millisecond)
	series := s.Stop()
	if series.Name != "self" || series.PID != os.Getpid() || len(series.Samples) < 3 {
		t.Fatalf("series %+v", series)
	}
	var busy float64
	for i, p := range series.Samples {
		if p.RSS <= 0 || p.CPU < 0 || (i > 0 && p.T <= series.Samples[i-1].T) {
			t.Fatalf("sample %d: %+v", i, p)
		}
		busy = max(busy, p.CPU)
	}
	if busy == 0 {
		t.Fatalf("no CPU seen while burning: %+v", series.Samples)
	}
	if n := len(s.Stop().Samples); n != len(series.Samples) {
		t.Fatalf("second Stop: %d samples, want %d", n, len(series.Samples))
	}
}

func TestCPUShare(t *testing.T) {
	if got := CPUShare(time.Second, time.Second, 2); got != 0.5 {
		t.Fatalf("one core busy of two: %v", got)
	}
	if CPUShare(time.Second, 0, 2) != 0 || CPUShare(time.Second, time.Second, 0) != 0 {
		t.Fatal("degenerate inputs must give 0")
	}
}
