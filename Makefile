# repro: `make paper` regenerates the paper's tables; `make test` runs the tests.
GO       ?= go
BIN      := bin/repro
PROFILE  ?= paper
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# The data mirror: a local copy of the releases (checked against their
# published SHA-256 like a download). Unset, the download stage fetches.
REPRO_DATA_MIRROR ?= $(wildcard ../shared/data)
export REPRO_DATA_MIRROR

.PHONY: all build paper smoke test test-short bench vet fmt clean

all: build

# -buildvcs=auto records the git revision and dirty flag in every manifest,
# even where GOFLAGS disables it.
build:
	$(GO) build -buildvcs=auto -o $(BIN) ./cmd/repro

paper: build
	$(BIN) run --profile $(PROFILE) -j $(JOBS)

smoke: build
	$(BIN) run --profile smoke -j $(JOBS)

test: build
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

test-short:
	$(GO) test -short -count=1 ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x -timeout 60m ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
