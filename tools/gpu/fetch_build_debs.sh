#!/usr/bin/env bash
# tools/gpu/fetch_build_debs.sh — here (Debian, with apt): download into .deps/ the Debian packages
# that tools/test.sh needs to build gputrace and that the GPU machine lacks (it has gcc, cmake,
# python3, zlib and the CUDA toolkit, no network). Carry .deps to the GPU machine and run
# tools/gpu/under_load.sh there. Only libraries and protoc-c: no clang-format, valgrind or Chromium
# (the format check and the HTML test say they are skipped there).
set -euo pipefail
cd "$(dirname "$0")/../.."
mkdir -p .deps
cd .deps
rm -f ./*.deb
apt-get download libprotobuf-c-dev libprotobuf-c1 protobuf-c-compiler libprotoc32 libprotobuf32 \
  libunwind-dev libunwind8 liblzma-dev libjansson-dev libjansson4 libdw-dev libdw1 libelf-dev \
  libelf1 libiberty-dev zlib1g-dev 2>&1 | grep -v "^W: Download is performed unsandboxed" || true
ls ./*.deb | wc -l | sed 's/$/ packages in .deps/'
