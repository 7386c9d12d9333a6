# repro: `make paper` regenerates the paper's tables; `make test` runs the tests.
GO       ?= go
BIN      := bin/repro
PROFILE  ?= paper
JOBS     ?= $(shell nproc 2>/dev/null || echo 2)
# The data mirror: a local copy of the releases (checked against their
# published SHA-256 like a download). Unset, the download stage fetches.
REPRO_DATA_MIRROR ?= $(abspath $(wildcard ../shared/data))
export REPRO_DATA_MIRROR

.PHONY: all build paper pdf check crate ledger-readme smoke test test-short bench vet fmt clean reference-check reference-runs help

all: build

# The binary names its source in every manifest: the commit, and for a
# tree with uncommitted changes their digest (internal/buildstamp: git diff
# HEAD plus untracked files), linked in with -ldflags -X. Go's -buildvcs
# alone is not enough: GOFLAGS may switch it off and it does not see a git
# worktree. Outside git the binary says "revision unknown": `repro run`
# warns, `repro push` refuses its records. (docs/audit.md)
build:
	$(GO) build -buildvcs=auto -ldflags="$$($(GO) run ./internal/buildstamp/ldflags)" -o $(BIN) ./cmd/repro

# The TeX that paper/main.tex needs (Debian package names).
TEX_PACKAGES := texlive-latex-base texlive-latex-recommended texlive-fonts-recommended

# make paper: run the profile, write the report site (repro report:
# $(PAPER_DIR)/site, whose cards the PDF's numbers link to), compile the PDF, and end with the
# reproduction verdict and where the PDF is. It fails when a cell failed;
# a release absent from the data mirror (CIFAR-100) is not a failure: run
# names it once, with the cells it blocks, and the tables show them as
# "not run". Without pdflatex it says what to install and writes no PDF.
paper: build
	@$(BIN) run --profile $(PROFILE) -j $(JOBS); status=$$?; \
	  $(COMMITTEDDIFF); \
	  $(BIN) report --profile $(PROFILE); report=$$?; \
	  $(PDF); pdf=$$?; \
	  $(BIN) show --profile $(PROFILE) reproduction --summary; \
	  $(PDFWHERE); \
	  if [ $$status -ne 0 ]; then echo "repro run exited $$status: the cells listed above failed"; exit $$status; fi; \
	  if [ $$report -ne 0 ]; then echo "repro report exited $$report: the site was not written"; exit $$report; fi; \
	  exit $$pdf

# pdflatex until the cross-references and longtable widths settle (at most
# three passes); its output goes to paper/main.log, shown when it fails.
PDF = (command -v pdflatex >/dev/null || exit 0; \
	cd $(PAPER_DIR) && for pass in 1 2 3; do \
	  pdflatex -interaction=nonstopmode -halt-on-error main.tex >/dev/null 2>&1 || { tail -20 main.log; echo "pdflatex failed: see $(PAPER_DIR)/main.log"; exit 1; }; \
	  grep -q 'Rerun' main.log || break; \
	done)

PAPER_DIR = $(if $(filter paper,$(PROFILE)),paper,paper/$(PROFILE))

# After the run: a table or figure that now differs from its committed
# rendering is said, with every number that moved, before and after, and
# whether beyond the seeds' noise (repro diff HEAD store; docs/audit.md).
COMMITTEDDIFF = if git rev-parse --verify --quiet HEAD >/dev/null 2>&1 && \
	  ! git diff --quiet HEAD -- $(PAPER_DIR)/tables $(PAPER_DIR)/figures 2>/dev/null; then \
	  echo "the tables or figures differ from their committed rendering:"; git diff --stat HEAD -- $(PAPER_DIR)/tables $(PAPER_DIR)/figures; \
	  $(BIN) diff --profile $(PROFILE) HEAD store; \
	fi

PDFWHERE = if command -v pdflatex >/dev/null; then \
	  [ $$pdf -eq 0 ] && echo "PDF: $(PAPER_DIR)/main.pdf"; \
	else echo "no PDF written: pdflatex is not installed (sudo apt-get install $(TEX_PACKAGES), then make pdf); the tables are in $(PAPER_DIR)/tables/"; fi

pdf:
	@$(PDF); pdf=$$?; $(PDFWHERE); exit $$pdf

# Exit non-zero, naming each number, if a committed table is stale.
check: build
	$(BIN) check --profile $(PROFILE)

# The reproduction as an RO-Crate (Provenance Run Crate) in ro-crate/, from
# the ledger and the committed files, computing nothing (docs/crate.md).
CRATE_DIR ?= ro-crate
crate: build
	$(BIN) crate --profile $(PROFILE) --out $(CRATE_DIR)

# The ledger's README states which commits computed its records (repro
# provenance): rewrite that section after the ledger changed (a push, a
# recompute); TestLedgerReadmeProvenance fails while it is out of date.
ledger-readme: build
	$(BIN) provenance --profile paper --write

smoke: build
	@$(BIN) run --profile smoke -j $(JOBS); status=$$?; \
	  $(BIN) show --profile smoke reproduction --summary; exit $$status

