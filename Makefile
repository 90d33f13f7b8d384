# dpfeat — the two commands of the README are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go

# scripts/setup.sh installs what is missing and prints the ONNX Runtime
# library's path; later targets find it through ONNXRUNTIME_LIB.
export ONNXRUNTIME_LIB ?= $(CURDIR)/.deps/onnxruntime/libonnxruntime.so.1

.PHONY: all setup build test vet demo bench clean

all: build

setup:
	@scripts/setup.sh >/dev/null

build:
	$(GO) build -o bin/dpfeat .

vet:
	$(GO) vet ./...

# The test command of the README and of .ci/run.
test: setup vet
	$(GO) test -count=1 ./...

# The main job end to end on the embedded default.
demo: setup build
	@scripts/demo.sh bin/dpfeat

bench: setup
	$(GO) test -run '^$$' -bench . -benchmem ./...

clean:
	rm -rf bin
