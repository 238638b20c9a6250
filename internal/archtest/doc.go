// Package archtest holds the import rules of the module as a test: which
// layer may import which, and above all that the simulator (the sandbox's
// market, chains and their actor) is reached only from the composition
// root, so that live mode cannot run sandbox code by accident. It has no
// code of its own; `go test ./internal/archtest` checks the rules against
// `go list` of the module, and the size of the store's interfaces against
// the module's source (interfaces_test.go).
package archtest
