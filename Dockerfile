# The worker image for remote Apache Beam runners (Flink, Spark, Dataflow):
# Beam's Go boot loader, which downloads the staged worker binary (dpfeat's
# Beam build, dpfeat-beam, which stages itself) and starts it
# with --worker, plus what dpfeat's cgo parts need at run time — OpenBLAS
# and LAPACKE, and the ONNX Runtime library scripts/setup.sh fetched. The
# base is the Debian release dpfeat is built on (bookworm: glibc 2.36), so
# the binary built here runs in it. Build after `make` (which runs
# scripts/setup.sh):
#
#   docker build -t dpfeat-worker:latest .
#
# and push it where the runner's workers pull from. docs/distributed.md
# gives the runner flags.
FROM apache/beam_go_sdk:2.77.0 AS beam

FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libopenblas0-pthread liblapacke libgfortran5 libstdc++6 ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=beam /opt/apache/beam /opt/apache/beam
COPY .deps/onnxruntime/libonnxruntime.so.1 /usr/lib/dpfeat/libonnxruntime.so.1
ENV ONNXRUNTIME_LIB=/usr/lib/dpfeat/libonnxruntime.so.1
ENTRYPOINT ["/opt/apache/beam/boot"]
