GO      ?= go
BIN     := bin/swapgate
PKGS    := ./...
BENCH   ?= .
BENCHTIME ?= 1s

.PHONY: build run test test-deps lint bench clean

## build: compile the service to bin/swapgate
build:
	$(GO) build -o $(BIN) ./cmd/swapgate

## run: serve on 127.0.0.1:8080 with the sandbox upstreams and ./data
run: build
	./$(BIN) serve

## test: every test, with the race detector (installs Chromium first where it is missing)
test: test-deps
	$(GO) test -race -count=1 -timeout 30m $(PKGS)

## test-deps: what the tests need beyond Go (Chromium for the browser tests)
test-deps:
	@scripts/test-deps

## lint: gofmt and go vet; fails on any finding
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

## bench: the Go benchmarks, with allocations
bench:
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) $(PKGS)

clean:
	rm -rf bin
