//go:build !linux

package suite

import "os/exec"

// setDeathSignal does nothing where the kernel offers no parent-death
// signal; the suite still stops its children on every path it controls.
func setDeathSignal(*exec.Cmd) {}
