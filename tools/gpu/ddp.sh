#!/usr/bin/env bash
# GPU evidence for many processes and GPUs (issue 9), on a 2-GPU machine (nvidia-h200-x2):
# DDP training of resnet18 under torchrun recorded with `gputrace record` (the analyzer travels in
# .devbin: tools/gpu/pack_devbin.sh), once plain and once with a slow rank 1, and the overhead of
# gputrace on the same run, untraced and traced interleaved. Output: $OUT/ddp/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
R="$OUT/ddp"; mkdir -p "$R"
G=$PWD/.devbin/bin/gputrace
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1 OMP_NUM_THREADS=4
nvidia-smi --query-gpu=index,name,driver_version --format=csv >"$R/gpus.txt" 2>&1
TRAIN=(sample_apps/train.py --model resnet50 --batch-size 64 --steps 40 --warmup 10)
run_torchrun() { timeout 150 torchrun --standalone --nproc_per_node=2 "$@"; }
( cd "$R" && timeout 200 "$G" record -o ddp -- torchrun --standalone --nproc_per_node=2 \
    "$OLDPWD/${TRAIN[0]}" "${TRAIN[@]:1}" ) >"$R/record.txt" 2>&1
echo "record rc=$?" >>"$R/record.txt"
( cd "$R" && timeout 200 "$G" record -o ddp_straggler -- torchrun --standalone --nproc_per_node=2 \
    "$OLDPWD/${TRAIN[0]}" "${TRAIN[@]:1}" --straggler-ms 8 ) >"$R/record_straggler.txt" 2>&1
echo "record rc=$?" >>"$R/record_straggler.txt"
# Overhead: untraced and traced alternate, 3 repeats each.
for rep in 1 2 3; do
  run_torchrun "${TRAIN[@]}" 2>&1 | grep -E "steady" | sed "s/^/untraced rep$rep /" >>"$R/overhead.txt"
  GPUTRACE_DIR=/tmp/ddp-ovh GPUTRACE_QUIET=1 LD_PRELOAD=$PWD/.devbin/lib/libgputrace.so \
    run_torchrun "${TRAIN[@]}" 2>&1 | grep -E "steady" | sed "s/^/traced rep$rep /" >>"$R/overhead.txt"
  mkdir -p /tmp/ddp-ovh; rm -rf /tmp/ddp-ovh/*
done
cat "$R/overhead.txt"
