# dpfeat — the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go

# scripts/setup.sh installs what is missing and prints the ONNX Runtime
# library's path; later targets find it through ONNXRUNTIME_LIB.
export ONNXRUNTIME_LIB ?= $(CURDIR)/.deps/onnxruntime/libonnxruntime.so.1

# OpenBLAS when scripts/setup.sh has installed it (pure-Go gonum otherwise);
# override with `make TAGS=` for a pure-Go build.
TAGS ?= $(shell ldconfig -p 2>/dev/null | grep -q 'libopenblas\.so ' && ldconfig -p | grep -q 'liblapacke\.so ' && echo openblas)
GOFLAGS_TAGS = $(if $(TAGS),-tags "$(TAGS)")

.PHONY: all setup build install test python-test wheel vet fuzz-smoke fuzz demo bench audit clean

all: build

setup:
	@scripts/setup.sh >/dev/null

# The binary remembers the ONNX Runtime library it was built against, so
# that it runs from anywhere it is copied (encode.BuiltWithLibrary).
LDFLAGS = -X github.com/dpfeat/dpfeat/encode.BuiltWithLibrary=$(ONNXRUNTIME_LIB)
# Two binaries: bin/dpfeat without Apache Beam (-tags nobeam: it starts in
# half the time), which hands --runner commands and worker starts to
# bin/dpfeat-beam beside it, the default build with Beam linked.
build:
	@[ -x bin/dpfeat ] || echo "first build: downloading Go modules and compiling the cgo parts (ONNX Runtime bindings, OpenBLAS); 1 to 5 minutes on 2 cores, seconds after that"
	$(GO) build -tags "$(TAGS) nobeam" -ldflags "$(LDFLAGS)" -o bin/dpfeat .
	$(GO) build $(GOFLAGS_TAGS) -ldflags "$(LDFLAGS)" -o bin/dpfeat-beam .

# make install [PREFIX=~/.local]: the binary in PREFIX/bin and the ONNX
# Runtime library it needs in PREFIX/lib/dpfeat, where it looks first.
PREFIX ?= $(HOME)/.local
install: setup build
	install -D -m 0755 bin/dpfeat $(PREFIX)/bin/dpfeat
	install -D -m 0755 bin/dpfeat-beam $(PREFIX)/bin/dpfeat-beam
	install -D -m 0644 $(ONNXRUNTIME_LIB) $(PREFIX)/lib/dpfeat/libonnxruntime.so.1
	@echo "installed $(PREFIX)/bin/dpfeat and dpfeat-beam (with $(PREFIX)/lib/dpfeat/libonnxruntime.so.1)"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "add it to PATH: export PATH=\"$(PREFIX)/bin:\$$PATH\"" ;; esac

vet:
	$(GO) vet $(GOFLAGS_TAGS) ./...
	$(GO) vet -tags "$(TAGS) nobeam" . ./cli

# The test command of the README and of .ci/run.
# DPFEAT_REQUIRE_ORT makes tests fail, not skip, when ONNX Runtime is absent.
# The fuzz smoke and the pure-Go run of the backend conformance suite come
# first, so that go test's summary of the full run closes the output.
test: setup vet
	@$(MAKE) --no-print-directory fuzz-smoke
	$(GO) test -count=1 -run 'Conformance' ./solvers
	@$(MAKE) --no-print-directory python-test
	@echo "go test ./... (each package as it finishes; the count closes the run)"
	@set -o pipefail; DPFEAT_REQUIRE_ORT=1 $(GO) test $(GOFLAGS_TAGS) -count=1 -json ./... | $(GO) run ./internal/testsum

# The Python package (python/dpfeat) against the binary, with Debian's
# python3-numpy and python3-sklearn (scripts/setup.sh installs them); then
# the wheel installed offline into a fresh virtual environment, where the
# README's Python block runs with no PATH or environment variable.
PYTHON ?= /usr/bin/python3
python-test: build wheel
	rm -rf build/venv && $(PYTHON) -m venv --system-site-packages build/venv
	build/venv/bin/pip install -q --no-index --disable-pip-version-check dist/dpfeat-*.whl
	PYTHONPATH=python DPFEAT_BIN=$(CURDIR)/bin/dpfeat DPFEAT_CACHE=$(CURDIR)/build/cache DPFEAT_WHEEL_PYTHON=$(CURDIR)/build/venv/bin/python $(PYTHON) -m unittest discover -s python/tests

# The platform wheel: the package with a pure-Go dpfeat (no OpenBLAS to
# carry) and the ONNX Runtime library setup fetched, offline.
wheel: setup
	$(GO) build -tags nobeam -o build/wheel/dpfeat .
	rm -f dist/dpfeat-*.whl
	$(PYTHON) scripts/wheel.py build/wheel/dpfeat $(ONNXRUNTIME_LIB) dist

# Every fuzz target for a few seconds (CI); `make fuzz` fuzzes longer by hand.
# CI counts executions rather than seconds: a duration makes Go's fuzz
# coordinator (before Go 1.27) fail now and then with a bare "context
# deadline exceeded" when the deadline races a busy worker (golang/go#75804).
FUZZ_TARGETS := features:FuzzOpen features:FuzzOpenForeign features:FuzzNumPy features:FuzzCSV features:FuzzIDX features:FuzzCIFAR models:FuzzClassifier sweep:FuzzConfig
FUZZTIME ?= 8000x
fuzz-smoke:
	@tmp=$$(mktemp -d -t dpfeat-fuzz.XXXXXX); log=$$tmp/log; trap 'rm -rf "$$tmp"' EXIT; \
	for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; name=$${t##*:}; \
		echo "fuzz $$pkg $$name for $(FUZZTIME)"; \
		$(GO) test ./$$pkg -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 5x >"$$log" 2>&1 \
			|| { cat "$$log"; exit 1; }; \
	done

# Longer fuzzing by hand: make fuzz LONG_FUZZTIME=1h
LONG_FUZZTIME ?= 10m
fuzz:
	@$(MAKE) --no-print-directory fuzz-smoke FUZZTIME=$(LONG_FUZZTIME)

# The main job end to end on the embedded default.
demo: setup build
	@scripts/demo.sh bin/dpfeat

# Go benchmarks; the scripts under bench/ (extract.sh, fit.sh,
# prototypes.sh) need ../shared/encoders and are run by hand.
# The long empirical privacy audit of every audited method (minutes);
# the short one runs in make test (go test ./audit).
audit: build
	bash bench/audit.sh

bench: setup
	$(GO) test $(GOFLAGS_TAGS) -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin build dist
