# dpmo — the two commands: `make demo` and `make test`. Everything they need is installed from here.
SHELL := /bin/bash
.DEFAULT_GOAL := demo

CARGO       ?= cargo
CC          ?= cc
CXX         ?= c++
CBINDGEN_VERSION := 0.29.4
# cbindgen is pinned and cached under Cargo's home, versioned, so every clone on the machine shares one build.
CARGO_HOME  ?= $(HOME)/.cargo
TOOLS       := $(CARGO_HOME)/dpmo-tools/cbindgen-$(CBINDGEN_VERSION)
CBINDGEN    := $(TOOLS)/bin/cbindgen
BARE_TARGET := thumbv7em-none-eabihf
LIB_A       := target/release/libdpmo.a
BUILD       := build
CFLAGS_C    := -std=c11 -O2 -Wall -Wextra -Werror -pedantic -Iinclude
CFLAGS_CXX  := -std=c++17 -O2 -Wall -Wextra -Werror -Iinclude
# The static library needs nothing else: panic=abort and LTO remove every unwinding symbol.
LDLIBS_C    :=

.PHONY: demo test lib header header-check bare-metal tools rust-tests ffi-tests examples bindings java sqlite postgres eval-smoke reproduce bench clean

## Build the C artifacts target/release/libdpmo.a and libdpmo.so.
lib:
	$(CARGO) build --release -p dpmo-capi

$(LIB_A): lib

## The first command: build the library and run the quickstart example.
demo: lib
	@mkdir -p $(BUILD)
	$(CC) $(CFLAGS_C) examples-c/quickstart.c $(LIB_A) $(LDLIBS_C) -o $(BUILD)/quickstart
	./$(BUILD)/quickstart

## Tools the tests need: cbindgen (pinned, cached under Cargo's home), the bare-metal target, valgrind.
tools: $(CBINDGEN)
	@rustup target list --installed | grep -qx $(BARE_TARGET) || rustup target add $(BARE_TARGET)
	@command -v valgrind >/dev/null || { apt-get update -qq && apt-get install -y -qq valgrind; }
	@test -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf || { apt-get update -qq && apt-get install -y -qq fonts-dejavu-core; }

$(CBINDGEN):
	$(CARGO) install --locked --root $(TOOLS) cbindgen --version $(CBINDGEN_VERSION)

## Regenerate include/dpmo.h from capi/.
header: $(CBINDGEN)
	cd capi && $(CBINDGEN) --config cbindgen.toml --output ../include/dpmo.h

## Fail when the committed header differs from what cbindgen generates now.
header-check: $(CBINDGEN)
	@mkdir -p $(BUILD)
	cd capi && $(CBINDGEN) --quiet --config cbindgen.toml --output ../$(BUILD)/dpmo.h
	@diff -u include/dpmo.h $(BUILD)/dpmo.h || { echo "include/dpmo.h is stale: run 'make header' and commit it" >&2; exit 1; }
	@echo "header-check: include/dpmo.h is up to date"

## The core must build without std for a bare-metal target.
bare-metal: tools
	$(CARGO) build --release -p dpmo --target $(BARE_TARGET)
	@echo "bare-metal: dpmo builds for $(BARE_TARGET)"

## Rust tests of the core, formatting, and clippy with warnings as errors. The C ABI crate is checked apart
## from the std crates: built in one cargo call with them, its no_std panic handler would meet std's.
rust-tests:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy -p dpmo -p dpmo-capi --all-targets -- -D warnings
	$(CARGO) clippy -p dpmo-eval --all-targets -- -D warnings
	$(CARGO) test -p dpmo --release

## C tests (and one compiled as C++) against libdpmo.a, run under valgrind.
ffi-tests: lib tools
	$(MAKE) -C ffi-tests run CC="$(CC)" CXX="$(CXX)"

## Build and run every example.
examples: lib
	@mkdir -p $(BUILD)
	@for f in examples-c/*.c; do \
	  b=$(BUILD)/$$(basename $$f .c); \
	  $(CC) $(CFLAGS_C) $$f $(LIB_A) $(LDLIBS_C) -o $$b && ./$$b > $$b.out && echo "example $$f: ok" || exit 1; \
	done

## Bindings, each tested against its real runtime (each installs its runtime with apt-get when missing).
java: lib
	$(MAKE) -C bindings/java test
sqlite: lib
	$(MAKE) -C bindings/sqlite test
postgres: lib
	$(MAKE) -C bindings/postgres test
bindings: java sqlite postgres

## A small, fast version of every experiment of the evaluation harness (the full one is `make reproduce`): the
## unit tests, then every experiment run through --graph/--table on the CSV fixtures of eval/fixtures, each
## checked for its summary.csv columns (eval/tests/smoke.rs). Needs nothing from ../shared.
eval-smoke: tools
	$(CARGO) test --release -p dpmo-eval

## Regenerates eval/REPRODUCTION.md and eval/results/ from ../shared/data with the papers' repetition counts.
reproduce: tools
	$(CARGO) run --release -p dpmo-eval -- reproduce --data ../shared/data --out eval/results --report eval/REPRODUCTION.md

## The second command: everything.
test: tools header-check bare-metal rust-tests lib ffi-tests examples bindings eval-smoke
	@echo "make test: all checks passed"

## Benchmarks (not tests): selections per second per selector, and the Pareto score stage, each printed
## beside a simple reference implementation timed in the same run.
bench:
	$(CARGO) bench -p dpmo --bench select
	$(CARGO) bench -p dpmo --bench pareto

clean:
	$(CARGO) clean
	rm -rf $(BUILD)
