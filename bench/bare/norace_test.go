//go:build !race

package bare

const raceEnabled = false
