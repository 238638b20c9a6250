//go:build race

package bare

// raceEnabled is set when the race detector is on: its instrumentation
// allocates, so allocation counts mean nothing then.
const raceEnabled = true
