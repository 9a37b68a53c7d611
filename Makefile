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

# Installation (`make install PREFIX=... DESTDIR=...`). Before 1.0 every minor version may break the C ABI, so
# the SONAME carries major.minor (libdpmo.so.0.2); capi/build.rs sets it.
VERSION     := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MAJOR       := $(word 1,$(subst ., ,$(VERSION)))
MINOR       := $(word 2,$(subst ., ,$(VERSION)))
SOVERSION   := $(if $(filter 0,$(MAJOR)),$(MAJOR).$(MINOR),$(MAJOR))
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
DESTDIR     ?=

.PHONY: msrv publish-check demo test lib header header-check bare-metal tools rust-tests ffi-tests examples bindings java sqlite postgres duckdb eval-smoke reproduce bench clean install uninstall install-test java-install readme-test wheel python python-bench discovery-bench java-spark

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
	@# The everyday functions first (capi/src/lib.rs orders its modules for this): generator, budget, selectors.
	@awk '/^enum dpmo_status dpmo_rng_init\(/ {r = NR} /^enum dpmo_status dpmo_select_exponential\(/ {e = NR} \
	  /^enum dpmo_status dpmo_select_privpareto\(/ {p = NR} /^enum dpmo_status dpmo_graph_validate\(/ {g = NR} \
	  END {exit !(r && r < e && e < p && p < g)}' include/dpmo.h \
	  || { echo "include/dpmo.h: the everyday functions do not come first (see capi/src/lib.rs)" >&2; exit 1; }
	@echo "header-check: include/dpmo.h is up to date, the everyday functions first"

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
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -p dpmo --no-deps
	@for e in select local_dampening privpareto_graph; do $(CARGO) run -q --release -p dpmo --example $$e || exit 1; done
	@$(CARGO) package -p dpmo --list --allow-dirty 2>/dev/null | grep -vE '^(src/|(tests|benches)/.*\.rs$$|examples/[^/]*\.rs$$|Cargo\.toml|Cargo\.toml\.orig|Cargo\.lock|README\.crate\.md|docs/rust\.md|CHANGELOG\.md|LICENSE-(MIT|APACHE)|\.cargo_vcs_info\.json)' \
	    && { echo "cargo package would ship files outside the core (above)" >&2; exit 1; } || echo "cargo package: the core, its Rust tests, examples and benches"
	@# What `cargo publish` would warn about (missing metadata, a test/example/bench left out of the package), offline.
	@$(CARGO) package -p dpmo --no-verify --allow-dirty --offline 2>&1 | grep -E '^(warning|error)' \
	    && { echo "cargo package warns (above): cargo publish would too" >&2; exit 1; } || echo "cargo package: no warning"
	python3 packaging/check_registry.py crate
	python3 packaging/check_registry.py selftest

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
## Install the Java binding (jar with its native library, pom, javadoc) into ~/.m2/repository (or M2_REPO=...).
java-install: lib
	$(MAKE) -C bindings/java java-install
## The JVM Spark API (org.dpmo.spark) on a standalone cluster on 127.0.0.1 (Spark's jars from pyspark in the Python
## test venv, build/python/deps, installed by that Makefile's deps target when missing).
java-spark: lib
	$(MAKE) -C bindings/java spark-test
sqlite: lib
	$(MAKE) -C bindings/sqlite test
postgres: lib
	$(MAKE) -C bindings/postgres test
## DuckDB: the extension tested against the duckdb Python package and shell from PyPI (build/duckdb/venv, once).
duckdb: lib
	$(MAKE) -C bindings/duckdb test
bindings: java sqlite postgres duckdb

## The Python package (bindings/python): an abi3 manylinux2014 wheel for CPython >= 3.9 and the sdist, built by
## maturin (linking with zig) into target/wheels/; `make python` installs the wheel into a fresh venv and runs its
## tests (pytest, with pyspark on local[2] and a JRE) against it, and builds the sdist in another fresh venv.
## From PyPI, once each: maturin and ziglang into build/python/tools (requirements-build.txt, all `make wheel`
## needs), the test dependencies into build/python/deps (requirements-test.txt).
wheel:
	$(MAKE) -C bindings/python wheel
python: lib
	$(MAKE) -C bindings/python test
