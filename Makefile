# dpfeat — the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go

# scripts/setup.sh installs what is missing and prints the ONNX Runtime
# library's path; later targets find it through ONNXRUNTIME_LIB.
export ONNXRUNTIME_LIB ?= $(CURDIR)/.deps/onnxruntime/libonnxruntime.so.1

.PHONY: all setup build test vet fuzz-smoke fuzz demo bench clean

all: build

setup:
	@scripts/setup.sh >/dev/null

build:
	$(GO) build -o bin/dpfeat .

vet:
	$(GO) vet ./...

# The test command of the README and of .ci/run.
# DPFEAT_REQUIRE_ORT makes tests fail, not skip, when ONNX Runtime is absent.
# The fuzz smoke runs first so that go test's summary closes the output.
test: setup vet
	@$(MAKE) --no-print-directory fuzz-smoke
	DPFEAT_REQUIRE_ORT=1 $(GO) test -count=1 ./...

# Every fuzz target for a few seconds (CI); `make fuzz FUZZTIME=10m` by hand.
FUZZ_TARGETS := features:FuzzOpen features:FuzzIDX features:FuzzCIFAR
FUZZTIME ?= 4s
fuzz-smoke:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test ./$$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5x >/tmp/dpfeat-fuzz.log 2>&1 \
			|| { cat /tmp/dpfeat-fuzz.log; exit 1; }; \
	done

# Longer fuzzing by hand: make fuzz LONG_FUZZTIME=1h
LONG_FUZZTIME ?= 10m
fuzz:
	@$(MAKE) --no-print-directory fuzz-smoke FUZZTIME=$(LONG_FUZZTIME)

# The main job end to end on the embedded default.
demo: setup build
	@scripts/demo.sh bin/dpfeat

bench: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
