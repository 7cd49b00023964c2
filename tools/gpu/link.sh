#!/usr/bin/env bash
# Kernels linked to their calls by CUPTI's queued timestamps (GPUTRACE_CUPTI_LINK=queued, the
# third session's default) instead of a callback pair per launch. Records ResNet-18 b4 /
# ResNet-50 b64 steps in that mode and with
# GPUTRACE_CUPTI_CALLBACKS=1 (a callback pair for every kernel as well: the reference), compares
# the queued-time links with the pairs (cupti_dump, whole file) and what the streaming converter
# links, then the paired step overhead with the training threads pinned. Library, analyzer and
# cupti_dump from .devbin; results under $OUT/link/.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/link; mkdir -p "$F"
L=$PWD/.devbin/lib/libgputrace.so
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
agreement() { # DUMP: kernels whose callback pair and queued-time link agree / disagree / ...
  awk '$1 == "extcorr" { split($2, k, "="); split($3, e, "="); split($4, c, "="); if (k[2] == 5) ext[c[2]] = e[2] }
       $1 == "timelink" { split($2, e, "="); split($3, c, "="); tl[c[2]] = e[2] }
       $1 == "kernel" { for (i = 2; i <= NF; i++) if ($i ~ /^corr=/) { split($i, c, "="); ks[++n] = c[2] } }
       END { for (j = 1; j <= n; j++) { w = ks[j]
               if ((w in ext) && (w in tl)) { if (ext[w] == tl[w]) agree++; else dis++ }
               else if (w in ext) onlypair++; else if (w in tl) onlytime++; else none++ }
             printf "kernels %d: pair and queued time agree %d, disagree %d, pair only %d, queued time only %d, neither %d\n", n, agree, dis, onlypair, onlytime, none }' "$1"
}
for m in "resnet18 4 30" "resnet50 64 12"; do
  set -- $m
  [ "${RECORD:-1}" = 1 ] || break
  for mode in auto 1; do
    D=/tmp/link_$1_$mode; rm -rf "$D"; mkdir -p "$D"
    LD_PRELOAD=$L GPUTRACE_DIR=$D GPUTRACE_CUPTI_LINK=queued GPUTRACE_CUPTI_CALLBACKS=$mode \
      python3 sample_apps/train.py --model "$1" --batch-size "$2" --steps "$3" --warmup 2 >"$D.log" 2>&1
    echo "== $1 callbacks=$mode rc=$?: $(python3 tools/bench/gtrace_count.py --json "$D"/*.gtrace | python3 -c 'import json,sys; k=json.load(sys.stdin)["kinds"]; print("kernels", k.get("gpu_kernel"), "pairs", k.get("gpu_ext_corr"))')"
    .devbin/bin/cupti_dump "$D"/*.gtrace >"$D.dump"; agreement "$D.dump"
    .devbin/bin/gputrace convert "$D"/*.gtrace -o "$D.perfetto-trace" 2>&1 | tail -1 | sed 's/.*records: //'
  done
done
echo "== paired resnet18 $(date +%T)"
python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet18 --cpus "${CPUS:-2-5}" \
  --procs "${R18_PROCS:-6}" --blocks "${R18_BLOCKS:-32}" \
  --configs "${CONFIGS:-gputrace_queued,gputrace_launch_callbacks,gputrace_cupti_off}" 2>&1 | tail -7
mv "$F/paired.md" "$F/paired_r18.md"
if [ "${R50:-1}" = 1 ]; then
  echo "== paired resnet50 $(date +%T)"
  python3 tools/bench/paired_overhead.py bench --lib "$L" --out "$F" --models resnet50 --cpus "${CPUS:-2-5}" \
    --procs "${R50_PROCS:-3}" --blocks 12 --configs "${R50_CONFIGS:-gputrace_queued,gputrace_launch_callbacks}" 2>&1 | tail -4
  mv "$F/paired.md" "$F/paired_r50.md"
fi
echo "== done $(date +%T)"
