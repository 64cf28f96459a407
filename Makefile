# jobctl — build, test, lint and regenerate the checked-in docs.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
# The same variables goreleaser.yaml sets; left empty, jobctl reads them
# from the build information Go stamps in.
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# goreleaser v2; `make install-goreleaser` builds the version this file is
# tested with into ~/go/bin.
GORELEASER ?= $(shell command -v goreleaser 2>/dev/null || echo $(HOME)/go/bin/goreleaser)
GORELEASER_VERSION := v2.15.1
GOLANGCI_LINT ?= $(shell command -v golangci-lint 2>/dev/null || echo $(HOME)/go/bin/golangci-lint)
GOLANGCI_LINT_VERSION := v2.15.0
# Fixed date for man pages, so regenerating them is reproducible.
SOURCE_DATE_EPOCH ?= 1767225600
export SOURCE_DATE_EPOCH

.PHONY: build test test-short chaos fuzz lint generate check-generated clean \
	install-goreleaser install-golangci-lint release-check release-snapshot release-test

build: ## build ./jobctl
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o jobctl ./cmd/jobctl

# The whole suite: unit tests, the store conformance suite on SQLite and
# PostgreSQL (JOBCTL_TEST_POSTGRES, default postgres@127.0.0.1:5432), and
# end-to-end tests of real `jobctl serve` processes.
test:
	$(GO) vet ./...
	$(GO) test -race -count=1 -timeout 15m ./...

test-short:
	$(GO) test -count=1 -short ./...

# The chaos test's long profile: thousands of jobs on three real nodes of
# each backend while nodes are killed, frozen and cut off from the
# database, for minutes per backend. `make test` runs its short profile,
# one round of each fault.
chaos:
	JOBCTL_CHAOS=long $(GO) test -race -count=1 -timeout 30m -run '^TestChaos$$' -v ./cmd/jobctl/

# Each fuzz target for FUZZTIME inputs; go test -fuzz takes one target per
# run. A count, not a duration: Go 1.26's fuzz coordinator can report a
# spurious "context deadline exceeded" when a duration ends while a starved
# worker is mid-input (golang/go#75804), and a count has no deadline to race.
# The seed corpora also run as plain tests in `make test`.
FUZZTIME ?= 10000x
FUZZ_TARGETS := \
	./engine/endpoint:FuzzDispatchRequest \
	./engine/dbstore:FuzzParseDSN \
	./engine/dbstore:FuzzDSNHidesPassword \
	./engine/node:FuzzLoadConfigFile \
	./commands:FuzzSubmitCommandLine \
	./commands:FuzzParseTimeSpec \
	./commands:FuzzSubmitPayloadAndLoad \
	./commands:FuzzParseBatchLine

fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$name ($$pkg, $(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $$pkg; \
	done

lint:
	gofmt -l . | (! grep .) || (echo "gofmt needed on the files above" && exit 1)
	$(GO) vet ./...
	$(GOLANGCI_LINT) run ./...

install-golangci-lint: ## build golangci-lint into ~/go/bin (about a minute)
	GOBIN=$(HOME)/go/bin GOFLAGS= $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

generate: ## regenerate man pages and shell completions
	rm -rf man completions
	$(GO) run ./cmd/gendocs

check-generated: generate
	git diff --exit-code -- man completions || (echo "man/ or completions/ are stale: run 'make generate' and commit" && exit 1)
	test -z "$$(git status --porcelain -- man completions)" || (echo "man/ or completions/ have new files: run 'make generate' and commit" && exit 1)

install-goreleaser: ## build goreleaser into ~/go/bin (minutes on a cold build cache)
	GOBIN=$(HOME)/go/bin GOFLAGS= $(GO) install github.com/goreleaser/goreleaser/v2@$(GORELEASER_VERSION)

release-check: ## validate goreleaser.yaml
	$(GORELEASER) check

release-snapshot: ## every release archive and package, unpublished, into dist/
	$(GORELEASER) release --snapshot --clean

# Validate the release config, build the linux/amd64 packages and inspect
# the .deb: its files, and the binary it installs.
release-test:
	GORELEASER=$(GORELEASER) bash .ci/release-test

# CI builds goreleaser when it is missing (about 15 s with a warm Go build
# cache, 8 to 18 minutes from a cold one on a 2-core machine, once per
# machine), so the release test never goes unrun.

clean:
	rm -f jobctl
	rm -rf dist
