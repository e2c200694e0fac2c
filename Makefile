# Makefile — the README's quick-start commands and a few conveniences over CMake.
#
#   make demo           install what is missing, build, run the engine benchmark
#   make test           install what is missing, build build/, run every test through CTest
#   make test-sanitize  the same with clang + ASan/UBSan in build-san/ (unit, hostile, integration)
#   make build          configure and build build/ only
#   make format         clang-format our C sources in place; make format-check only checks
#   make install        install into PREFIX (default /usr/local): libspeedy, speedy, speedyd
#                       and their manual pages (every docs/*.1 and docs/*.8)
#   make clean          remove build/ and build-san/
#
# Variables: WERROR=ON|OFF (warnings are errors; default ON), JOBS (default: nproc),
# PREFIX (make install), BUILD_DIR, SAN_BUILD_DIR.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

WERROR ?= ON
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
PREFIX ?= /usr/local
BUILD_DIR ?= build
SAN_BUILD_DIR ?= build-san
CTEST_JOBS ?= 2
BENCH_ENGINE := $(BUILD_DIR)/bench/engine/bench_engine

# Our C sources for clang-format: tracked or not, never third-party or build output.
FORMAT_DIRS := include lib src tests bench
FORMAT_FILES = $(shell find $(FORMAT_DIRS) \( -name third_party -o -name vendor -o -name node_modules \
                 -o -name 'build*' \) -prune -o \( -name '*.c' -o -name '*.h' \) -print 2>/dev/null)

# cmake --build runs its own make: without our MAKEFLAGS/MAKELEVEL it does not print
# "Entering directory" lines around every step.
CMAKE_BUILD := env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS cmake --build

# $(call timed,LABEL,COMMAND): run COMMAND, print how long it took (also when it fails), and
# keep its exit status.
define timed
start=$$(date +%s); status=0; $(2) || status=$$?; \
echo "$(1): $$(( $$(date +%s) - start )) s$$( ((status == 0)) || echo ", failed (exit $$status)")"; \
exit $$status
endef

.PHONY: all demo test test-sanitize build build-san configure configure-san deps \
        format format-check install clean fuzz

all: build

deps:
	@bash scripts/install-deps

configure:
	cmake -S . -B $(BUILD_DIR) -DSPEEDY_WERROR=$(WERROR)

build: configure
	@$(call timed,build,$(CMAKE_BUILD) $(BUILD_DIR) -j$(JOBS))

configure-san:
	cmake -S . -B $(SAN_BUILD_DIR) -DCMAKE_C_COMPILER=clang -DSPEEDY_SANITIZE=ON \
	  -DSPEEDY_WERROR=$(WERROR)

build-san: configure-san
	@$(call timed,build (sanitizers),$(CMAKE_BUILD) $(SAN_BUILD_DIR) -j$(JOBS))

demo: deps
	@$(MAKE) --no-print-directory build
	@if [[ ! -x $(BENCH_ENGINE) ]]; then \
	  echo "make demo: $(BENCH_ENGINE) was not built (bench/engine missing or failed)" >&2; \
	  exit 1; \
	fi
	@echo "make demo: 1/3 the engine benchmark ($(BENCH_ENGINE) --quick):" \
	  "in-memory SPDY client<->server exchanges per second, heap per session, header compression"
	@$(call timed,benchmark,$(BENCH_ENGINE) --quick)
	@echo "make demo: 2/3 speedyd serving examples/site, fetched with speedy get over HTTP/2" \
	  "(h2 with push, h2c), SPDY (plaintext, TLS, push) and HTTP/1.1 (scripts/demo)"
	@$(call timed,demo,bash scripts/demo $(BUILD_DIR))
	@echo "make demo: 3/3 the page-load lab on the example corpus (examples/corpus): dsl and" \
	  "cable, TLS off and on, HTTP/1.1, SPDY and HTTP/2, 1 repetition; then headless" \
	  "Chromium loads the same pages over h2 beside speedy load (docs/lab.md)"
	@if [[ $$(id -u) != 0 || ! -c /dev/net/tun ]]; then \
	  echo "make demo: skipping the lab: emulated links need root and /dev/net/tun" \
	    "(run 'sudo make demo')"; \
	else \
	  rm -f $(BUILD_DIR)/lab-demo.jsonl; \
	  $(BUILD_DIR)/src/speedy lab run -o $(BUILD_DIR)/lab-demo.jsonl \
	    -l dsl,cable --loss 0 --tls off,on -c http1-fcfs,spdy-multi,h2-multi -n 1 --seed 1 \
	    --speedyd $(BUILD_DIR)/src/speedyd/speedyd examples/corpus && \
	  if command -v chromium >/dev/null && [[ -d node_modules/chrome-remote-interface ]]; then \
	    $(BUILD_DIR)/src/speedy lab run --client chromium -o $(BUILD_DIR)/lab-demo.jsonl \
	      -l cable --loss 0 --tls on -c h2-multi -n 1 --seed 1 \
	      --speedyd $(BUILD_DIR)/src/speedyd/speedyd examples/corpus; \
	  else \
	    echo "make demo: no chromium or node_modules: the browser's loads are skipped"; \
	  fi && \
	  $(BUILD_DIR)/src/speedy lab report --html $(BUILD_DIR)/lab-demo.html \
	    $(BUILD_DIR)/lab-demo.jsonl && \
	  echo "make demo: the lab's HTML report: $(BUILD_DIR)/lab-demo.html"; \
	fi

test: deps
	@$(MAKE) --no-print-directory build
	@$(call timed,ctest,ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error \
	  -j$(CTEST_JOBS))

test-sanitize: deps
	@$(MAKE) --no-print-directory build-san
	@$(call timed,ctest (sanitizers),ctest --test-dir $(SAN_BUILD_DIR) --output-on-failure \
	  --no-tests=error -L 'unit|hostile|interop|integration' -j$(CTEST_JOBS))

fuzz:
	FUZZ_SECONDS=$(or $(FUZZ_SECONDS),60) SAN_BUILD_DIR=$(SAN_BUILD_DIR) JOBS=$(JOBS) bash scripts/fuzz

format:
	@command -v clang-format >/dev/null || \
	  { echo "make format: clang-format not found (apt-get install clang-format)" >&2; exit 1; }
	clang-format -i $(FORMAT_FILES)

format-check:
	@command -v clang-format >/dev/null || \
	  { echo "make format-check: clang-format not found (apt-get install clang-format)" >&2; \
	    exit 1; }
	clang-format --dry-run --Werror $(FORMAT_FILES)

install: build
	cmake --install $(BUILD_DIR) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD_DIR) $(SAN_BUILD_DIR)