python-bench:
	$(MAKE) -C bindings/python bench
## Discovery + top-k on 10^7 events / 10^6 items against PipelineDP (optional dependency, its own venv).
discovery-bench:
	$(MAKE) -C bindings/python bench-discovery

## A small, fast version of every experiment of the evaluation harness (the full one is `make reproduce`): the
## unit tests, then every experiment run through --graph/--table on the CSV fixtures of eval/fixtures, each
## checked for its summary.csv columns (eval/tests/smoke.rs). Needs nothing from ../shared.
eval-smoke: tools
	$(CARGO) test --release -p dpmo-eval

## Regenerates eval/REPRODUCTION.md and eval/results/ from ../shared/data with the papers' repetition counts.
reproduce: tools
	$(CARGO) run --release -p dpmo-eval -- reproduce --data ../shared/data --out eval/results --report eval/REPRODUCTION.md

## Every code block of README.md and docs/*.md, as written: C compiled and run, sh run (make test/bench/reproduce
## and the system-wide PostgreSQL install dry-run), Java compiled and run against the jar, Python run against the
## wheel (or, importing duckdb, with the DuckDB binding's venv and extension); the Rust blocks (docs/rust.md) run
## as doctests (rust-tests) and the SQL blocks (docs/sql.md) in the SQLite and PostgreSQL test runners. Also:
## every relative link resolves, a C program shown is the file the next command compiles, README.md's first
## screen; the selftest shows each of these checks catching a broken page.
readme-test: lib
	python3 tests/readme/check.py selftest
	python3 tests/readme/check.py

## The second command: everything.
test: tools header-check bare-metal rust-tests lib ffi-tests examples install-test bindings python java-spark eval-smoke readme-test
	@echo "make test: all checks passed"

## Install the C library: libdpmo.a, libdpmo.so.$(VERSION) with its SONAME and symlinks, include/dpmo.h, a
## pkg-config file and a CMake package, under $(DESTDIR)$(PREFIX).
install: lib
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(LIBDIR)/cmake/dpmo $(DESTDIR)$(INCLUDEDIR)
	install -m 644 target/release/libdpmo.a $(DESTDIR)$(LIBDIR)/libdpmo.a
	install -m 755 target/release/libdpmo.so $(DESTDIR)$(LIBDIR)/libdpmo.so.$(VERSION)
	ln -sf libdpmo.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdpmo.so.$(SOVERSION)
	ln -sf libdpmo.so.$(SOVERSION) $(DESTDIR)$(LIBDIR)/libdpmo.so
	install -m 644 include/dpmo.h $(DESTDIR)$(INCLUDEDIR)/dpmo.h
	sed -e 's|@PREFIX@|$(PREFIX)|; s|@LIBDIR@|$(LIBDIR)|; s|@INCLUDEDIR@|$(INCLUDEDIR)|; s|@VERSION@|$(VERSION)|' \
	    packaging/dpmo.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/dpmo.pc
	@rel() { realpath -m --relative-to="$$1" "$$2"; }; \
	libdir=$$(realpath -m $(LIBDIR)); incdir=$$(realpath -m $(INCLUDEDIR)); prefix=$$(realpath -m $(PREFIX)); \
	sed -e "s|@CMAKE_TO_PREFIX@|$$(rel $$libdir/cmake/dpmo $$prefix)|; s|@LIBREL@|$$(rel $$prefix $$libdir)|g" \
	    -e "s|@INCLUDEREL@|$$(rel $$prefix $$incdir)|g; s|@VERSION@|$(VERSION)|g; s|@SONAME@|libdpmo.so.$(SOVERSION)|g" \
	    packaging/dpmoConfig.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/dpmo/dpmoConfig.cmake
	sed -e 's|@VERSION@|$(VERSION)|; s|@MAJOR@|$(MAJOR)|; s|@MINOR@|$(MINOR)|' \
	    packaging/dpmoConfigVersion.cmake.in > $(DESTDIR)$(LIBDIR)/cmake/dpmo/dpmoConfigVersion.cmake
	@echo "installed dpmo $(VERSION) under $(DESTDIR)$(PREFIX)"