# The tests that train on real MNIST (TestHeadline and TestMNISTHeldout in
# stages/) read it from REPRO_DATA: the mirror. What stays opt-in
# is printed at the end (README, "Tests and benchmarks").
# go vet for arm64 as well: the portable kernels (no assembly) must build.
# core's goldens again with -tags purego: the portable kernels alone, no
# assembly compiled in, must give the same bits (docs/kernels.md; about a
# minute); then no package may compile a .s file under purego.
test: build
	@date +%s > bin/.test-start
	$(GO) vet ./...
	GOARCH=arm64 $(GO) vet ./...
	REPRO_DATA="$${REPRO_DATA:-$(REPRO_DATA_MIRROR)}" $(GO) test -count=1 -timeout 30m ./...
	REPRO_DATA="$${REPRO_DATA:-$(REPRO_DATA_MIRROR)}" $(GO) test -count=1 -timeout 30m -tags purego ./core/... ./internal/kernels/ ./internal/dataset/
	@sfiles=$$($(GO) list -tags purego -f '{{.ImportPath}} {{.SFiles}}' ./... | grep -v ' \[\]$$'); \
	  if [ -n "$$sfiles" ]; then echo "assembly compiled under -tags purego (give it //go:build !purego): $$sfiles"; exit 1; fi
	@if scontrol ping 2>/dev/null | grep -q UP; then \
	  echo "a Slurm controller answered: the Slurm tests ran against it; opt-in, not run: TestSlurmTimeout (REPRO_SLURM_LONG=1), TestV1LinearProbe (REPRO_V1_PROBE=1)"; \
	else \
	  echo "opt-in, not run here: the Slurm tests (they skip without a cluster: .ci/slurm/start.sh as root starts one), TestSlurmTimeout also REPRO_SLURM_LONG=1, TestV1LinearProbe (REPRO_V1_PROBE=1)"; \
	fi
	@echo "make test: $$(( $$(date +%s) - $$(cat bin/.test-start) )) s of wall"

# The differential check against the authors' code (docs/reference-check.md):
# one line per learner path, "PATH: identical through N steps" or "PATH:
# differs at step S, tensor T[i]: ours x, reference y" (the CIFAR-10 V1
# front-end counts images; it runs in every set, about 20 s), and after
# core's paths the mode coverage: every mask and gate mode of the paper
# profile's local-learner cells and the paths that run it (it fails on a
# mode no path runs, or a gate no 1,500-batch trajectory follows).
# REFCHECK_SET=all (steps and trajectories, the gates' 1,500-batch ones
# included, about 80 min), step, or ci (the disputed rows and the controls,
# a few minutes). Skipped, saying why, when $(REFCHECK_PYTHON) cannot import
# torch.
REFCHECK_SET    ?= all
REFCHECK_PYTHON ?= /usr/bin/python3
REFCHECK_REF    ?= $(abspath ../shared/spec/reference/src)
reference-check:
	@out=$$(mktemp); \
	REPRO_REFCHECK=1 REPRO_REFCHECK_SET=$(REFCHECK_SET) REPRO_REFCHECK_PYTHON=$(REFCHECK_PYTHON) \
	  REPRO_REFCHECK_REF=$(REFCHECK_REF) REPRO_DATA="$${REPRO_DATA:-$(REPRO_DATA_MIRROR)}" \
	  $(GO) test ./core ./core/backprop ./core/spike ./internal/dataset -run '^TestReferenceCheck(Coverage)?$$' -count=1 -v -timeout 180m >$$out 2>&1; status=$$?; \
	grep -v -e '^=== RUN' -e '^PASS$$' -e '^ok ' $$out; rm -f $$out; exit $$status

# The authors' code's per-seed results for the disputed rows
# (docs/disputed.md): paper/reference-runs/<config>.tsv from the
# checkpoints its own runs wrote (REFRUNS_DIR: the directory the runs were
# made in, with src/ the copy that ran, run_seq.py's --val checkpoints
# (val4321_ for --val-seed 4321) under results/bio/seq/parts and run_mnist.py's under
# results/bio/mnist/parts). Opt-in, never a dependency of `make paper`,
# which reads the committed files; skipped, saying why, without the
# checkpoints or without numpy and pandas for $(REFCHECK_PYTHON).
REFRUNS_DIR ?= $(HOME)/.cache/refruns
reference-runs:
	@if ! $(REFCHECK_PYTHON) -c 'import numpy, pandas' 2>/dev/null; then \
	  echo "reference runs skipped: $(REFCHECK_PYTHON) cannot import numpy and pandas (apt-get install python3-pandas)"; exit 0; fi; \
	if [ ! -d "$(REFRUNS_DIR)/results/bio/seq/parts" ] && [ ! -d "$(REFRUNS_DIR)/results/bio/mnist/parts" ]; then \
	  echo "reference runs skipped: no checkpoints in $(REFRUNS_DIR)/results/bio/{seq,mnist}/parts (REFRUNS_DIR= names where the authors' runs were made)"; exit 0; fi; \
	$(REFCHECK_PYTHON) tools/refcheck/reference_runs.py --parts "$(REFRUNS_DIR)/results/bio/seq/parts" \
	  --mnist-parts "$(REFRUNS_DIR)/results/bio/mnist/parts" --ran "$(REFRUNS_DIR)/src" \
	  --reference "$(abspath ../shared/spec/reference)" --out paper/reference-runs pipeline.toml

test-short:
	$(GO) test -short -count=1 ./...

bench: build
	$(GO) test -run '^$$' -bench . -benchtime 3x -timeout 60m ./...

help:
	@echo "make paper | pdf | check | smoke | test | test-short | bench | build | reference-check | reference-runs | ledger-readme | fmt | clean (README.md)"

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin
