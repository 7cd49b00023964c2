#!/usr/bin/env bash
# Build libgputrace.so and the CUDA C samples on the GPU machine (no protobuf-c there: no analyzer).
# Usage: tools/gpu/build.sh  -> build-gpu/lib/libgputrace.so, build-gpu/sample_apps/*
set -euo pipefail
cd "$(dirname "$0")/../.."
export CUDACXX=${CUDACXX:-/usr/local/cuda/bin/nvcc} PATH=/usr/local/cuda/bin:$PATH
cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUTRACE_BUILD_ANALYZER=OFF \
  -DGPUTRACE_BUILD_TESTS=OFF -DGPUTRACE_BUILD_SAMPLES=ON -DCUDA_HOME=/usr/local/cuda \
  -DCMAKE_CUDA_ARCHITECTURES=90 >build-gpu.log 2>&1 || { tail -40 build-gpu.log; exit 1; }
cmake --build build-gpu -j16 >>build-gpu.log 2>&1 || { tail -60 build-gpu.log; exit 1; }
ls -la build-gpu/lib/libgputrace.so