## Remove what `make install` put under $(DESTDIR)$(PREFIX).
uninstall:
	rm -f $(DESTDIR)$(LIBDIR)/libdpmo.a $(DESTDIR)$(LIBDIR)/libdpmo.so $(DESTDIR)$(LIBDIR)/libdpmo.so.$(SOVERSION) \
	      $(DESTDIR)$(LIBDIR)/libdpmo.so.$(VERSION) $(DESTDIR)$(INCLUDEDIR)/dpmo.h $(DESTDIR)$(LIBDIR)/pkgconfig/dpmo.pc
	rm -rf $(DESTDIR)$(LIBDIR)/cmake/dpmo

# A sub-make that `make -n` does not run (it runs every recipe that names $(MAKE) itself).
SUBMAKE = $(MAKE) --no-print-directory

## An outside program against an installed dpmo: pkg-config (shared and static) and CMake find_package, each
## built outside the tree, moved, and run. Installs cmake and pkg-config with apt-get when missing.
install-test:
	@command -v cmake >/dev/null && command -v pkg-config >/dev/null || { apt-get update -qq && apt-get install -y -qq cmake pkg-config; }
	@set -e; t=$$(mktemp -d); trap 'rm -rf $$t' EXIT; \
	$(SUBMAKE) install PREFIX=$$t/prefix >/dev/null; \
	cp tests/install/consumer.c tests/install/CMakeLists.txt $$t/; cd $$t; \
	export PKG_CONFIG_PATH=$$t/prefix/lib/pkgconfig; \
	$(CC) -std=c11 -Wall -Werror consumer.c $$(pkg-config --cflags --libs dpmo) -o shared; \
	readelf -d shared | grep -q 'NEEDED.*libdpmo.so.$(SOVERSION)'; \
	$(CC) -std=c11 -Wall -Werror consumer.c $$(pkg-config --cflags dpmo) -Wl,-Bstatic $$(pkg-config --libs-only-L --libs-only-l dpmo) -Wl,-Bdynamic $$(pkg-config --static --libs-only-other dpmo) -o static; \
	! readelf -d static | grep -q 'libdpmo'; \
	cmake -S . -B cm -DCMAKE_PREFIX_PATH=$$t/prefix >/dev/null; cmake --build cm >/dev/null; \
	mv prefix moved; \
	LD_LIBRARY_PATH=$$t/moved/lib ./shared; ./static; LD_LIBRARY_PATH=$$t/moved/lib ./cm/consumer_shared; ./cm/consumer_static; \
	$(SUBMAKE) -C $(CURDIR) install DESTDIR=$$t/stage PREFIX=/usr >/dev/null; \
	test -L $$t/stage/usr/lib/libdpmo.so.$(SOVERSION) && grep -q '^prefix=/usr$$' $$t/stage/usr/lib/pkgconfig/dpmo.pc; \
	echo "install-test: pkg-config (shared, static) and CMake consumers built against the installed prefix and run after moving it; DESTDIR staging"

