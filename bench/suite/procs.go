package suite

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// child is a process the suite started: a server, the webhook receiver.
// The suite ends only its own children, by their pid.
type child struct {
	name   string
	cmd    *exec.Cmd
	addr   string
	log    *os.File
	exited chan struct{}
	// readers is closed once the output readers have seen EOF.
	readers chan struct{}
	waitErr error
}

// childSpec is how to start one child.
type childSpec struct {
	name    string
	args    []string
	env     []string
	logPath string
	// addrOf finds the listen address in a line the child writes to
	// stderr once it is ready.
	addrOf func(line string) (string, bool)
	// onStdout, when set, gets each stdout line with the time it was read
	// (the receiver's deliveries); otherwise stdout goes to the log.
	onStdout func(line []byte, at time.Time)
	// cpus, when set, pins the child to these cores (taskset's list), as
	// a cluster's nodes are.
	cpus string
}

// childEnv is the environment of children: the suite's own without any
// SWAPGATE_* variable, which would otherwise change the servers' settings
// behind the suite's back, plus extra.
func childEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SWAPGATE_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// startChild starts bin with spec and waits until it reports its address,
// it exits, ctx ends or timeout passes. Its stderr (and stdout unless
// spec.onStdout takes it) is copied to spec.logPath.
func startChild(ctx context.Context, bin string, spec childSpec, timeout time.Duration) (*child, error) {
	logf, err := os.Create(spec.logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: log: %w", spec.name, err)
	}
	cmd := exec.Command(bin, spec.args...)
	if spec.cpus != "" {
		// taskset execs bin in its own process: the pid stays the node's.
		cmd = exec.Command("taskset", append([]string{"--cpu-list", spec.cpus, bin}, spec.args...)...)
	}
	cmd.Env = spec.env
	setDeathSignal(cmd)
	errR, errW, err := os.Pipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	cmd.Stderr = errW
	var outR, outW *os.File
	if spec.onStdout != nil {
		if outR, outW, err = os.Pipe(); err != nil {
			logf.Close()
			errR.Close()
			errW.Close()
			return nil, err
		}
		cmd.Stdout = outW
	} else {
		cmd.Stdout = logf
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		errR.Close()
		errW.Close()
		if outR != nil {
			outR.Close()
			outW.Close()
		}
		return nil, fmt.Errorf("%s: start %s: %w", spec.name, bin, err)
	}
	// The child holds the write ends now; the readers see EOF when it
	// exits.
	errW.Close()
	if outW != nil {
		outW.Close()
	}
	c := &child{name: spec.name, cmd: cmd, log: logf, exited: make(chan struct{}), readers: make(chan struct{})}
	addrCh := make(chan string, 1)
	var readersLeft = 1
	doneReading := make(chan struct{}, 2)
	go func() {
		defer func() { doneReading <- struct{}{} }()
		sc := bufio.NewScanner(errR)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			line := sc.Text()
			_, _ = io.WriteString(logf, line+"\n")
			if !found {
				if a, ok := spec.addrOf(line); ok {
					found = true
					addrCh <- a
				}
			}
		}
		errR.Close()
	}()
	if outR != nil {
		readersLeft++
		go func() {
			defer func() { doneReading <- struct{}{} }()
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 64<<10), 4<<20)
			for sc.Scan() {
				spec.onStdout(sc.Bytes(), time.Now())
			}
			outR.Close()
		}()
	}
	go func() {
		for range readersLeft {
			<-doneReading
		}
		close(c.readers)
	}()
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	select {
	case c.addr = <-addrCh:
		return c, nil
	case <-c.exited:
		<-c.readers
		logf.Close()
		return nil, fmt.Errorf("%s exited before it listened (%v); see %s", spec.name, c.waitErr, spec.logPath)
	case <-timer.C:
		c.stop(5 * time.Second)
		return nil, fmt.Errorf("%s did not report its address within %s; see %s", spec.name, timeout, spec.logPath)
	case <-ctx.Done():
		c.stop(5 * time.Second)
		return nil, ctx.Err()
	}
}

// pid is the child's process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// stop asks the child to end with SIGTERM, kills it after grace, and waits
// for it and its output. It reports an exit other than the one asked for.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.exited:
	default:
		_ = c.cmd.Process.Signal(syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-c.exited:
			t.Stop()
		case <-t.C:
			_ = c.cmd.Process.Kill()
			<-c.exited
		}
	}
	select {
	case <-c.readers:
	case <-time.After(grace):
		// A grandchild holding the pipe open must not hang the suite.
	}
	c.log.Close()
	var exit *exec.ExitError
	if c.waitErr != nil && !(errors.As(c.waitErr, &exit) && exit.ExitCode() == 0) {
		return fmt.Errorf("%s: %w", c.name, c.waitErr)
	}
	return nil
}

// alive reports whether the child is still running.
func (c *child) alive() bool {
	select {
	case <-c.exited:
		return false
	default:
		return true
	}
}

// jsonAddr finds the address in a JSON log line whose msg is msg, as
// `swapgate serve` ("swapgate serving") and `swapgate bench-bare` ("bench-bare
// serving") print when they listen.
func jsonAddr(msg string) func(string) (string, bool) {
	return func(line string) (string, bool) {
		if !strings.Contains(line, `"msg":"`+msg+`"`) {
			return "", false
		}
		_, rest, ok := strings.Cut(line, `"addr":"`)
		if !ok {
			return "", false
		}
		addr, _, ok := strings.Cut(rest, `"`)
		return addr, ok && addr != ""
	}
}

// receiverAddr finds the address in the webhook receiver's
// "listening on https://ADDR/ — certificate in FILE" line.
func receiverAddr(line string) (string, bool) {
	_, rest, ok := strings.Cut(line, "listening on https://")
	if !ok {
		return "", false
	}
	addr, _, ok := strings.Cut(rest, "/")
	return addr, ok && addr != ""
}
