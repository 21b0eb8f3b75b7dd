# Thin wrapper: everything real lives in CMake (CMakePresets.json) and scripts/.
#   make setup   install the Debian packages the project needs (idempotent)
#   make test    setup + build + run the whole CTest suite (what CI runs)
#   make demo    setup + build + the quick placement comparison (tables and plots)
PRESET ?= ci
BUILD := build/$(PRESET)
CTEST_ARGS ?=

.PHONY: setup build test demo clean
setup:
	@scripts/setup

build: setup
	cmake --preset $(PRESET)
	cmake --build --preset $(PRESET)

test: build
	ctest --preset $(PRESET) $(CTEST_ARGS)

demo: build
	$(BUILD)/apps/compare/dimmap-compare all --quick --out=results/quick

clean:
	rm -rf build
