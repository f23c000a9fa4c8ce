GO ?= go
BIN := bin/databrew-stage

.PHONY: all build build-gcs build-iceberg install image tools chromium test test-short test-crash fuzz lint demo demo-iceberg bench bench-1m clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/databrew-stage

## build-gcs: the binary with Google Cloud Storage (gs:// outputs) compiled
## in, -tags gcs, into bin/databrew-stage-gcs. Google's client makes a
## binary 20 MiB larger stripped, so the default build leaves it out;
## disable_grpc_modules leaves out the client's gRPC Direct Connectivity
## (xDS, Envoy), cutting that to 7 MiB (docs/outputs.md, Binary size)
GCS_TAGS := gcs,disable_grpc_modules
build-gcs:
	$(GO) build -tags $(GCS_TAGS) -o $(BIN)-gcs ./cmd/databrew-stage

## build-iceberg: the binary with Apache Iceberg tables (iceberg:// outputs)
## compiled in, -tags iceberg, into bin/databrew-stage-iceberg; iceberg-go
## with its SQL and REST catalogs, SQLite and PostgreSQL drivers makes a
## binary about 43 MB larger stripped, so the default build leaves it out
build-iceberg:
	$(GO) build -tags iceberg -o $(BIN)-iceberg ./cmd/databrew-stage

## install: go install the binary into GOBIN (default: GOPATH/bin), and say
## whether that folder is on the PATH
install:
	$(GO) install ./cmd/databrew-stage
	@dir=$$($(GO) env GOBIN); [ -n "$$dir" ] || dir=$$($(GO) env GOPATH)/bin; \
	case ":$$PATH:" in *":$$dir:"*) echo "databrew-stage is installed in $$dir (on your PATH)";; \
	*) echo "databrew-stage is installed in $$dir, which is not on your PATH: add it with export PATH=\"$$dir:\$$PATH\"";; esac

## image: the container image as a tarball, bin/databrew-stage-image.tar,
## built without a container engine (internal/image): a static
## linux/amd64 binary, a non-root user, CA certificates, /data for state
## and exports; load it with docker load -i or podman load -i, or push it
## with a registry tool (skopeo copy docker-archive:..., crane push)
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
image:
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 $(GO) build -trimpath -ldflags "-s -w -X github.com/databrew/databrew-stage/internal/buildinfo.Version=$(VERSION)" -o bin/linux-amd64/databrew-stage ./cmd/databrew-stage
	$(GO) run ./internal/image/build -bin bin/linux-amd64/databrew-stage -o bin/databrew-stage-image.tar -tag databrew-stage:$(VERSION) -version $(VERSION)

## tools: the programs tests run, installed into bin/tools when missing:
## versitygw, the S3 server of internal/testkit/s3test, and Azurite, the Azure Blob
## server of internal/testkit/azuritetest, with npm (each harness installs the same
## version itself when a test runs without it); and Debian's Chromium for
## the [render] tests (see chromium)
VERSITYGW_VERSION := v1.8.0
AZURITE_VERSION := 3.37.0
tools: bin/tools/versitygw bin/tools/azurite/node_modules/.bin/azurite-blob chromium

## chromium: the browser of [render] (the CHROMIUM variable, else chromium,
## chromium-browser, google-chrome or headless-shell on PATH); when there is
## none, Debian's chromium is installed with apt-get (as root; elsewhere
## the tests that need it skip, saying so)
chromium:
	@if [ -n "$$CHROMIUM" ] || command -v chromium >/dev/null || command -v chromium-browser >/dev/null || \
		command -v google-chrome >/dev/null || command -v headless-shell >/dev/null; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
		echo "installing chromium with apt-get"; \
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
		{ apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null; }; \
	else echo "no chromium, and not root: the [render] tests will skip (apt-get install chromium, or set CHROMIUM)"; fi

bin/tools/versitygw:
	GOBIN=$(CURDIR)/bin/tools $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)

bin/tools/azurite/node_modules/.bin/azurite-blob:
	npm install --prefix $(CURDIR)/bin/tools/azurite --save-exact --no-audit --no-fund azurite@$(AZURITE_VERSION)

## test: formatting, vet, and every test with the race detector; then, built
## with build-gcs's tags, the tests of gs:// (the storage suite and the
## binary publishing on fake-gcs-server) and of the config's URLs; then,
## built with Iceberg, the runs publishing into an Iceberg table
test: lint tools
	$(GO) test -race -count=1 ./...
	$(GO) test -race -count=1 -tags $(GCS_TAGS) -run 'GCS|OutputURLs' ./config ./objstore ./cmd/databrew-stage
	$(GO) test -race -count=1 -tags iceberg -run 'Iceberg' ./config ./stage ./cmd/databrew-stage

## test-crash: 100 trials of kill -9 at random moments and at every publish
## step, into a local folder (with and without [revisit]), into S3
## (versitygw), and of logical runs of 4 shards into S3 (2 shards killed,
## run again, then the commit); every item version must reach the exports
## exactly once. Then, built with Iceberg, 100 trials into an Iceberg table
## (SQLite catalog, local warehouse) of whole runs (TestCrashLoopIceberg)
## and of logical runs of 4 shards (TestCrashLoopShardsIceberg), with a
## reader polling it: no snapshot holds part of a run, one snapshot per
## (logical) run, no orphan data file
CRASH_TRIALS ?= 100
test-crash: tools
	$(GO) test -count=1 -timeout 60m -run TestCrashLoop -v ./cmd/databrew-stage -crash-trials $(CRASH_TRIALS)
	$(GO) test -count=1 -timeout 60m -tags iceberg -run 'TestCrashLoop.*Iceberg' -v ./cmd/databrew-stage -crash-trials $(CRASH_TRIALS)