## The minimum Rust versions, each with the toolchain rustup installs (a download, so not part of `make test`):
## the library (Cargo.toml's rust-version) with the committed lockfile and in a new edition-2021 project that
## resolves its dependencies today, the other crates of the workspace checked with it, and the tests, examples
## and benches with theirs ([package.metadata.dpmo] tests-rust-version). Each version is shown to be the least:
## the new project is refused on the version before, and the tests on the library's version.
MSRV       := $(shell sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MSRV_TESTS := $(shell sed -n 's/^tests-rust-version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MSRV_PREV  := $(word 1,$(subst ., ,$(MSRV))).$(shell echo $$(( $(word 2,$(subst ., ,$(MSRV))) - 1 )))
msrv:
	@set -e; for v in $(MSRV_PREV) $(MSRV) $(MSRV_TESTS); do rustup toolchain install $$v --profile minimal >/dev/null 2>&1 \
	  || { echo "msrv: rustup cannot install Rust $$v" >&2; exit 1; }; done
	$(CARGO) +$(MSRV) build -p dpmo --locked --target-dir target/msrv
	@set -e; t=$$(mktemp -d); trap 'rm -rf $$t' EXIT; mkdir $$t/src; \
	printf '[package]\nname = "downstream"\nversion = "0.0.0"\nedition = "2021"\n\n[dependencies]\ndpmo = { path = "%s" }\n' \
	  "$(CURDIR)" > $$t/Cargo.toml; \
	echo 'fn main() { assert!(dpmo::MAX_OBJECTIVES > 0); }' > $$t/src/main.rs; \
	if $(CARGO) +$(MSRV_PREV) build -q --manifest-path $$t/Cargo.toml --target-dir target/msrv/downstream >$$t/prev.log 2>&1; then \
	  echo "msrv: a new project builds dpmo with Rust $(MSRV_PREV), below rust-version $(MSRV)" >&2; exit 1; fi; \
	grep -q 'requires rustc $(MSRV)' $$t/prev.log || { cat $$t/prev.log; echo "msrv: Rust $(MSRV_PREV) failed otherwise" >&2; exit 1; }; \
	$(CARGO) +$(MSRV) run -q --manifest-path $$t/Cargo.toml --target-dir target/msrv/downstream; \
	echo "msrv: a new project resolves dpmo's dependencies today ($$(grep -A1 'name = "heapless"' $$t/Cargo.lock | tail -n 1 | tr -d ' ')) and builds with Rust $(MSRV), not $(MSRV_PREV)"
	$(CARGO) +$(MSRV) check -q -p dpmo-capi --locked --target-dir target/msrv
	$(CARGO) +$(MSRV) check -q -p dpmo-eval -p dpmo-python --locked --target-dir target/msrv
	@if $(CARGO) +$(MSRV) build -q -p dpmo --tests --locked --target-dir target/msrv >target/msrv/tests.log 2>&1; then \
	  echo "msrv: the tests build with Rust $(MSRV): lower tests-rust-version" >&2; exit 1; fi; \
	grep -q 'requires rustc $(MSRV_TESTS)' target/msrv/tests.log || { cat target/msrv/tests.log; exit 1; }
	@# Unoptimised: this checks that they build, not how fast they run.
	CARGO_PROFILE_TEST_OPT_LEVEL=0 CARGO_PROFILE_BENCH_OPT_LEVEL=0 CARGO_PROFILE_BENCH_LTO=false \
	  $(CARGO) +$(MSRV_TESTS) build -p dpmo --all-targets --locked --target-dir target/msrv
	@echo "msrv: the library builds with Rust $(MSRV) (not $(MSRV_PREV)), its tests, examples and benches with $(MSRV_TESTS) (not $(MSRV))"

## What crates.io would say of the crate, and the unpacked crate's tests, examples and benches compiled (they
## ship in it). Needs the crates.io index (network), so it is not part of `make test`; rust-tests runs the
## offline part (cargo package with no warning, packaging/check_registry.py crate).
publish-check:
	set -o pipefail; $(CARGO) publish --dry-run -p dpmo --allow-dirty 2>&1 | tee target/publish-check.log
	@! grep -E '^warning' target/publish-check.log | grep -v 'aborting upload due to dry run' || \
	  { echo "publish-check: cargo publish warns (above)" >&2; exit 1; }
	@# tar -m: the .crate's entries all carry one fixed old mtime, with which cargo would take the previous run's
	@# build of the library in target/publish-check for fresh and check the tests against stale code.
	@set -e; t=$$(mktemp -d); trap 'rm -rf $$t' EXIT; tar xzmf target/package/dpmo-$(VERSION).crate -C $$t; \
	CARGO_PROFILE_TEST_OPT_LEVEL=0 $(CARGO) check -q --all-targets --manifest-path $$t/dpmo-$(VERSION)/Cargo.toml \
	  --target-dir target/publish-check; \
	echo "publish-check: no warning; the unpacked dpmo-$(VERSION).crate checks with its tests, examples and benches"

## Benchmarks (not tests): selections per second per selector, and the Pareto score stage, each printed
## beside a simple reference implementation timed in the same run; the timing-leakage test (dudect-style
## Welch t of fixed against neighbouring inputs) of every selector, isochronous and exact.
bench:
	$(CARGO) bench -p dpmo --bench select
	$(CARGO) bench -p dpmo --bench pareto
	$(CARGO) bench -p dpmo --bench timing
	$(MAKE) -C bindings/python bench

clean:
	$(CARGO) clean
	rm -rf $(BUILD)
