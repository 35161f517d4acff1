# sharectl — the two commands are `make demo` and `make test`; each installs what it needs first.
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
export PATH := /opt/swift/usr/bin:$(PATH)

SWIFT        ?= swift
FUZZ_SECONDS ?= 60
SMOKE_SECONDS ?= 4
SOAK_MINUTES ?= 60
FAULT_SECONDS ?= 300
BIN          := .build/debug/sharectl

.PHONY: all setup build test demo bench fuzz fuzz-long fuzz-smoke gates sanitize soak notices clean format

all: build

build:
	@scripts/setup.sh build
	@$(SWIFT) build 2>&1 | scripts/swift-output.sh

# Unit and wire tests, then a short run of every fuzz target, then the gates against real peers
# (headless Chromium, aiortc) inside a network namespace that has only loopback.
test:
	@echo "== make test: setup from $$(date +%T)"
	@scripts/setup.sh test
	@scripts/format-check.sh
	@$(SWIFT) build --build-tests 2>&1 | scripts/swift-output.sh
	@$(BIN) version  # the C libraries this run tests against, and their Debian packages
	@dpkg-query -W -f='  $${Package} $${Version}\n' libssl3 libnice10 libsrtp2-1 libsoup-3.0-0 libopus0 \
	    libvpx7 libx264-164 libavcodec59 libpipewire-0.3-0 libglib2.0-0 chromium 2>/dev/null || true
	@echo "== make test: Swift tests from $$(date +%T)"
	@$(SWIFT) test --skip-build
	@echo "== make test: fuzz smoke from $$(date +%T)"
	@$(MAKE) --no-print-directory fuzz-smoke
	@echo "== make test: gates from $$(date +%T)"
	@scripts/gates/run.sh
	@echo "== make test: done at $$(date +%T)"

# Builds and runs the main job on its embedded default.
demo:
	@scripts/setup.sh demo
	@$(SWIFT) build 2>&1 | scripts/swift-output.sh
	@$(BIN) demo

bench:
	@scripts/setup.sh bench
	@$(SWIFT) build -c release 2>&1 | scripts/swift-output.sh
	@scripts/bench.sh

fuzz:
	@scripts/setup.sh fuzz
	@FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

gates:
	@scripts/setup.sh test
	@$(SWIFT) build 2>&1 | scripts/swift-output.sh
	@scripts/gates/run.sh

# The Swift tests under AddressSanitizer and ThreadSanitizer; the transport and room gates on the ASan build.
sanitize:
	@scripts/setup.sh test
	@scripts/sanitize.sh

# The long run: every target for ten million inputs, or 30 minutes where it is slower.
fuzz-long:
	@scripts/setup.sh fuzz
	@FUZZ_SECONDS=1800 FUZZ_RUNS=10000000 FUZZ_TIMEOUT=60 scripts/fuzz.sh

# The kiosk soak (scripts/soak.py): an unattended portal share to aiortc for SOAK_MINUTES with a fault
# every FAULT_SECONDS; prints memory, descriptors, faults recovered and the longest freeze.
soak:
	@scripts/setup.sh test
	@$(SWIFT) build 2>&1 | scripts/swift-output.sh
	@SOAK_MINUTES=$(SOAK_MINUTES) FAULT_SECONDS=$(FAULT_SECONDS) scripts/soak.py

fuzz-smoke:
	@FUZZ_SECONDS=$(SMOKE_SECONDS) scripts/fuzz.sh

# Regenerates THIRD_PARTY_NOTICES.md from the Debian copyright files of the linked libraries.
notices:
	@scripts/setup.sh build
	@scripts/third-party-notices.sh > THIRD_PARTY_NOTICES.md

# Rewrites the Swift files to .swift-format (make test checks them).
format:
	@scripts/format-check.sh --fix

clean:
	rm -rf .build Fuzz/.build