## test-short: the quick subset, without the race detector
test-short:
	$(GO) test -short ./...

## fuzz: run each fuzz target for FUZZTIME (not part of test; go test runs
## their seeds and the inputs kept in testdata/fuzz). FUZZTIME may be a count
## such as 200000x: a time limit can end a clean run with "context deadline
## exceeded" and no failing input (Go's go.dev/issue/75804)
FUZZTIME ?= 30s
fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./config
	$(GO) test -run='^$$' -fuzz='^FuzzNormalizeURL$$' -fuzztime=$(FUZZTIME) ./crawl
	$(GO) test -run='^$$' -fuzz='^FuzzScope$$' -fuzztime=$(FUZZTIME) ./crawl
	$(GO) test -run='^$$' -fuzz='^FuzzNextLink$$' -fuzztime=$(FUZZTIME) ./crawl
	$(GO) test -run='^$$' -fuzz='^FuzzSiteScope$$' -fuzztime=$(FUZZTIME) ./crawl
	$(GO) test -run='^$$' -fuzz='^FuzzStrip$$' -fuzztime=$(FUZZTIME) ./urlparams
	$(GO) test -run='^$$' -fuzz='^FuzzItem$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzValue$$' -fuzztime=$(FUZZTIME) ./extract/jsliteral
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./extract/htmltree
	$(GO) test -run='^$$' -fuzz='^FuzzNormalize$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzParseNumber$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzReadNumber$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzParseBool$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzParseTime$$' -fuzztime=$(FUZZTIME) ./extract
	$(GO) test -run='^$$' -fuzz='^FuzzRunReport$$' -fuzztime=$(FUZZTIME) ./verdict
	$(GO) test -run='^$$' -fuzz='^FuzzReadLastRun$$' -fuzztime=$(FUZZTIME) ./stage

## lint: gofmt, go vet, go.mod tidy, and staticcheck (pinned in go.mod as a tool)
lint:
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) mod tidy -diff
	$(GO) tool staticcheck ./...

## demo: crawl the bundled catalog site twice, offline
demo:
	$(GO) run ./cmd/databrew-stage demo

## demo-iceberg: the same two crawls, published into an Apache Iceberg table
## (a SQLite catalog and a local warehouse in databrew-demo/, no server)
demo-iceberg:
	$(GO) run -tags iceberg ./cmd/databrew-stage demo --iceberg

## bench: crawl a local catalog site with databrew-stage and with Colly, side by side;
## then the export, sitemap, JSON, rerun, shard and rendering benchmarks
BENCH_ITEMS ?= 10000,200000
BENCH_RUNS ?= 3,1
BENCH_RERUN_ITEMS ?= 10000,200000
# BENCH_DRIVER_FLAGS: e.g. -cgroup-limit none (as root) adds each crawler's cgroup peak
BENCH_DRIVER_FLAGS ?=
# BENCH_JSON_FLAGS: likewise for the 9 MB JSON pages, e.g. -cgroup-limit 64MiB
BENCH_JSON_FLAGS ?=
# BENCH_RENDER_FLAGS: the rendered crawls of s17, e.g. -pages 200 -mem-pages 1000
# (each run in a memory cgroup when root)
BENCH_RENDER_FLAGS ?=
bench:
	$(GO) build -o bin/bench-stage ./bench/stagebench
	cd bench/colly && $(GO) build -o ../../bin/bench-colly .
	$(GO) run ./bench/driver -items $(BENCH_ITEMS) -runs $(BENCH_RUNS) -stage bin/bench-stage -colly bin/bench-colly $(BENCH_DRIVER_FLAGS)
	$(GO) build -o bin/databrew-stage ./cmd/databrew-stage
	$(GO) run ./bench/exportbench -format parquet -bin bin/databrew-stage
	$(GO) run ./bench/exportbench -format arrow
	$(GO) test -run '^$$' -bench Sitemap50000URLs -benchtime 10x ./pages
	$(GO) test -run '^$$' -bench JSONListing9MB -benchmem -benchtime 3x ./pages
	$(GO) run ./bench/jsonbench -bin bin/databrew-stage $(BENCH_JSON_FLAGS)
	$(GO) run ./bench/rerunbench -items $(BENCH_RERUN_ITEMS)
	$(GO) run ./bench/shardbench -bin bin/databrew-stage
	$(GO) run ./bench/renderbench -bin bin/databrew-stage $(BENCH_RENDER_FLAGS)

## bench-1m: the first crawl of a catalog of 1,000,000 items by databrew-stage
## and by Colly, each in a memory cgroup limited to 64 MiB (needs root and
## cgroup v1 or v2; 10 to 20 minutes on 2 cores). BENCH_1M_FLAGS= runs both
## without a limit, where Colly finishes too (about 5 minutes)
BENCH_1M_FLAGS ?= -cgroup-limit 64MiB
bench-1m:
	$(GO) build -o bin/bench-stage ./bench/stagebench
	cd bench/colly && $(GO) build -o ../../bin/bench-colly .
	$(GO) run ./bench/driver -items 1000000 -runs 1 -stage bin/bench-stage -colly bin/bench-colly $(BENCH_1M_FLAGS)

clean:
	rm -rf bin databrew-demo
