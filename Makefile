# jobctl — build, test, lint and regenerate the checked-in docs.
GO       ?= go
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo none)
LDFLAGS  := -s -w -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Fixed date for man pages, so regenerating them is reproducible.
SOURCE_DATE_EPOCH ?= 1767225600
export SOURCE_DATE_EPOCH

.PHONY: build test test-short lint generate check-generated clean

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

lint:
	gofmt -l . | (! grep .) || (echo "gofmt needed on the files above" && exit 1)
	$(GO) vet ./...
	golangci-lint run ./...

generate: ## regenerate man pages and shell completions
	rm -rf man completions
	$(GO) run ./cmd/gendocs

check-generated: generate
	git diff --exit-code -- man completions || (echo "man/ or completions/ are stale: run 'make generate' and commit" && exit 1)
	test -z "$$(git status --porcelain -- man completions)" || (echo "man/ or completions/ have new files: run 'make generate' and commit" && exit 1)

clean:
	rm -f jobctl
