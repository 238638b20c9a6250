package suite

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the child if the suite dies first
// (killed, crashed), so that no server outlives a run, and puts the child
// in a process group of its own, so that a Ctrl-C at the terminal reaches
// the suite alone, which then stops its children in order and still writes
// what it measured.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
