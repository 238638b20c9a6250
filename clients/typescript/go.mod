module github.com/swapgate/swapgate/clients/typescript

// This file keeps npm's node_modules out of the Go module: ./... stops at
// a directory with its own go.mod. The package here is TypeScript only.

go 1.26
