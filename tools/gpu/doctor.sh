#!/usr/bin/env bash
# GPU evidence for `gputrace doctor` (issue 19): builds gputrace-doctor alone (it needs only a C
# compiler and libdl: no protobuf-c, no CUDA linked) and runs it against nvidia-smi and two
# independent bandwidth/GEMM programs (a CUDA runtime program compiled with nvcc, and PyTorch).
#
# Run from the repo root on the GPU machine:   OUT=/some/folder bash tools/gpu/doctor.sh
# (or as a part of tools/gpu/run_all.sh: run_all.sh doctor). Output: $OUT/doctor/steps.txt and
# $OUT/doctor/doctor.tar.gz with doctor/NN-<step>.txt (one file per step: its command line, its
# output, its exit status) and doctor/peaks/peaks-<uuid>.json. A failing step is reported in
# steps.txt and the next one runs. Takes about 1-2 minutes.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?OUT must name the folder for results}"
R=/tmp/gputrace-doctor-evidence
rm -rf "$R"; mkdir -p "$R/doctor/peaks"
D=$R/doctor
STEPS=$D/steps.txt
BIN=$R/gputrace-doctor
n=0
export PATH=/usr/local/cuda/bin:$PATH

# step NAME COMMAND...: runs COMMAND (time-limited), keeps its output in NN-NAME.txt, notes the
# status in steps.txt, never stops the script.
step() {
  local name=$1; shift
  n=$((n + 1))
  local f; f=$(printf '%s/%02d-%s.txt' "$D" "$n" "$name")
  { echo "\$ $*"; echo; } >"$f"
  local t0; t0=$(date +%s.%N)
  timeout "${STEP_TIMEOUT:-240}" "$@" >>"$f" 2>&1
  local rc=$?
  local secs; secs=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }")
  printf '\n[exit status %d, %s s]\n' "$rc" "$secs" >>"$f"
  printf '%02d %-28s rc=%-3d %ss\n' "$n" "$name" "$rc" "$secs" | tee -a "$STEPS"
}

{
  echo "# gputrace doctor evidence, $(date -u +%FT%TZ) on $(hostname)"
  echo "# commit $(git rev-parse HEAD 2>/dev/null || echo '?')"
} >"$STEPS"

set -x
# 1. Build: the doctor sources with cc alone (what a user without the analyzer's deps can do).
step build cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Ianalyzer/doctor \
  analyzer/doctor/doctor_main.c analyzer/doctor/doctor_driver.c analyzer/doctor/doctor_libs.c \
  analyzer/doctor/doctor_python.c analyzer/doctor/doctor_bench.c analyzer/doctor/doctor_out.c \
  analyzer/doctor/doctor_cli.c -ldl -o "$BIN"

# 2. What the machine says about itself.
step nvidia-smi-query nvidia-smi -q
step nvidia-smi-csv nvidia-smi --format=csv --query-gpu=index,name,uuid,pci.bus_id,compute_cap,memory.total,clocks.max.sm,clocks.max.mem,clocks.sm,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,pcie.link.width.max,persistence_mode,mig.mode.current,driver_version
step nvidia-smi-nvlink nvidia-smi nvlink -s
step nvcc-version nvcc --version
step environment sh -c "env | grep -E '^(LD_LIBRARY_PATH|CUDA|NVIDIA|PATH)' ; python3 -c 'import sys; print(sys.version)'"
step ldconfig-cuda sh -c "ldconfig -p | grep -E 'libcuda.so|libcudart|libcudnn.so|libcublas|libcupti|nvidia-ml'"
step sysfs-pcie-link sh -c 'for d in /sys/bus/pci/devices/*; do [ "$(cat $d/vendor)" = 0x10de ] || continue; echo "$d class $(cat $d/class) link $(cat $d/current_link_speed) x$(cat $d/current_link_width), max $(cat $d/max_link_speed) x$(cat $d/max_link_width)"; done' 

# 3. doctor itself: text, JSON, with Python, repeated (run-to-run spread), saving the peaks.
step doctor "$BIN"
step doctor-json "$BIN" --json
step doctor-python "$BIN" --python python3
step doctor-python-json "$BIN" --python python3 --json
step doctor-repeat-1 "$BIN" --json
step doctor-repeat-2 "$BIN" --json
step doctor-toolkit-bench env LD_LIBRARY_PATH=/usr/local/cuda/lib64 "$BIN"
step doctor-save env GPUTRACE_PEAKS="$D/peaks/" "$BIN" --save --python python3
step peaks-file sh -c "cat $D/peaks/*.json"
# The toolkit's libraries on the loader's path, then the pip cuDNN before them (two cuDNN 9).
PIP_CUDNN=$(python3 -c 'import nvidia.cudnn as m; print(list(m.__path__)[0] + "/lib")' 2>/dev/null)
step doctor-toolkit env LD_LIBRARY_PATH=/usr/local/cuda/lib64 "$BIN" --no-bench
step doctor-two-cudnn env LD_LIBRARY_PATH="$PIP_CUDNN:/usr/lib/x86_64-linux-gnu:/usr/local/cuda/lib64" "$BIN" --no-bench
step doctor-no-gpu env CUDA_VISIBLE_DEVICES= "$BIN"
step doctor-help "$BIN" --help

# 4. Independent figures: a CUDA runtime program (nvcc) and PyTorch.
step bw-build nvcc -O2 -arch=native -o "$R/doctor_bw" tools/gpu/doctor_bw.cu
step bw-run "$R/doctor_bw"
step bw-run-again "$R/doctor_bw"
step torch-bw python3 tools/gpu/doctor_torch_bw.py
if [ -x /usr/local/cuda/extras/demo_suite/bandwidthTest ]; then
  step bandwidthTest /usr/local/cuda/extras/demo_suite/bandwidthTest --memory=pinned --mode=range --start=67108864 --end=67108864 --increment=1
fi

# 5. Optional: the report against these peaks, when an analyzer was carried (.devbin, from
# tools/gpu/pack_devbin.sh on the development machine).
if [ -x .devbin/bin/gputrace ]; then
  # The file itself: the committed trace's host need not be this machine's name.
  PEAKS_FILE=$(ls "$D"/peaks/peaks-*.json 2>/dev/null | head -1)
  step report-peaks env GPUTRACE_PEAKS="$PEAKS_FILE" .devbin/bin/gputrace report tests/data/pageable_copies.gtrace
  step devbin-doctor .devbin/bin/gputrace doctor --no-bench
fi
set +x

mkdir -p "$OUT/doctor"
tar -C "$R" -czf "$OUT/doctor/doctor.tar.gz" doctor
cp "$STEPS" "$OUT/doctor/steps.txt"
cat "$STEPS"
ls -la "$OUT/doctor"
