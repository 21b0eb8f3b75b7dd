# Thin wrapper: everything real lives in CMake (CMakePresets.json) and scripts/.
#   make setup   install the Debian packages the project needs (idempotent)
#   make test    setup + build + run the whole CTest suite, then (PRESET=ci, no CTEST_ARGS)
#                the sanitizer and fuzz passes of scripts/sanitizer-passes (what CI runs)
#   make test-sanitizers   only those passes (SANITIZER_PASSES="asan tsan fuzz" by default)
#   make demo    setup + a release build of only the tools it runs + the quick placement comparison
#                (tables and plots in results/quick; its generated data is removed at the end)
#   make install [PREFIX=/usr/local]   release build, then cmake --install into PREFIX
#   make dkms-install / dkms-remove   dimmap.ko through DKMS for the running kernel (root)
PRESET ?= ci
BUILD := build/$(PRESET)
CTEST_ARGS ?=
SANITIZER_PASSES ?= asan tsan fuzz
PREFIX ?= /usr/local
# The executables dimmap-compare runs (apps/compare/dimmap_compare/tools.py; kmer and microbench
# are kmer_cli and microbench-cli, their libraries own the short names); no tests, no fuzzers.
DEMO_TOOLS := dimmap-budget lriot microbench-cli dimmap-run rmat-gen graph-ingest bfs kmer_cli bwa-mmap lmdb-lookup

.PHONY: setup build test test-sanitizers demo install clean dkms-install dkms-remove
setup:
	@scripts/setup

build: setup
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

# The passes run even when the main suite failed, so CI shows every failure at once; the end
# of a failed main-suite test's output is printed again last, where a log cut to its tail shows it.
test: build
	@status=0; ctest --preset $(PRESET) $(CTEST_ARGS) || status=1; main=$$status; \
	if [ "$(PRESET)" = ci ] && [ -z "$(CTEST_ARGS)" ] && [ -n "$(SANITIZER_PASSES)" ]; then \
	  scripts/sanitizer-passes $(SANITIZER_PASSES) || status=1; fi; \
	if [ $$main != 0 ]; then scripts/show-failed-tests $(BUILD); fi; \
	exit $$status

test-sanitizers: setup
	scripts/sanitizer-passes $(SANITIZER_PASSES)

demo: setup
	cmake --preset release
	cmake --build --preset release --target $(DEMO_TOOLS)
	build/release/apps/compare/dimmap-compare all --quick --out=results/quick

# Always the release (optimized) build, whatever PRESET says.
install: setup
	cmake --preset release
	cmake --build --preset release
	cmake --install build/release --prefix "$(PREFIX)"

dkms-install:
	runtime/kernel/scripts/dkms.sh install

dkms-remove:
	runtime/kernel/scripts/dkms.sh remove

clean:
	rm -rf build
