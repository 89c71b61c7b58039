# Spoor: `make demo` and `make test` work on a fresh Debian machine with the Swift toolchain.
SWIFT ?= swift
ROUNDS ?= 200

.PHONY: bootstrap build demo test bench fuzz crash-test generate-proto

bootstrap:
	@scripts/bootstrap

build: bootstrap
	$(SWIFT) build

test: bootstrap
	$(SWIFT) test

demo: bootstrap
	@scripts/demo

bench: bootstrap
	scripts/bench

generate-proto: bootstrap
	scripts/generate-proto
