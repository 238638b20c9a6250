package suite

import (
	"os/exec"
	"syscall"
)

// setDeathSignal has the kernel kill the child if the suite dies first
// (killed, crashed), so that no server outlives a run.
func setDeathSignal(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
