#!/usr/bin/env bash
# The order links (GPUTRACE_CUPTI_LINK=order, the default) on the CUDA C samples: each sample with
# the shared cudart recorded in the default mode and with a callback pair on every launch as well
# (the reference, GPUTRACE_CUPTI_CALLBACKS=1): test_order_link real compares the links found
# without the pairs with the pairs, and the report says how the default run's kernels are linked.
# The static-cudart build is recorded too (no wrapper fires: CUPTI's API records link it). Builds
# the samples here (tools/gpu/build.sh); library, analyzer and test_order_link from .devbin.
set -uo pipefail
cd "$(dirname "$0")/../.."
: "${OUT:?}"
F=$OUT/order_samples; mkdir -p "$F"
tools/gpu/build.sh >/dev/null || exit 1
L=$PWD/.devbin/lib/libgputrace.so
S=$PWD/build-gpu/sample_apps
export LD_LIBRARY_PATH=$PWD/.devbin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for app in healthy launch_bound pageable_copies sync_every_iter alloc_in_loop conv_backend conv_legacy; do
  [ -x "$S/$app" ] || { echo "== $app: not built"; continue; }
  for mode in order ref; do
    D=/tmp/os_${app}_$mode; rm -rf "$D"; mkdir -p "$D"
    env $([ $mode = ref ] && echo GPUTRACE_CUPTI_CALLBACKS=1) LD_PRELOAD=$L GPUTRACE_DIR=$D "$S/$app" >"$D.log" 2>&1
    echo "== $app $mode rc=$?"
    if [ $mode = ref ]; then
      .devbin/bin/test_order_link real "$D"/*.gtrace 2>&1 | tail -1 | sed 's|.*gtrace: ||'
    else
      .devbin/bin/gputrace report "$D"/*.gtrace 2>/dev/null | grep "^  links"
      cp "$D"/*.gtrace "$F/$app.gtrace"
    fi
  done
done
D=/tmp/os_static; rm -rf $D; mkdir -p $D
LD_PRELOAD=$L GPUTRACE_DIR=$D "$S/healthy_static" >$D.log 2>&1
echo "== healthy_static rc=$?: $(.devbin/bin/gputrace report $D/*.gtrace 2>/dev/null | grep '^  links')"
echo "== done $(date +%T)"
