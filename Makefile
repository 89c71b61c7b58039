# Spoor: `make demo` and `make test` work on a fresh Debian machine with the Swift toolchain.
SWIFT ?= swift
ROUNDS ?= 200

.PHONY: bootstrap build demo test test-apple-wire bench fuzz crash-test e2e-crash generate-proto docs

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

# check-public-api reads the surface of `import SpoorTracker` from the build `swift test` made (docs/public-api.md).
# The fuzz harnesses are built (not run) with their plain driver, so an API change that breaks one fails here;
# the tests replay their corpora. scripts/fuzz builds them with libFuzzer.
# The Collector package builds the example server (Examples/ServerTracking) with the Hummingbird it builds anyway, and
# its tests run it: a real collector and the example as processes, 2,000 requests from 50 users, SIGTERM, every event
# stored under its user (ServerTrackingExampleTests), and TrackerService in a ServiceGroup (TrackerServiceTests).
test: bootstrap
	scripts/check-dependencies
	scripts/typecheck-apple-glue
	scripts/lint-workflows
	$(SWIFT) test
	scripts/check-public-api
	$(SWIFT) test --package-path Tools
	$(SWIFT) build --package-path Fuzz
	$(SWIFT) test --package-path Collector
	scripts/apple-configuration

# The root suite as macOS builds it: SpoorWire without protobuf-c and zstd (the SystemLibraries trait off), in a
# build directory of its own (docs/verifying-on-apple.md).
test-apple-wire: bootstrap
	$(SWIFT) test --traits Tracker --scratch-path .build-apple-wire

demo: bootstrap
	@scripts/demo

bench: bootstrap
	scripts/bench

# The long crash run: SIGKILL a writer ROUNDS times (make test runs 20 rounds).
crash-test: bootstrap
	scripts/crash-test $(ROUNDS)

# The long end-to-end crash run: SIGKILL a tracking, uploading child ROUNDS times while the collector
# restarts at random (make test runs 20 rounds). With PROCESSES=N: N processes share one storage directory, two
# of them SIGKILLed each round (make test runs 4 rounds of 4).
e2e-crash: bootstrap
	scripts/e2e-crash $(if $(PROCESSES),--processes $(PROCESSES)) $(ROUNDS)

# One fuzz target for a while: make fuzz TARGET=FuzzEventDecoder SECONDS=600
TARGET ?= FuzzEventDecoder
SECONDS ?= 60
fuzz: bootstrap
	scripts/fuzz $(TARGET) $(SECONDS)

generate-proto: bootstrap
	scripts/generate-proto

# The DocC documentation (.build/docs/Spoor.doccarchive) with the toolchain's docc; fails on any docc
# warning or undocumented public symbol, each printed as file:line:column.
docs: bootstrap
	scripts/docs
