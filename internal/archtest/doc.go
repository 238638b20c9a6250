// Package archtest holds the import rules of the module as a test: which
// layer may import which, and above all that the simulator (the sandbox's
// market, chains and their actor) is reached only from the composition
// root, so that live mode cannot run sandbox code by accident. It has no
// code of its own; `go test ./internal/archtest` checks the rules against
// `go list` of the module. Three rules have files of their own: the domain
// dials nothing (dial_test.go, kept file by file on routing/domain's
// imports of the standard library and go-ethereum), only the binary
// imports the composition root (root_test.go, tests' imports included),
// and no store interface has more than twenty methods (interfaces_test.go,
// over the module's source).
package archtest
