# ria: make test is what CI runs (.ci/run); make examples is where to start.
GO ?= go

.PHONY: all test test-loaded vet examples bench benchdata redis cover fuzz screenshots

all: test

# redis: install redis-server, and locales (the language locale some tests
# run a server under: redistest.StartCollatingServer), from Debian's
# packages when missing; installing needs root, otherwise install them
# yourself or put redis-server on PATH.
redis:
	@{ command -v redis-server && command -v localedef && [ -e /usr/share/i18n/locales/en_US ]; } >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing redis-server, locales (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server redis-tools locales >/dev/null; \
	  else \
	    echo "redis-server or locales is missing: run 'sudo apt-get install redis-server locales' (or put a redis-server on PATH)" >&2; exit 1; \
	  fi; }
	@redis-server --version

# vet: go vet and staticcheck (release 2026.2.2, module v0.8.2, fetched
# from the module proxy on first use) over both modules.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
vet:
	$(GO) vet ./...
	cd bench && $(GO) vet ./...
	$(STATICCHECK) ./...
	cd bench && $(STATICCHECK) ./...

# test: vet, then every test with -race on miniredis, a real redis-server and
# a real 3-master cluster (started by the tests on loopback ports). A missing
# redis-server fails instead of skipping.
test: redis vet
	RIA_REQUIRE_REDIS=1 $(GO) test -race -count=1 -timeout 30m ./...
	cd bench && $(GO) test -count=1 ./...

# test-loaded: the same tests with three CPU-bound processes running beside
# them on this machine, as when CI shares it; RUNS=3 runs them three times in
# a row. A test that waits by sleeping or relies on goroutine scheduling
# fails here.
RUNS ?= 1
test-loaded: redis vet
	@pids=""; for i in 1 2 3; do (while :; do :; done) & pids="$$pids $$!"; done; \
	trap 'kill $$pids 2>/dev/null' EXIT INT TERM; \
	for r in $$(seq $(RUNS)); do \
	  echo "== loaded run $$r of $(RUNS)"; \
	  RIA_REQUIRE_REDIS=1 $(GO) test -race -count=1 -timeout 30m ./... || exit 1; \
	done

# screenshots: every page of the queue dashboard (examples/dashboard) in
# headless Chromium (Debian's chromium, installed when missing, as root),
# into DIR (default /tmp/ria-screenshots).
screenshots:
	bash scripts/screenshots.sh $(or $(DIR),/tmp/ria-screenshots)

# examples: run every program in examples/ on an embedded miniredis, on the
# server at REDIS_URL (redis://host:port/db), or on the Redis Cluster whose
# nodes REDIS_CLUSTER lists (host:port,host:port,...).
examples:
	@for m in examples/*/main.go; do d=$$(dirname $$m); echo "== $$d"; $(GO) run ./$$d || exit 1; done

# benchdata: what the benchmarks compare with or read, from Debian's
# packages when missing (root): RediSearch, the English, French and Polish
# word lists, and apt's English package descriptions (searchbench's corpus).
# A benchmark whose data is missing says so and skips or falls back.
benchdata:
	@if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  for p in redis-redisearch wamerican-insane wfrench wpolish; do \
	    dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	  if [ -n "$$missing" ]; then echo "installing$$missing (apt-get)"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; fi; \
	  ls /var/lib/apt/lists/*Translation-en* >/dev/null 2>&1 || apt-get update -qq -o Acquire::Languages=en; \
	else echo "benchdata: not root, using what is installed"; fi

# bench: package benchmarks on a real server, then the side-by-side
# comparisons of bench/ (a separate module). Prints ratios, not verdicts.
bench: redis benchdata
	$(GO) test -run '^$$' -bench . -benchtime 2s ./...
	cd bench && $(GO) run ./lockbench
	cd bench && $(GO) run ./queuebench
	cd bench && $(GO) run ./cachebench
	cd bench && $(GO) run ./searchbench

# fuzz: run every fuzz test for FUZZTIME (default 30s) beyond its seed
# corpus, which make test runs.
FUZZTIME ?= 30s
fuzz:
	@for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do d=$$(dirname $$f); \
	  for n in $$(grep -o '^func Fuzz[A-Za-z0-9_]*' $$f | cut -d' ' -f2); do \
	    echo "== $$d $$n"; $(GO) test -run '^$$' -fuzz "^$$n$$" -fuzztime $(FUZZTIME) ./$$d || exit 1; \
	  done; done

cover: redis
	RIA_REQUIRE_REDIS=1 $(GO) test -count=1 -coverprofile=cover.out ./...
	$(GO) tool cover -func=cover.out | tail -1
