GO      ?= go
BIN     := bin/swapgate
PKGS    := ./...
BENCH   ?= .
BENCHTIME ?= 1s
# BENCHFLAGS are extra swapgate bench-suite flags, e.g. BENCHFLAGS='--rounds 3'.
BENCHFLAGS ?=
# PG_E2E names the end-to-end tests make test runs a second time with the
# service on a temporary PostgreSQL (SWAPGATE_TEST_STORE=postgres): those
# that cover an aggregate of the store through the real server.
PG_E2E  := E2E|EndToEnd|Flows|Quote|Webhook|Onramp|Execute|Deposit|Idempotency|Accounts|Partner|Terminal|Settle|Earnings|Transactions|Stats|Portal
# PG_E2E_PEBBLE are the tests PG_E2E matches that the PostgreSQL pass
# leaves out: they write the Pebble store directly (seedStore; their
# PostgreSQL counterparts are store/postgres's tests) or run on each
# backend themselves (TestStoreBackendsEndToEnd). internal/testrun's
# TestPebbleOnlyTestsLeftOut holds this list to the tests.
PG_E2E_PEBBLE := ^(TestEarningsAndSettleE2E|TestStatsAndTransactionsE2E|TestPartnerQuoteFeesAndLedger|TestStoreBackendsEndToEnd)$$
# NORACE_PKGS and NORACE_TESTS are the allocation tests (testing.AllocsPerRun),
# built only without the race detector (//go:build !race), whose
# instrumentation allocates: make test runs them in a pass without it, and
# the race pass has nothing to skip. internal/testrun's
# TestAllocationTestsRunWithoutRace holds these lists to the tests.
NORACE_PKGS  := ./bench/bare
NORACE_TESTS := ^(TestHandlerAllocatesNothing)$$
# TESTRUN runs go test -json through internal/testrun: go test's usual
# output, then the skipped tests with their reasons. make test's passes
# run with CI=true unless CI is set (CI=false make test): a test that
# misses a tool scripts/test-deps installs then fails instead of skipping
# (internal/testdeps).
TESTRUN = CI=$${CI:-true} GO=$(GO) $(GO) run ./internal/testrun
# IMAGE is the image make image builds, IMAGE_ARCHIVE the OCI archive it
# writes it to (docker load, kind load image-archive, ctr images import).
IMAGE   ?= swapgate:latest
IMAGE_ARCHIVE ?= bin/swapgate-image.tar
# FUZZTIME is how long make fuzz runs each fuzz target.
FUZZTIME ?= 30s

.PHONY: build run test test-deps fuzz lint bench bench-quick bench-go image clean

## build: compile the service to bin/swapgate
build:
	$(GO) build -o $(BIN) ./cmd/swapgate

## run: serve on 127.0.0.1:8080 with the sandbox upstreams and ./data
run: build
	./$(BIN) serve

## test: every test, with the race detector (installs Chromium, Node, npm, PostgreSQL and taskset first where they are missing), the allocation tests again without it, the end-to-end tests of every aggregate again with the service on PostgreSQL, then every fuzz target for 2 s; each pass ends with its skipped tests and why
test: test-deps
	$(TESTRUN) -race -count=1 -timeout 30m $(PKGS)
	$(TESTRUN) -count=1 -run '$(NORACE_TESTS)' $(NORACE_PKGS)
	SWAPGATE_TEST_STORE=postgres $(TESTRUN) -race -count=1 -timeout 30m -run '$(PG_E2E)' -skip '$(PG_E2E_PEBBLE)' ./cmd/swapgate
	@GO=$(GO) scripts/fuzz-smoke

## fuzz: every fuzz target of scripts/fuzz-targets for FUZZTIME each (default 30s)
fuzz:
	@GO=$(GO) FUZZTIME=$(FUZZTIME) scripts/fuzz

## test-deps: what the tests need beyond Go (Chromium for the browser tests, Node and npm for the walkthroughs and the TypeScript client, PostgreSQL for the PostgreSQL store, taskset for the cluster bench)
test-deps:
	@scripts/test-deps

## lint: gofmt and go vet; fails on any finding
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: Swapgate against the bare-server limit, every scenario in five rounds with find-max (bench/README.md); results in bench/results/<time>/
bench: build
	./$(BIN) bench-suite --preset full --out bench/results $(BENCHFLAGS)

## bench-quick: the same table in under two minutes (two short rounds, find-max of ping only)
bench-quick: build
	./$(BIN) bench-suite --preset quick --out bench/results $(BENCHFLAGS)

## bench-go: the Go benchmarks, with allocations
bench-go:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(PKGS)

## image: the container image of the Dockerfile (a static bin/swapgate, CA certificates, user 65532, no shell) as an OCI archive, IMAGE_ARCHIVE, built without Docker
image:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o bin/image/swapgate ./cmd/swapgate
	$(GO) run ./internal/ociimage --binary bin/image/swapgate --name $(IMAGE) --out $(IMAGE_ARCHIVE)

clean:
	rm -rf bin
