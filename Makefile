GO ?= go
BIN := bin/databrew-stage

.PHONY: all build test test-short lint demo bench clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/databrew-stage

## test: formatting, vet, and every test with the race detector
test: lint
	$(GO) test -race -count=1 ./...

## test-short: the quick subset, without the race detector
test-short:
	$(GO) test -short ./...

lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

## demo: crawl the bundled catalog site twice, offline
demo:
	$(GO) run ./cmd/databrew-stage demo

clean:
	rm -rf bin databrew-demo
