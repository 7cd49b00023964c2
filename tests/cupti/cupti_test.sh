#!/bin/bash
# cupti_test.sh CASE — one CUPTI-module test: runs a program under LD_PRELOAD=libgputrace.so with the
# fake libcupti (tests/fakes), reads the .gtrace back with cupti_dump and checks what it must hold.
# Needs: GT_LIB (libgputrace.so), FAKES (fake library folder), EMIT_APP, DUMP, WORK (scratch folder).
set -u
CASE=$1
T=$WORK/$CASE
rm -rf "$T" && mkdir -p "$T"
fails=0

fail() { echo "FAIL [$CASE]: $*"; fails=$((fails + 1)); }
expect_line() { grep -qxF -- "$1" "$2" || fail "missing line '$1' in $2:$(printf '\n'; cat "$2")"; }
count_of() { awk -v k="$1" '$1 == "count" && $2 == k { print $3 }' "$2" | grep . || echo 0; }

# run_traced NAME [VAR=value...] -- CMD...: output in $T/NAME.{out,err,rc}, traces in $T/NAME.d
run_traced() {
    local name=$1; shift
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    mkdir -p "$T/$name.d"
    env LD_PRELOAD="$GT_LIB" LD_LIBRARY_PATH="$FAKES" GPUTRACE_CUPTI_LIB="$FAKES/libcupti.so.13" \
        GPUTRACE_DIR="$T/$name.d" "${vars[@]}" "$@" >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
}
# dump_trace NAME: the process's own (not forked child) trace, dumped into $T/NAME.dump
dump_trace() {
    local f found=
    for f in "$T/$1.d"/*.gtrace; do
        [ -e "$f" ] || continue
        "$DUMP" "$f" >"$T/tmp.dump" || fail "cupti_dump failed on $f"
        local flags
        flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/tmp.dump")
        if [ $((flags & 1)) -eq 0 ]; then mv "$T/tmp.dump" "$T/$1.dump"; found=1; fi
    done
    [ -n "$found" ] || { fail "no trace written for $1"; : >"$T/$1.dump"; }
}
# same_as_untraced NAME ARGS...: the app's stdout and exit status are what they are without gputrace
same_as_untraced() {
    local name=$1; shift
    LD_LIBRARY_PATH="$FAKES" "$@" >"$T/plain.out" 2>/dev/null
    local rc=$?
    [ "$rc" = "$(cat "$T/$name.rc")" ] || fail "exit status $(cat "$T/$name.rc") under gputrace, $rc without"
    cmp -s "$T/plain.out" "$T/$name.out" || fail "stdout differs under gputrace"
}

# check_links DUMP MIN CALL_RE: every kernel, copy and set in DUMP leads, through exactly one
# external-correlation pair of ours (CUSTOM2 = 5), to a wrapped call whose name matches CALL_RE;
# at least MIN of them. No pair may be written twice (callbacks and CUPTI's records both on).
check_links() {
    # A GPU record's call: its callback pair (extcorr, kind CUSTOM2) or, for kernels, the call its
    # queued time falls in (timelink, analyzer/model/kernel_link.c) or that anchors and launch order give
    # (orderlink, analyzer/model/order_link.c). Where a pair and a link both exist they must agree.
    awk -v min="$2" -v call_re="$3" '
        $1 == "cpucall" { split($4, a, "="); split($5, nm, "="); cpu[a[2]] = nm[2] }
        $1 == "extcorr" { split($2, k, "="); split($3, e, "="); split($4, c, "=");
                          if (k[2] != 5) next
                          if (c[2] in ext) { print "correlation id " c[2] " paired twice"; bad = 1 }
                          ext[c[2]] = e[2] }
        $1 == "timelink" || $1 == "orderlink" { split($2, e, "="); split($3, c, "=")
                          if (c[2] in tl) { print "kernel " c[2] " linked twice"; bad = 1 }
                          tl[c[2]] = e[2] }
        $1 == "kernel" || $1 == "memcpy" || $1 == "memset" {
            what = $1; for (i = 2; i <= NF; i++) { if ($i ~ /^name=/) what = what " " substr($i, 6)
                                                   if ($i ~ /^corr=/) { split($i, c, "="); corr = c[2] } }
            work[++n] = corr; label[n] = what }
        END {
            linked = 0
            for (i = 1; i <= n; i++) {
                w = work[i]
                if ((w in ext) && (w in tl) && ext[w] != tl[w]) { print label[i] ": queued time or order gives call " tl[w] ", the callback pair " ext[w]; bad = 1; continue }
                id = (w in ext) ? ext[w] : ((w in tl) ? tl[w] : "")
                if (id == "") { print "no link for " label[i] " corr " w; bad = 1; continue }
                if (!(id in cpu)) { print "call id " id " of " label[i] " matches no wrapped call"; bad = 1; continue }
                if (cpu[id] !~ call_re) { print label[i] " linked to " cpu[id] ", not " call_re; bad = 1; continue }
                linked++
            }
            if (linked < min) { print "only " linked " GPU records linked (want " min ")"; bad = 1 }
            exit bad
        }' "$1" >"$T/links.txt" || fail "$(cat "$T/links.txt")"
}
# kernel_links DUMP PAIRS TIMELINKS ORDERLINKS: how many kernels carry a callback pair, a
# queued-time link and an anchor/order link
kernel_links() {
    local got
    got=$(awk '$1 == "extcorr" { split($2, kd, "="); split($4, c, "="); if (kd[2] == 5) ext[c[2]] = 1 }
               $1 == "kernel" { for (i = 2; i <= NF; i++) if ($i ~ /^corr=/) { split($i, c, "="); k[c[2]] = 1 } }
               $1 == "timelink" { tl++ }
               $1 == "orderlink" { ol++ }
               END { p = 0; for (id in k) if (id in ext) p++; print p, tl + 0, ol + 0 }' "$1")
    [ "$got" = "$2 $3 $4" ] ||
        fail "kernels with a callback pair / a queued-time link / an order link: $got, want $2 $3 $4"
}
# order_flag DUMP WANT: whether the header says kernels are linked by anchors and launch order
order_flag() {
    local flags
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$1")
    [ $(((flags & 4) != 0)) = "$2" ] || fail "GT_HDR_ORDER_LINKS is $(((flags & 4) != 0)), want $2"
}
# no_pushes LOG: the wrapped calls never pushed an id to CUPTI (the callbacks carried them)
no_pushes() {
    local n
    n=$(grep -c "cuptiActivityPushExternalCorrelationId" "$1")
    [ "$n" = 0 ] || fail "$n ids pushed to CUPTI on the callback path"
}

case $CASE in
decode)
    # Every field of every kind, from the real CUPTI structs; the program exits right after its work
    # and the flush period is a minute, so only the forced flush at exit can have delivered them.
    run_traced d GPUTRACE_API=off GPUTRACE_FLUSH_MS=60000 -- "$EMIT_APP" decode
    dump_trace d
    same_as_untraced d "$EMIT_APP" decode
    D=$T/d.dump
    expect_line "header state=1 flags=14 cupti_version=130001" "$D" # 8: GT_HDR_END_RECORD
    expect_line "kernel name=_Z7kernelAv grid=2,3,4 block=32,1,1 regs=40 ssmem=1024 dsmem=0 stream=7 corr=1000 dur=5000" "$D"
    expect_line "kernel name=_Z7kernelBv grid=2,3,4 block=32,1,1 regs=40 ssmem=1024 dsmem=0 stream=7 corr=1001 dur=5000" "$D"
    expect_line "kernel name=_Z7kernelAv grid=2,3,4 block=32,1,1 regs=40 ssmem=1024 dsmem=0 stream=7 corr=1002 dur=5000" "$D"
    expect_line "memcpy kind=1 src=1 dst=3 bytes=4096 async=0 stream=7 corr=1003" "$D"
    expect_line "memcpy kind=2 src=3 dst=2 bytes=8192 async=1 stream=7 corr=1004" "$D"
    expect_line "memset bytes=256 memkind=3 async=1 stream=7" "$D"
    # No SYNCHRONIZATION records without the API records (the wrappers record the syncs).
    if grep -q "^sync " "$D"; then fail "sync records with GPUTRACE_API=off: $(grep '^sync ' "$D")"; fi
    expect_line "stats dropped=0 refused=0 completed=1 converted=6 overhead_ns=1000" "$D"
    [ "$(count_of 50 "$D")" = 3 ] || fail "kernel count $(count_of 50 "$D") != 3"
    [ "$(count_of 55 "$D")" = 0 ] || fail "runtime API records present with GPUTRACE_API=off"
    [ "$(count_of 2 "$D")" = 0 ] || fail "records lost in a short program"
    # one kernel name string per distinct name (interned once)
    names=$(grep -c '^kernel' "$D")
    [ "$names" = 3 ] || fail "kernel lines $names"
    skew=$(awk -F= '/^clock skew_us/ { print $2; exit }' "$D")
    [ -n "$skew" ] && [ "$skew" -lt 1000 ] || fail "no clock sync with a CUPTI time within 1 ms (got '$skew')"
    ;;
jit)
    # Issue 21 item 1: context creation and module loads (driver calls that put no work on the
    # GPU) are recorded through CUPTI's driver callbacks as JIT calls with their duration.
    run_traced j -- "$EMIT_APP" jit
    dump_trace j
    same_as_untraced j "$EMIT_APP" jit
    D=$T/j.dump
    grep -q "^cpucall kind=10 func=158 corr=0 name=cuDevicePrimaryCtxRetain " "$D" || fail "no cuDevicePrimaryCtxRetain record"
    grep -q "^cpucall kind=10 func=151 corr=0 name=cuModuleLoadData " "$D" || fail "no cuModuleLoadData record"
    ms=$(awk '$1 == "jitcall" && $2 == "name=cuModuleLoadData" { sub("ms=", "", $3); print $3 }' "$D")
    [ -n "$ms" ] && [ "$ms" -ge 3 ] && [ "$ms" -lt 1000 ] || fail "cuModuleLoadData took '$ms' ms, the fake slept 3"
    [ "$(grep -c '^jitcall' "$D")" = 2 ] || fail "jitcall lines: $(grep '^jitcall' "$D")"
    ;;
kinds)
    # GPUTRACE_CUPTI_KINDS (a measurement knob): only the kinds named are enabled; 'none' leaves
    # CUPTI attached with no records; a bad value warns and records everything.
    run_traced m GPUTRACE_API=off GPUTRACE_CUPTI_KINDS=memcpy,memset -- "$EMIT_APP" decode
    dump_trace m
    same_as_untraced m "$EMIT_APP" decode
    [ "$(grep -c '^kernel' "$T/m.dump")" = 0 ] || fail "kernel records with GPUTRACE_CUPTI_KINDS=memcpy,memset"
    [ "$(grep -c '^memcpy' "$T/m.dump")" = 2 ] || fail "memcpy records: $(grep -c '^memcpy' "$T/m.dump") != 2"
    [ "$(grep -c '^memset' "$T/m.dump")" = 1 ] || fail "memset records missing"
    run_traced n GPUTRACE_API=off GPUTRACE_CUPTI_KINDS=none -- "$EMIT_APP" decode
    dump_trace n
    same_as_untraced n "$EMIT_APP" decode
    grep -qE '^(kernel|memcpy|memset) ' "$T/n.dump" && fail "GPU records with GPUTRACE_CUPTI_KINDS=none"
    grep -q "^header state=1 " "$T/n.dump" || fail "CUPTI not active with GPUTRACE_CUPTI_KINDS=none"
    run_traced b GPUTRACE_API=off GPUTRACE_CUPTI_KINDS=kernel,bogus -- "$EMIT_APP" decode
    dump_trace b
    grep -q "GPUTRACE_CUPTI_KINDS=kernel,bogus: 'bogus' is not one of" "$T/b.err" ||
        fail "no warning for a bad GPUTRACE_CUPTI_KINDS: $(cat "$T/b.err")"
    [ "$(grep -c '^kernel' "$T/b.dump")" = 3 ] || fail "a bad value must record every kind"
    ;;
api_full)
    # GPUTRACE_API=full: every runtime API op becomes a GT_REC_GPU_API record.
    run_traced f GPUTRACE_API=full GPUTRACE_FLUSH_MS=60000 -- "$EMIT_APP" decode
    dump_trace f
    expect_line "gpuapi domain=5 cbid=211 corr=1008" "$T/f.dump"
    expect_line "gpuapi domain=5 cbid=131 corr=1009" "$T/f.dump"
    [ "$(count_of 55 "$T/f.dump")" = 2 ] || fail "expected 2 API records"
    # ...and the synchronizations, which no wrapper sees when CUPTI's API records are needed.
    expect_line "sync type=3 stream=7 corr=1006" "$T/f.dump"
    expect_line "sync type=4 stream=4294967295 corr=1007" "$T/f.dump"
    ;;
worker_full_ring)
    # CUPTI's worker thread delivers buffers while the writer's periodic FlushAll waits for that
    # delivery (the fake serialises deliveries like CUPTI). A small ring fills during conversion:
    # the converting thread must write the rings out itself, not wait for the blocked writer
    # (which hung ResNet-50 under GPUTRACE_API=full). Every kernel reaches the trace, none lost.
    # No time limit of its own: a converting thread that waited for the writer would give up after
    # its bounded wait and count the buffer's records lost (the count below fails), and a hang
    # meets ctest's timeout; a limit in seconds would only measure how busy the machine is.
    N=200000
    run_traced w GPUTRACE_API=full GPUTRACE_BUFFER_KB=64 GPUTRACE_FLUSH_MS=2 FAKE_CUPTI_WORKER_MS=3 -- "$EMIT_APP" many $N
    [ "$(cat "$T/w.rc")" = 3 ] || fail "exit status $(cat "$T/w.rc"): $(tail -3 "$T/w.err")"
    dump_trace w
    kernels=$(count_of 50 "$T/w.dump")
    [ "$kernels" = $N ] || fail "kernels $kernels != $N (lost: $(grep '^lost' "$T/w.dump" | head -3))"
    ;;
static_autoswitch)
    # Kernels but no wrapped call (a static cudart): runtime API records switch on by themselves
    # after the first periodic flush, and the header says why.
    run_traced s GPUTRACE_FLUSH_MS=20 -- "$EMIT_APP" static api
    dump_trace s
    D=$T/s.dump
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D")
    [ $((flags & 2)) -ne 0 ] || fail "GT_HDR_STATIC_CUDART not set (flags=$flags)"
    api=$(count_of 55 "$D")
    kernels=$(count_of 50 "$D")
    [ "$kernels" -ge 100 ] || fail "kernels $kernels < 100"
    [ "$api" -gt 0 ] && [ "$api" -lt "$kernels" ] || fail "API records $api: expected some, but not before the switch (kernels $kernels)"
    # and never with GPUTRACE_API=off
    run_traced o GPUTRACE_FLUSH_MS=20 GPUTRACE_API=off -- "$EMIT_APP" static kernels
    dump_trace o
    [ "$(count_of 55 "$T/o.dump")" = 0 ] || fail "API records with GPUTRACE_API=off"
    ;;
static_at_load)
    # A program that carries device code and maps no libcudart (nvcc's default static cudart) is
    # known at load: CUPTI's runtime API records are on from the start, so every runtime call is
    # there (on the H100 the late switch of static_autoswitch lost 78 of managed_gemv's 120 stream
    # syncs). The same program with its libcudart mapped waits for the switch (static_autoswitch).
    ldd "$EMIT_STATIC_APP" | grep -q libcudart && { fail "the static app maps a libcudart"; exit 1; }
    run_traced s GPUTRACE_FLUSH_MS=20 GPUTRACE_VERBOSE=1 -- "$EMIT_STATIC_APP" static api
    dump_trace s
    D=$T/s.dump
    api=$(count_of 55 "$D")
    kernels=$(count_of 50 "$D")
    [ "$kernels" -ge 100 ] || fail "kernels $kernels < 100: $(tail -3 "$T/s.err")"
    [ "$api" = "$kernels" ] || fail "API records $api for $kernels kernels: each round's runtime call must be there"
    grep -q "no shared libcudart (static cudart)" "$T/s.err" || fail "not known at load: $(grep gputrace "$T/s.err" | head -5)"
    # A CUPTI that refuses the runtime API kind (5): no API records, the kernels all the same
    run_traced r FAKE_CUPTI_REFUSE_KIND=5 -- "$EMIT_STATIC_APP" static kernels
    dump_trace r
    [ "$(count_of 55 "$T/r.dump")" = 0 ] || fail "API records although CUPTI refused the kind"
    [ "$(count_of 50 "$T/r.dump")" -ge 100 ] || fail "runtime kind refused: kernels $(count_of 50 "$T/r.dump") < 100"
    ;;
managed)
    # Unified memory (issue 30): the first managed allocation switches CUPTI's counters on
    # (GPUTRACE_UM=auto) from the driver callback on cuMemAllocManaged. Faults mode: the first
    # round faults both 1 MiB buffers over (one GPU fault, two HtoD migrations on demand), each of
    # rounds 2-4 the one the CPU touched (a CPU fault and a DtoH migration before it).
    run_traced f -- "$MANAGED_APP" faults
    dump_trace f
    same_as_untraced f "$MANAGED_APP" faults
    D=$T/f.dump
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D")
    [ $(((flags >> 9) & 3)) = 1 ] || fail "GT_HDR_UM_COUNTERS not set alone (flags=$flags)"
    n() { grep -c "^um kind=$1 .*${2:-}" "$D"; }
    [ "$(n 4 'flags=1 ')" = 4 ] || fail "GPU faults $(n 4): want 4 (read accesses)"
    [ "$(n 1 'value=1048576 src=-1 dst=0 flags=2 ')" = 5 ] || fail "on-demand HtoD migrations $(n 1): want 5"
    [ "$(n 3 'src=-1 ')" = 4 ] || fail "CPU faults $(n 3): want 4"
    [ "$(n 2 'value=1048576 src=0 dst=-1 flags=2 ')" = 4 ] || fail "DtoH migrations $(n 2): want 4"
    grep -q '^cpualloc name=cudaMallocManaged kind=3 bytes=1048576 free=0 flags=0$' "$D" ||
        fail "no managed allocation recorded"
    # prefetch mode: the program's own migrations (cause USER), no GPU fault
    run_traced p -- "$MANAGED_APP" prefetch
    dump_trace p
    D=$T/p.dump
    [ "$(n 4)" = 0 ] || fail "GPU faults despite the prefetches: $(n 4)"
    [ "$(n 1 'value=1048576 src=-1 dst=0 flags=1 ')" = 5 ] || fail "prefetched migrations $(n 1): want 5"
    [ "$(grep -c '^cpucopy name=cudaMemPrefetchAsync dir=1 src=5 dst=5 bytes=1048576 peer=0$' "$D")" = 8 ] ||
        fail "prefetch calls not recorded as managed-to-device copies"
    grep -q '^cpucall kind=10 func=13 .* name=cudaMemAdvise ' "$D" || fail "no cudaMemAdvise record"
    # no managed memory: the counters are never asked for
    run_traced o FAKE_CUPTI_LOG="$T/none.log" -- "$MANAGED_APP" none
    dump_trace o
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/o.dump")
    [ $(((flags >> 9) & 3)) = 0 ] || fail "UM flags set without managed memory (flags=$flags)"
    ! grep -q ' cuptiActivityConfigureUnifiedMemoryCounter$' "$T/none.log" ||
        fail "unified-memory counters configured without managed memory"
    ;;
managed_off)
    # GPUTRACE_UM=off: never; GPUTRACE_UM=on: from the start, managed memory or not
    run_traced f GPUTRACE_UM=off FAKE_CUPTI_LOG="$T/off.log" -- "$MANAGED_APP" faults
    dump_trace f
    [ "$(count_of 57 "$T/f.dump")" = 0 ] || fail "UM records with GPUTRACE_UM=off"
    ! grep -q ' cuptiActivityConfigureUnifiedMemoryCounter$' "$T/off.log" || fail "configured with GPUTRACE_UM=off"
    run_traced o GPUTRACE_UM=on -- "$MANAGED_APP" none
    dump_trace o
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/o.dump")
    [ $(((flags >> 9) & 3)) = 1 ] || fail "GPUTRACE_UM=on did not switch the counters on (flags=$flags)"
    [ "$(count_of 57 "$T/o.dump")" = 0 ] || fail "UM records without managed memory"
    # GPUTRACE_UM=on where CUPTI answers the enable at attach with NOT_READY (the driver not up:
    # the H200's CUPTI 13): asked again, on by the first managed allocation, no fault missed
    run_traced l GPUTRACE_UM=on FAKE_CUPTI_UM=late -- "$MANAGED_APP" faults
    dump_trace l
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/l.dump")
    [ $(((flags >> 9) & 3)) = 1 ] || fail "GPUTRACE_UM=on after NOT_READY: counters not on (flags=$flags)"
    [ "$(grep -c '^um kind=4 .*flags=1 ' "$T/l.dump")" = 4 ] ||
        fail "GPUTRACE_UM=on after NOT_READY: GPU faults $(grep -c '^um kind=4 ' "$T/l.dump"), want 4"
    ;;
managed_refused)
    # A CUPTI without the counters: said once, flagged, the program runs on unchanged
    run_traced f FAKE_CUPTI_UM=refuse GPUTRACE_QUIET=0 -- "$MANAGED_APP" faults
    dump_trace f
    same_as_untraced f "$MANAGED_APP" faults
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/f.dump")
    [ $(((flags >> 9) & 3)) = 2 ] || fail "GT_HDR_UM_REFUSED not set alone (flags=$flags)"
    [ "$(grep -c 'refused its unified-memory counters' "$T/f.err")" = 1 ] ||
        fail "the refusal not said exactly once: $(cat "$T/f.err")"
    ;;
static_launches)
    # A static runtime's kernel launches (issue 30): no wrapper sees them. Once CUPTI finds kernels
    # ran while no runtime wrapper fired (the first flush), its runtime launch callbacks record each
    # launch as a call of its own (GT_RF_VIA_CUPTI = 16) with the kernel's name and configuration,
    # paired with the kernel's correlation id; kernels before the switch stay unlinked.
    run_traced s GPUTRACE_FLUSH_MS=20 -- "$EMIT_APP" launches 400
    dump_trace s
    same_as_untraced s "$EMIT_APP" launches 20
    D=$T/s.dump
    awk '$1 == "cpucall" { split($4, a, "="); split($5, n, "="); split($7, f, "=")
                           if (int(f[2] / 16) % 2 && $2 == "kind=14") { seen[a[2]] = n[2]; calls++ } }
         $1 == "extcorr" { split($3, e, "="); split($4, c, "="); ext[c[2]] = e[2] }
         $1 == "kernel" { kernels++; for (i = 2; i <= NF; i++) if ($i ~ /^corr=/) { split($i, c, "="); k[c[2]] = $2 } }
         END {
             for (corr in k) {
                 if (!(corr in ext) || !(ext[corr] in seen)) continue
                 if (seen[ext[corr]] != "cudaLaunchKernel") { print "linked to " seen[ext[corr]]; bad = 1 }
                 if (k[corr] != "name=_Z7ownkernPf") { print "linked kernel " k[corr]; bad = 1 }
                 linked++; used[ext[corr]]++
             }
             for (id in seen) if (used[id] != 1) { print "call " id " has " used[id] + 0 " kernels"; bad = 1 }
             printf "kernels %d, calls %d, linked %d\n", kernels, calls, linked
             if (kernels < 60 || linked < kernels / 2) bad = 1
             exit bad
         }' "$D" >"$T/s.check" || fail "static launches: $(cat "$T/s.check")"
    grep -q '^cpucall kind=14 .* name=cudaLaunchKernel stack=0 flags=16$' "$D" ||
        fail "no launch recorded from CUPTI's callback"
    # its managed allocation, seen by the driver callback, is a call too, and turns the
    # unified-memory counters on
    grep -q '^cpualloc name=cudaMallocManaged kind=3 bytes=4096 free=0 flags=16$' "$D" ||
        fail "the static runtime's managed allocation not recorded"
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D")
    [ $(((flags >> 9) & 1)) = 1 ] || fail "unified-memory counters not on after the managed allocation"
    ;;
static_allocs)
    # A static runtime's cudaMalloc and cudaFree (issue 30): no wrapper sees them; CUPTI's runtime
    # callbacks record each as the allocation wrappers do (flags=16, GT_RF_VIA_CUPTI), with its
    # size and pointer. Without them a static program allocating every step was advised
    # launch-bound (alloc_in_loop built static, on the H200), not alloc-in-loop.
    run_traced s -- "$EMIT_STATIC_APP" allocs 40
    dump_trace s
    D=$T/s.dump
    n_alloc=$(grep -c '^cpualloc name=cudaMalloc kind=1 bytes=1048576 free=0 flags=16$' "$D")
    n_free=$(grep -c '^cpualloc name=cudaFree kind=1 bytes=0 free=1 flags=16$' "$D")
    [ "$n_alloc" = 40 ] && [ "$n_free" = 40 ] ||
        fail "allocations $n_alloc, frees $n_free recorded: want 40 each ($(grep -m3 '^cpualloc' "$D"))"
    # its cudaMemsetAsync too (kind 12), each paired with its memset's correlation id
    awk '$1 == "cpucall" && $2 == "kind=12" && $5 == "name=cudaMemsetAsync" && $NF == "flags=16" {
             split($4, a, "="); set[a[2]] = 1; n++ }
         $1 == "extcorr" { split($3, e, "="); paired[e[2]] = 1 }
         END { for (c in set) if (c in paired) p++
               printf "memsets %d, paired %d\n", n, p; exit !(n == 40 && p == 40) }' "$D" >"$T/m.check" ||
        fail "static memsets: $(cat "$T/m.check")"
    tr=$(ls "$T/s.d"/*.gtrace | head -1)
    "$GPUTRACE" report --json "$tr" >"$T/s.json" 2>"$T/s.rerr" || fail "report --json: $(cat "$T/s.rerr")"
    ids=$(python3 -c 'import json, sys
print(" ".join(a["id"] for a in json.load(open(sys.argv[1]))["advice"]))' "$T/s.json")
    case " $ids " in *" alloc-in-loop "*) ;; *) fail "advice without alloc-in-loop: $ids" ;; esac
    # A static runtime found only at a flush (its libcudart mapped, never called): the
    # allocation callbacks come on with the launch callbacks, none before
    run_traced l GPUTRACE_FLUSH_MS=20 -- "$EMIT_APP" allocs 20 late
    dump_trace l
    n_alloc=$(grep -c '^cpualloc name=cudaMalloc kind=1 bytes=1048576 free=0 flags=16$' "$T/l.dump")
    n_launch=$(grep -c '^cpucall kind=14 .* name=cudaLaunchKernel .*flags=16$' "$T/l.dump")
    [ "$n_alloc" -ge 20 ] && [ "$n_launch" -ge 20 ] ||
        fail "after the switch: allocations $n_alloc, launches $n_launch (want 20 or more): $(cat "$T/l.out")"
    ;;
dropped)
    # CUPTI's dropped-record count becomes a GT_REC_LOST (reason CUPTI_DROPPED) and the stats.
    run_traced d FAKE_CUPTI_DROP=123 GPUTRACE_API=off -- "$EMIT_APP" decode
    dump_trace d
    expect_line "lost reason=2 count=123" "$T/d.dump"
    grep -q "^stats dropped=123 refused=0 " "$T/d.dump" || fail "stats do not show 123 dropped"
    ;;
buffer_cap)
    # GPUTRACE_CUPTI_MB=4: one 4 MB buffer and no flush before exit, so CUPTI drops what does not
    # fit; the trace must account for every kernel: written + lost (reason CUPTI_CAP) = emitted.
    N=40000
    run_traced c GPUTRACE_CUPTI_MB=4 GPUTRACE_API=off GPUTRACE_FLUSH_MS=60000 GPUTRACE_BUFFER_KB=65536 -- "$EMIT_APP" many $N
    dump_trace c
    D=$T/c.dump
    kernels=$(count_of 50 "$D")
    lost=$(awk '/^lost reason=3 / { sub("count=", "", $3); s += $3 } END { print s + 0 }' "$D")
    [ "$kernels" -gt 0 ] && [ "$kernels" -lt $N ] || fail "kernels $kernels: the cap did not bite"
    [ $((kernels + lost)) = $N ] || fail "kernels $kernels + lost $lost != $N"
    grep -Eq "^stats dropped=$lost refused=[1-9]" "$D" || fail "stats do not show the refusals: $(grep ^stats "$D")"
    ;;
other_subscriber)
    # Another CUPTI client: one warning, no GPU records, the app unchanged.
    run_traced o FAKE_CUPTI_OTHER_SUBSCRIBER=1 -- "$EMIT_APP" decode
    dump_trace o
    same_as_untraced o "$EMIT_APP" decode
    n=$(grep -c "another CUPTI subscriber" "$T/o.err")
    [ "$n" = 1 ] || fail "expected one warning, got $n: $(cat "$T/o.err")"
    grep -q "^header state=3 " "$T/o.dump" || fail "cupti_state is not OTHER_SUBSCRIBER"
    [ "$(count_of 50 "$T/o.dump")" = 0 ] || fail "kernels recorded despite another subscriber"
    ;;
second_profiler)
    # A profiler the program starts itself (torch.profiler) after gputrace took CUPTI's subscription:
    # it is refused, as CUPTI does (MULTIPLE_SUBSCRIBERS); gputrace says so once, and the header
    # tells the report. Without gputrace's CUPTI the program's profiler gets CUPTI, and no word.
    run_traced s -- "$SECOND_APP"
    dump_trace s
    # 39: CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
    grep -qxF "subscribe 39" "$T/s.out" || fail "the second subscriber was not refused: $(cat "$T/s.out")"
    n=$(grep -c "another profiler .* was refused" "$T/s.err")
    [ "$n" = 1 ] || fail "expected one warning, got $n: $(cat "$T/s.err")"
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/s.dump")
    [ $((flags & 16)) -ne 0 ] || fail "GT_HDR_OTHER_PROFILER not set (flags=$flags)"
    # The documented way to run both (GPUTRACE_CUPTI=0) with the profiler's libcupti loaded
    # RTLD_LOCAL, as torch's is in Python: the call still reaches libcupti and succeeds.
    run_traced l GPUTRACE_CUPTI=0 -- "$LOCAL_APP" "$LOCAL_LIB"
    grep -qxF "subscribe 0" "$T/l.out" || fail "a profiler in an RTLD_LOCAL library: $(cat "$T/l.out" "$T/l.err")"
    run_traced s0 GPUTRACE_CUPTI=0 -- "$SECOND_APP"
    dump_trace s0
    grep -qxF "subscribe 0" "$T/s0.out" || fail "without gputrace's CUPTI: $(cat "$T/s0.out")"
    if grep -q "another profiler" "$T/s0.err"; then fail "warned without holding CUPTI"; fi
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/s0.dump")
    [ $((flags & 16)) -eq 0 ] || fail "GT_HDR_OTHER_PROFILER set without holding CUPTI"
    ;;
no_driver)
    # No driver: silent, no GPU records, the app unchanged; GPUTRACE_VERBOSE=1 explains.
    run_traced n FAKE_CUPTI_NO_DRIVER=1 -- "$EMIT_APP" decode
    dump_trace n
    same_as_untraced n "$EMIT_APP" decode
    if grep -v "^gputrace: wrote " "$T/n.err" | grep -qi "cupti"; then fail "not silent: $(cat "$T/n.err")"; fi
    grep -q "^header state=4 " "$T/n.dump" || fail "cupti_state is not NO_DEVICE"
    run_traced v FAKE_CUPTI_NO_DRIVER=1 GPUTRACE_VERBOSE=1 -- "$EMIT_APP" decode
    grep -q "no usable driver" "$T/v.err" || fail "GPUTRACE_VERBOSE=1 does not explain: $(cat "$T/v.err")"
    ;;
not_found)
    run_traced m GPUTRACE_CUPTI_LIB=/nonexistent/libcupti.so.13 -- "$EMIT_APP" decode
    dump_trace m
    same_as_untraced m "$EMIT_APP" decode
    grep -q "^header state=2 " "$T/m.dump" || fail "cupti_state is not NOT_FOUND"
    grep -q "GPUTRACE_CUPTI_LIB" "$T/m.err" || fail "no warning naming GPUTRACE_CUPTI_LIB"
    ;;
beside_cudart)
    # Without GPUTRACE_CUPTI_LIB the libcupti beside the loaded libcudart wins over any toolkit.
    mkdir -p "$T/b.d"
    env LD_PRELOAD="$GT_LIB" LD_LIBRARY_PATH="$FAKES" GPUTRACE_DIR="$T/b.d" GPUTRACE_VERBOSE=1 \
        GPUTRACE_API=off CUDA_HOME=/nonexistent "$EMIT_APP" decode >"$T/b.out" 2>"$T/b.err"
    echo $? >"$T/b.rc"
    dump_trace b
    grep -q "CUPTI from $FAKES/libcupti.so.13" "$T/b.err" || \
        grep -q "CUPTI from libcupti.so.13 (already loaded)" "$T/b.err" || \
        fail "did not load the fake beside libcudart: $(grep -i cupti "$T/b.err")"
    [ "$(count_of 50 "$T/b.dump")" = 3 ] || fail "kernels not recorded"
    ;;
fork_child)
    # A forked child makes no CUPTI call at all, though it runs, flushes periodically and exits.
    run_traced k FAKE_CUPTI_LOG="$T/calls.log" GPUTRACE_FLUSH_MS=20 -- "$EMIT_APP" fork
    dump_trace k
    child=$(awk '/^child pid/ { print $3 }' "$T/k.out")
    [ -n "$child" ] || fail "no child pid in output: $(cat "$T/k.out")"
    grep -q "^child done" "$T/k.out" || fail "child did not finish"
    parent_calls=$(grep -vc "^$child " "$T/calls.log")
    child_calls=$(grep -c "^$child " "$T/calls.log")
    [ "$parent_calls" -gt 0 ] || fail "the parent made no CUPTI calls (log broken?)"
    [ "$child_calls" = 0 ] || fail "the child made $child_calls CUPTI calls: $(grep "^$child " "$T/calls.log" | sort | uniq -c)"
    [ "$(count_of 50 "$T/k.dump")" = 2 ] || fail "parent kernels $(count_of 50 "$T/k.dump") != 2"
    ;;
hw_trace)
    # Kernel timestamps from hardware events (cuptiActivityEnableHWTrace): asked for by default,
    # used where CUPTI accepts it (GT_HDR_HW_TRACE, 32, and `gputrace info` says so), silently left
    # where it refuses (Hopper: NOT_SUPPORTED), tried again once CUDA is up when the driver was not
    # yet (NOT_INITIALIZED), and never asked for with GPUTRACE_CUPTI_HW_TRACE=0 or with the queued
    # timestamps CUPTI cannot combine with it. Kernels are recorded the same in every case.
    hw_flag() {
        local flags
        flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$T/$1.dump")
        [ $(((flags & 32) != 0)) = "$2" ] || fail "$1: GT_HDR_HW_TRACE is $(((flags & 32) != 0)), want $2"
        [ "$(count_of 50 "$T/$1.dump")" = 6 ] || fail "$1: $(count_of 50 "$T/$1.dump") kernels, want 6"
        grep -v "^gputrace: wrote " "$T/$1.err" | grep -q "^gputrace: " && fail "$1: gputrace warned: $(cat "$T/$1.err")"
    }
    hw_calls() { grep -c " cuptiActivityEnableHWTrace$" "$T/$1.log"; }
    run_traced refused GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/refused.log" -- "$RUNTIME_APP"
    dump_trace refused
    same_as_untraced refused "$RUNTIME_APP"
    hw_flag refused 0
    [ "$(hw_calls refused)" = 1 ] || fail "refused: $(hw_calls refused) calls to cuptiActivityEnableHWTrace, want 1"
    run_traced used GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_HW_TRACE=1 FAKE_CUPTI_LOG="$T/used.log" -- "$RUNTIME_APP"
    dump_trace used
    hw_flag used 1
    run_traced late GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_HW_TRACE=late FAKE_CUPTI_LOG="$T/late.log" TEST_AFTER_FIRST_KERNEL=1 -- "$RUNTIME_APP"
    dump_trace late
    hw_flag late 1
    [ "$(hw_calls late)" = 2 ] || fail "late: $(hw_calls late) calls, want 2 (refused before the driver was up, then taken)"
    run_traced off GPUTRACE_FLUSH_MS=20 GPUTRACE_CUPTI_HW_TRACE=0 FAKE_CUPTI_HW_TRACE=1 FAKE_CUPTI_LOG="$T/off.log" -- "$RUNTIME_APP"
    dump_trace off
    hw_flag off 0
    [ "$(hw_calls off)" = 0 ] || fail "GPUTRACE_CUPTI_HW_TRACE=0 still asked for the hardware trace"
    run_traced queued GPUTRACE_FLUSH_MS=20 GPUTRACE_CUPTI_LINK=queued FAKE_CUPTI_HW_TRACE=1 FAKE_CUPTI_LOG="$T/queued.log" -- "$RUNTIME_APP"
    dump_trace queued
    hw_flag queued 0
    [ "$(hw_calls queued)" = 0 ] || fail "the hardware trace was asked for with queued timestamps"
    # gputrace info names the way kernels were stamped.
    "$GPUTRACE" info "$T/used.d"/*.gtrace >"$T/used.info" 2>&1 || fail "info failed: $(cat "$T/used.info")"
    grep -q "^  kernel timestamps  *hardware events" "$T/used.info" || fail "info: $(cat "$T/used.info")"
    "$GPUTRACE" info "$T/refused.d"/*.gtrace >"$T/refused.info" 2>&1
    grep -q "^  kernel timestamps  *CUPTI instrumentation" "$T/refused.info" || fail "info: $(cat "$T/refused.info")"
    ;;
capture)
    # GPUTRACE_CAPTURE=profiler-api: only the 3 rounds between cudaProfilerStart and Stop are
    # recorded, CPU side (launches, copies) and GPU side (kernels, copies), still linked; both range
    # calls are in the trace. CUPTI's kinds and callbacks are switched off around the range.
    run_traced c GPUTRACE_CAPTURE=profiler-api GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP" capture
    dump_trace c
    same_as_untraced c "$RUNTIME_APP" capture
    D=$T/c.dump
    [ "$(count_of 14 "$D")" = 3 ] || fail "launch records: $(count_of 14 "$D"), want 3"
    [ "$(count_of 11 "$D")" = 3 ] || fail "memcpy call records: $(count_of 11 "$D"), want 3"
    [ "$(count_of 50 "$D")" = 3 ] || fail "kernel records: $(count_of 50 "$D"), want 3"
    [ "$(count_of 51 "$D")" = 3 ] || fail "GPU copy records: $(count_of 51 "$D"), want 3"
    grep -q "^cpucall kind=10 func=140 " "$D" || fail "no cudaProfilerStart record"
    grep -q "^cpucall kind=10 func=141 " "$D" || fail "no cudaProfilerStop record"
    check_links "$D" 6 '^cuda(Memcpy|LaunchKernel)$'
    grep -q " cuptiActivityDisable$" "$T/calls.log" || fail "CUPTI kinds never disabled"
    expect_line "capture on=1 source=1" "$D"
    expect_line "capture on=0 source=1" "$D"
    [ $(($(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D") & 64)) != 0 ] || fail "no GT_HDR_CAPTURE_WINDOWS"
    # The default mode ignores the range: all 9 rounds.
    run_traced a GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" capture
    dump_trace a
    [ "$(count_of 14 "$T/a.dump")" = 9 ] || fail "default mode: $(count_of 14 "$T/a.dump") launches, want 9"
    [ "$(count_of 50 "$T/a.dump")" = 9 ] || fail "default mode: $(count_of 50 "$T/a.dump") kernels, want 9"
    ;;
capture_signal | capture_file)
    # GPUTRACE_CAPTURE=signal (SIGUSR2 opens, the next closes) and trigger-file:PATH (open while
    # PATH exists): without any change to the program, only the 3 middle rounds are recorded, both
    # sides, still linked; the windows are in the trace (CAPTURE records, GT_HDR_CAPTURE_WINDOWS)
    # and gputrace info says the trace covers 1 window. The signal never reaches the program (whose
    # default action would end it), the writer thread made the switches (CUPTI kinds disabled).
    if [ "$CASE" = capture_signal ]; then
        mode=signal src=2 args=(capture-signal)
    else
        mode="trigger-file:$T/trigger" src=3 args=(capture-file "$T/trigger")
    fi
    # The signal case detaches CUPTI after its window (GPUTRACE_CUPTI_DETACH=1); the file case
    # keeps the default, where CUPTI stays attached with its kinds off.
    detach=0
    [ "$CASE" = capture_signal ] && detach=1
    run_traced s GPUTRACE_CAPTURE="$mode" GPUTRACE_CUPTI_DETACH=$detach GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP" "${args[@]}"
    dump_trace s
    D=$T/s.dump
    [ "$(cat "$T/s.rc")" = 0 ] || fail "the program ended with $(cat "$T/s.rc"): $(cat "$T/s.err")"
    grep -qx "runtime done" "$T/s.out" || fail "the program did not finish"
    [ "$(count_of 14 "$D")" = 3 ] || fail "launch records: $(count_of 14 "$D"), want 3"
    [ "$(count_of 50 "$D")" = 3 ] || fail "kernel records: $(count_of 50 "$D"), want 3"
    [ "$(count_of 51 "$D")" = 3 ] || fail "GPU copy records: $(count_of 51 "$D"), want 3"
    check_links "$D" 6 '^cuda(Memcpy|LaunchKernel)$'
    [ "$(grep -c "^capture on=1 source=$src$" "$D")" = 1 ] || fail "window openings: $(grep '^capture' "$D")"
    [ "$(grep -c "^capture on=0 source=$src$" "$D")" = 1 ] || fail "window closings: $(grep '^capture' "$D")"
    [ $(($(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D") & 64)) != 0 ] || fail "no GT_HDR_CAPTURE_WINDOWS"
    grep -q " cuptiActivityDisable$" "$T/calls.log" || fail "CUPTI kinds never disabled"
    # Paused from the start, CUPTI attaches only at the window: its kinds are enabled once, for
    # the window (not enabled at start and disabled until it, as before), and detached after it
    # only when asked to.
    awk '/ cuptiActivityDisable$/ { off = 1 } off && / cuptiActivityEnable$/ { bad = 1 } END { exit bad }' "$T/calls.log" ||
        fail "kinds enabled again after a disable: CUPTI was on before the window"
    grep -q " cuptiActivityEnable$" "$T/calls.log" || fail "CUPTI never attached for the window"
    if [ $detach = 1 ]; then
        grep -q " cuptiFinalize$" "$T/calls.log" || fail "CUPTI not detached after the window"
    else
        ! grep -q " cuptiFinalize$" "$T/calls.log" || fail "CUPTI detached by default"
    fi
    "$GPUTRACE" info "$T/s.d"/*.gtrace >"$T/s.info" 2>&1 || fail "info failed: $(cat "$T/s.info")"
    grep -q "^  capture  *1 window " "$T/s.info" || fail "info does not show the window: $(cat "$T/s.info")"
    if [ "$CASE" = capture_file ]; then
        # A value that is none of the modes: one warning, and everything is recorded.
        run_traced bad GPUTRACE_CAPTURE=trigger-file: GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" capture-file "$T/trigger"
        dump_trace bad
        grep -q "GPUTRACE_CAPTURE=trigger-file: is not" "$T/bad.err" || fail "no warning: $(cat "$T/bad.err")"
        [ "$(count_of 14 "$T/bad.dump")" = 9 ] || fail "bad value: $(count_of 14 "$T/bad.dump") launches, want 9"
    fi
    ;;
sample)
    # GPUTRACE_SAMPLE=0.3/0.3: every call is recorded (30 launches), CUPTI's records only about
    # half of the time (kernels well under 30, over 0), the windows are CAPTURE records of source
    # 4 that alternate, the header has GT_HDR_GPU_SAMPLED (256) and info says what it covers.
    run_traced p GPUTRACE_SAMPLE=0.3/0.3 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP" loop 30 50
    dump_trace p
    same_as_untraced p "$RUNTIME_APP" loop 30 50
    D=$T/p.dump
    [ "$(count_of 14 "$D")" = 30 ] || fail "launches: $(count_of 14 "$D"), want all 30"
    k=$(count_of 50 "$D")
    [ "$k" -ge 5 ] && [ "$k" -le 25 ] || fail "kernels: $k, want about half of 30"
    on=$(grep -c "^capture on=1 source=4$" "$D") off=$(grep -c "^capture on=0 source=4$" "$D")
    [ "$on" -ge 2 ] && [ "$off" -ge 2 ] || fail "sample windows: $on on, $off off"
    grep "^capture" "$D" | awk 'prev == $2 { bad = 1 } { prev = $2 } END { exit bad }' || fail "windows do not alternate: $(grep '^capture' "$D" | tr '\n' ' ')"
    [ $(($(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D") & 256)) != 0 ] || fail "no GT_HDR_GPU_SAMPLED"
    grep -q " cuptiActivityDisable$" "$T/calls.log" || fail "CUPTI kinds never disabled"
    "$GPUTRACE" info "$T/p.d"/*.gtrace >"$T/p.info" 2>&1 || fail "info: $(cat "$T/p.info")"
    grep -q "^  GPU sampled  *[0-9]* windows, " "$T/p.info" || fail "info: $(grep -i sampl "$T/p.info")"
    # Between windows CUPTI is detached (GPUTRACE_CUPTI_DETACH=1) and each window
    # attaches it anew: more kernels than one 0.3 s window of 50 ms launches holds (at most 7)
    # prove that a window after a detach records again.
    fin=$(grep -c " cuptiFinalize$" "$T/calls.log") subs=$(grep -c " cuptiSubscribe$" "$T/calls.log")
    [ "$fin" -ge 1 ] && [ "$subs" -ge 2 ] || fail "detach/attach: $fin finalizes, $subs subscribes"
    [ "$k" -ge 9 ] || fail "kernels: $k, want windows after a detach to record too"
    # CUPTI numbers ids from 1 again after each attach: every kernel still links to its own
    # launch (no id paired or linked twice).
    check_links "$D" "$k" '^cuda(Memcpy|LaunchKernel)$'
    # By default (GPUTRACE_CUPTI_DETACH=0): kinds disabled between windows, CUPTI never detached.
    run_traced n GPUTRACE_SAMPLE=0.3/0.3 GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/n.log" -- "$RUNTIME_APP" loop 30 50
    dump_trace n
    ! grep -q " cuptiFinalize$" "$T/n.log" || fail "DETACH=0 still detached"
    [ "$(grep -c " cuptiSubscribe$" "$T/n.log")" = 1 ] || fail "DETACH=0: subscribed $(grep -c " cuptiSubscribe$" "$T/n.log") times"
    kn=$(count_of 50 "$T/n.dump")
    [ "$kn" -ge 9 ] && [ "$kn" -le 25 ] || fail "DETACH=0 kernels: $kn"
    # The report measures the GPU in the windows and says so: the verdict names them, run totals
    # from GPU records are extrapolated ("≈ N kernels ... (extrapolated ×k ...)", about the 30
    # launched), the timeline marks the time between windows as not recorded.
    "$GPUTRACE" report "$T/p.d" >"$T/p.report" 2>&1 || fail "report: $(cat "$T/p.report")"
    grep -q "^  sampled      GPU figures from [0-9]* sampled windows covering [0-9]*% of the run" "$T/p.report" ||
        fail "report verdict: $(head -8 "$T/p.report")"
    est=$(sed -n 's/^  ≈ \([0-9]*\) kernels, .* in the run (extrapolated ×.*/\1/p' "$T/p.report")
    [ -n "$est" ] && [ "$est" -ge 12 ] && [ "$est" -le 75 ] || fail "report: ≈ '$est' kernels, want about 30: $(grep -A1 '== kernels' "$T/p.report")"
    grep -q "'~' not recorded" "$T/p.report" || fail "report timeline: $(grep timeline "$T/p.report")"
    # A bad value: a warning, and GPU activity all along.
    run_traced b GPUTRACE_SAMPLE=often GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" loop 5 10
    dump_trace b
    grep -q "GPUTRACE_SAMPLE=often is not ON/OFF" "$T/b.err" || fail "no warning: $(cat "$T/b.err")"
    [ "$(count_of 50 "$T/b.dump")" = 5 ] || fail "bad value: $(count_of 50 "$T/b.dump") kernels, want 5"
    ;;
sample_detach)
    # The detach (GPUTRACE_CUPTI_DETACH=1) is made at the return of the program's own context-wide
    # sync, when no GPU work is left in flight to write into what cuptiFinalize frees (the fake
    # aborts anywhere else; on an H200 a detach elsewhere failed queued CUDA graphs). Rounds (a
    # copy, a launch, cudaDeviceSynchronize) 450 ms apart under 0.1/0.1 s windows: most pauses see
    # no sync before the next window opens, which then cancels the armed detach and keeps CUPTI
    # attached; a pause that a round comes in is detached in that round's sync. Either way the
    # program runs as without gputrace, and every kernel recorded links to its own launch.
    run_traced d GPUTRACE_SAMPLE=0.1/0.1 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_FLUSH_MS=10 GPUTRACE_VERBOSE=1 FAKE_CUPTI_LOG="$T/d.log" -- "$RUNTIME_APP" loop 10 450
    dump_trace d
    same_as_untraced d "$RUNTIME_APP" loop 10 450
    grep -q "CUPTI stays attached: a window opened before" "$T/d.err" ||
        fail "no armed detach was cancelled: $(grep -i cupti "$T/d.err")"
    grep -q "CUPTI detached at the return of a context-wide sync" "$T/d.err" ||
        fail "never detached in a sync: $(grep -i cupti "$T/d.err")"
    k=$(count_of 50 "$T/d.dump")
    [ "$k" -ge 1 ] && [ "$k" -le 10 ] || fail "kernels: $k, want 1 to 10"
    check_links "$T/d.dump" "$k" '^cuda(Memcpy|LaunchKernel)$'
    # Without link callbacks (GPUTRACE_CUPTI_CALLBACKS=0) a subscriber is made for the detach alone.
    run_traced c GPUTRACE_SAMPLE=0.3/0.3 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_CUPTI_CALLBACKS=0 GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/c.log" -- "$RUNTIME_APP" loop 30 50
    dump_trace c
    same_as_untraced c "$RUNTIME_APP" loop 30 50
    grep -q " cuptiFinalize$" "$T/c.log" || fail "CALLBACKS=0: never detached"
    [ "$(count_of 50 "$T/c.dump")" -ge 9 ] || fail "CALLBACKS=0 kernels: $(count_of 50 "$T/c.dump")"
    # GPU work from two contexts: a context-wide sync no longer says nothing is in flight, so
    # CUPTI is never detached (kinds off between windows), and the windows still record.
    run_traced m GPUTRACE_SAMPLE=0.3/0.3 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_VERBOSE=1 FAKE_CUPTI_TWO_CONTEXTS=1 GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/m.log" -- "$RUNTIME_APP" loop 30 50
    dump_trace m
    same_as_untraced m "$RUNTIME_APP" loop 30 50
    ! grep -q " cuptiFinalize$" "$T/m.log" || fail "two contexts, yet detached"
    grep -q "GPU work in several contexts" "$T/m.err" || fail "two contexts: $(grep -i cupti "$T/m.err")"
    km=$(count_of 50 "$T/m.dump")
    [ "$km" -ge 5 ] && [ "$km" -le 25 ] || fail "two contexts: kernels $km, want about half of 30"
    # Without the callback API (cuptiSubscribe refused) CUPTI cannot be detached safely: it stays
    # attached with its kinds disabled between windows, which still record.
    run_traced x GPUTRACE_SAMPLE=0.3/0.3 GPUTRACE_CUPTI_DETACH=1 FAKE_CUPTI_NO_CALLBACKS=1 GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/x.log" -- "$RUNTIME_APP" loop 30 50
    dump_trace x
    same_as_untraced x "$RUNTIME_APP" loop 30 50
    ! grep -q " cuptiFinalize$" "$T/x.log" || fail "no callback API, yet detached"
    kx=$(count_of 50 "$T/x.dump")
    [ "$kx" -ge 5 ] && [ "$kx" -le 25 ] || fail "no callback API: kernels $kx, want about half of 30"
    ;;
attach_mid_call)
    # CUPTI attaches while a copy is in progress. GPU sampling (calls recorded all along), windows
    # of 2 s and pauses of 1 s: after the first window CUPTI detaches at a sync; the fake then
    # holds the next copy at a gate (it began with CUPTI detached: no id taken) until the next
    # window has attached CUPTI; the copy's GPU op then runs and CUPTI records it. It must link to
    # its call: the callbacks pair a call that straddles the attach (without that, the first GPU
    # record of an attach led nowhere: the cupti_sample_detach flake on a busy machine). Each
    # step waits on a condition (files, debug lines), never a guessed time. The windows' own
    # lengths are the margins this test leaves a busy machine: 3 s of rounds after the detach
    # to arm the gate (120 rounds of 50 ms), and the 2 s window after the attach for the gated
    # copy to run in (a 50 ms window failed on a fresh clone's ctest -j2: the copy ran after it).
    G=$T/gate
    mkdir -p "$G" "$T/a.d"
    env LD_PRELOAD="$GT_LIB" LD_LIBRARY_PATH="$FAKES" GPUTRACE_CUPTI_LIB="$FAKES/libcupti.so.13" \
        GPUTRACE_DIR="$T/a.d" GPUTRACE_SAMPLE=2/1 GPUTRACE_CUPTI_DETACH=1 GPUTRACE_FLUSH_MS=10 \
        GPUTRACE_VERBOSE=1 FAKE_CUDA_COPY_GATE="$G" "$RUNTIME_APP" loop 120 50 >"$T/a.out" 2>"$T/a.err" &
    app=$!
    await() { # await WHAT CMD...: CMD true within 120 s
        local what=$1 i; shift
        for ((i = 0; i < 12000; i++)); do "$@" && return 0; sleep 0.01; done
        fail "gave up waiting for $what: $(cat "$T/a.err")"; return 1
    }
    attaches() { grep -c "CUPTI attached for a capture window" "$T/a.err"; }
    detaches() { grep -c "CUPTI detached at the return of a context-wide sync" "$T/a.err"; }
    detached_now() { [ "$(detaches)" -gt "$(attaches)" ]; } # each window's attach follows a detach
    attached_since() { [ "$(attaches)" -gt "$1" ]; }
    await "the detach" detached_now
    before=$(attaches)
    touch "$G/arm"
    await "the copy at the gate" test -e "$G/in_copy"
    straddled=1
    if ! attached_since "$before"; then
        await "the attach" attached_since "$before"
    else
        straddled=0 # the machine was too slow: the window came before the copy, which was paired as usual
        echo "attach_mid_call: the window opened before the copy began; only the links are checked"
    fi
    touch "$G/go"
    wait "$app"
    [ $? = 0 ] || fail "the program failed: $(cat "$T/a.err")"
    dump_trace a
    # The gated copy is recorded by a later attach: CUPTI's ids then carry the attach in their
    # upper 32 bits (the first attach's are below 2^32).
    if [ $straddled = 1 ]; then
        awk '$1 == "memcpy" { for (i = 2; i <= NF; i++) if ($i ~ /^corr=/ && substr($i, 6) + 0 >= 4294967296) found = 1 }
             END { exit !found }' "$T/a.dump" || fail "the gated copy was not recorded: $(grep '^memcpy' "$T/a.dump")"
    fi
    check_links "$T/a.dump" 1 '^cuda(Memcpy|LaunchKernel)$'
    ;;
flight_exit)
    # GPUTRACE_FLIGHT_RECORDER=1: 25 rounds 100 ms apart (2.5 s) keep only about the last second
    # in memory and write it at exit: far fewer than 25 launches and kernels, the last round among
    # them, the rest counted as evicted by the flight recorder (not lost: no LOST record, 0 lost on
    # the exit line), one FLIGHT record (reason 1, exit) and GT_HDR_FLIGHT_RECORDER (128); the file
    # reads whole (the chunks held were numbered as written) and info says what it is.
    run_traced f GPUTRACE_FLIGHT_RECORDER=1 GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" loop 25 100
    dump_trace f
    same_as_untraced f "$RUNTIME_APP" loop 25 100
    D=$T/f.dump
    launches=$(count_of 14 "$D") kernels=$(count_of 50 "$D")
    [ "$launches" -ge 5 ] && [ "$launches" -le 15 ] || fail "launches kept: $launches, want about 10 of 25"
    [ "$kernels" -ge 5 ] && [ "$kernels" -le 15 ] || fail "kernels kept: $kernels, want about 10 of 25"
    [ "$(grep -c '^flight reason=1 ' "$D")" = 1 ] || fail "flight records: $(grep '^flight' "$D")"
    evicted=$(awk '$1 == "flight" { sub("evicted_records=", "", $5); print $5 }' "$D")
    [ "${evicted:-0}" -gt 20 ] || fail "evicted records: '$evicted', want the 15-odd rounds' records"
    span=$(awk '$1 == "flight" { sub("span_ms=", "", $7); print $7 }' "$D")
    [ "${span:-9999}" -le 1300 ] || fail "the chunks written span $span ms, more than the 1 s window"
    [ "$(count_of 2 "$D")" = 0 ] || fail "evicted records written as lost: $(grep '^lost' "$D")"
    grep -q "0 lost, [1-9][0-9]* evicted by the flight recorder, which keeps 1 s)" "$T/f.err" || fail "exit line: $(cat "$T/f.err")"
    [ $(($(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D") & 128)) != 0 ] || fail "no GT_HDR_FLIGHT_RECORDER"
    "$GPUTRACE" info "$T/f.d"/*.gtrace >"$T/f.info" 2>&1 || fail "info: not whole: $(cat "$T/f.info")"
    grep -q "^  flight recorder  *last 1 s kept" "$T/f.info" || fail "info does not say it: $(cat "$T/f.info")"
    # The strings, stacks and modules of evicted rounds stay: every kept launch has its name.
    grep -q "^cpucall kind=14 .* name=? " "$D" && fail "a kept launch lost its name"
    ;;
flight_trigger)
    # GPUTRACE_FLIGHT_RECORDER with GPUTRACE_CAPTURE=trigger-file:PATH: the file appearing writes
    # what is held (the first 2 rounds), recording goes on, the exit writes the rest: two FLIGHT
    # records (2 trigger, 1 exit), all 9 rounds in the file (the run is shorter than the window),
    # nothing evicted, the file whole, and no capture windows (recording never paused).
    run_traced t GPUTRACE_FLIGHT_RECORDER=5 GPUTRACE_CAPTURE="trigger-file:$T/trigger" GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" capture-file "$T/trigger"
    dump_trace t
    D=$T/t.dump
    [ "$(grep '^flight' "$D" | cut -d' ' -f2 | tr '\n' ' ')" = "reason=2 reason=1 " ] || fail "flight records: $(grep '^flight' "$D")"
    [ "$(count_of 14 "$D")" = 9 ] || fail "launches: $(count_of 14 "$D"), want 9"
    [ "$(count_of 50 "$D")" = 9 ] || fail "kernels: $(count_of 50 "$D"), want 9"
    grep -q "^flight reason=1 .* evicted_records=0 " "$D" || fail "records evicted in a run shorter than the window"
    first=$(awk '$1 == "flight" && $2 == "reason=2" { sub("records=", "", $3); print $3 }' "$D")
    [ "${first:-0}" -gt 0 ] || fail "the trigger wrote nothing"
    grep -q "^capture" "$D" && fail "capture windows with the flight recorder"
    "$GPUTRACE" info "$T/t.d"/*.gtrace >"$T/t.info" 2>&1 || fail "info: not whole: $(cat "$T/t.info")"
    ;;
flight_crash)
    # A crash (abort) writes what the flight recorder holds within the bounded fatal-signal flush:
    # a FLIGHT record of reason 3, the kernels of the last rounds, an END record; the program
    # still dies of its signal.
    run_traced c GPUTRACE_FLIGHT_RECORDER=2 GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" loop 8 50 abort
    dump_trace c
    D=$T/c.dump
    [ "$(cat "$T/c.rc")" = 134 ] || fail "exit status $(cat "$T/c.rc"), want 134 (SIGABRT)"
    grep -q '^flight reason=3 ' "$D" || fail "no flight record of a fatal signal: $(grep '^flight' "$D")"
    [ "$(count_of 50 "$D")" -ge 6 ] || fail "kernels: $(count_of 50 "$D"), want the 8 rounds' (or nearly)"
    [ "$(count_of 5 "$D")" = 1 ] || fail "no END record"
    ;;
correlation)
    # CUPTI writes external-correlation records only with its (costly, here off) API records: the
    # wrapped calls set a thread-local id and CUPTI's copy callbacks pair it with each call's
    # correlation id; the launches get no callback and no queued time (GPUTRACE_CUPTI_LINK=order):
    # the analyzer matches them to their kernels by order. Every kernel and copy leads to the
    # wrapped call that caused it. The wrappers fire, so the API records stay off and the
    # static-cudart flag stays clear.
    run_traced r GPUTRACE_FLUSH_MS=20 FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP"
    dump_trace r
    same_as_untraced r "$RUNTIME_APP"
    D=$T/r.dump
    check_links "$D" 12 '^cuda(Memcpy|LaunchKernel)$'
    kernel_links "$D" 0 0 6
    order_flag "$D" 1
    ! grep -q " cuptiActivityEnableLatencyTimestamps$" "$T/calls.log" || fail "queued timestamps asked for"
    no_pushes "$T/calls.log"
    [ "$(count_of 55 "$D")" = 0 ] || fail "runtime API records switched on although the wrappers fired"
    flags=$(awk '$1 == "header" { sub("flags=", "", $3); print $3 }' "$D")
    [ $((flags & 2)) -eq 0 ] || fail "static-cudart flag set although the wrappers fired"
    ;;
correlation_reference)
    # GPUTRACE_CUPTI_CALLBACKS=1: a callback pair for every kernel as well; check_links proves
    # that each order link names the same call as the pair.
    run_traced r GPUTRACE_CUPTI_CALLBACKS=1 -- "$RUNTIME_APP"
    dump_trace r
    check_links "$T/r.dump" 12 '^cuda(Memcpy|LaunchKernel)$'
    kernel_links "$T/r.dump" 6 0 6
    ;;
correlation_link_queued)
    # GPUTRACE_CUPTI_LINK=queued: kernels carry their queued time, which falls in their launch.
    run_traced r GPUTRACE_CUPTI_LINK=queued FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP"
    dump_trace r
    check_links "$T/r.dump" 12 '^cuda(Memcpy|LaunchKernel)$'
    kernel_links "$T/r.dump" 0 6 0
    order_flag "$T/r.dump" 0
    grep -q " cuptiActivityEnableLatencyTimestamps$" "$T/calls.log" || fail "queued timestamps never asked for"
    ;;
correlation_link_callbacks)
    # GPUTRACE_CUPTI_LINK=callbacks: no queued times, no anchors: the launch callbacks pair every
    # kernel.
    run_traced r GPUTRACE_CUPTI_LINK=callbacks -- "$RUNTIME_APP"
    dump_trace r
    check_links "$T/r.dump" 12 '^cuda(Memcpy|LaunchKernel)$'
    kernel_links "$T/r.dump" 6 0 0
    order_flag "$T/r.dump" 0
    ;;
correlation_no_queued)
    # GPUTRACE_CUPTI_LINK=queued with a CUPTI that accepts the setting but stamps no queued time:
    # the first kernel without one switches the launch callbacks on (said once); the launches
    # after that (the program waits until the first kernel is in the trace) are paired.
    run_traced q GPUTRACE_CUPTI_LINK=queued FAKE_CUPTI_NO_LATENCY=1 GPUTRACE_FLUSH_MS=20 TEST_AFTER_FIRST_KERNEL=1 -- "$RUNTIME_APP"
    dump_trace q
    grep -q "no queued time: kernel launches are now linked by CUPTI callbacks" "$T/q.err" ||
        fail "no word of the switch: $(cat "$T/q.err")"
    [ "$(grep -c "queued time" "$T/q.err")" = 1 ] || fail "the switch was announced more than once"
    pairs=$(awk '$1 == "extcorr" { split($4, c, "="); ext[c[2]] = 1 }
                 $1 == "kernel" { for (i = 2; i <= NF; i++) if ($i ~ /^corr=/) { split($i, c, "="); if (c[2] in ext) n++ } }
                 END { print n + 0 }' "$T/q.dump")
    [ "$pairs" = 5 ] || fail "kernels paired after the switch: $pairs, want the 5 after the first"
    [ "$(grep -c '^timelink' "$T/q.dump")" = 0 ] || fail "time links without queued times"
    ;;
correlation_api_full)
    # GPUTRACE_API=full: CUPTI's own external-correlation records (pushed ids) link the work and
    # the callbacks stay silent, so no pair is written twice.
    run_traced f GPUTRACE_API=full FAKE_CUPTI_LOG="$T/calls.log" -- "$RUNTIME_APP"
    dump_trace f
    check_links "$T/f.dump" 12 '^cuda(Memcpy|LaunchKernel)$'
    grep -q "cuptiActivityPushExternalCorrelationId" "$T/calls.log" || fail "no id pushed with API records on"
    [ "$(count_of 55 "$T/f.dump")" -gt 0 ] || fail "no API records with GPUTRACE_API=full"
    ;;
correlation_fallback)
    # A libcupti without usable callbacks: the wrapped calls push their ids as before; CUPTI's API
    # records (GPUTRACE_API=full) then carry the pairs.
    run_traced b FAKE_CUPTI_NO_CALLBACKS=1 GPUTRACE_API=full GPUTRACE_VERBOSE=1 -- "$RUNTIME_APP"
    dump_trace b
    same_as_untraced b "$RUNTIME_APP"
    grep -q "external correlation by pushed ids only" "$T/b.err" || fail "no word of the fallback: $(cat "$T/b.err")"
    check_links "$T/b.dump" 12 '^cuda(Memcpy|LaunchKernel)$'
    grep -q "^header state=1 " "$T/b.dump" || fail "CUPTI not active without callbacks"
    ;;
cudnn_correlation)
    # cuDNN launches through its own static runtime and the driver, never a cuda* call the wrappers
    # see: the driver-domain callback links each kernel to the wrapped cuDNN call. The seven
    # cudnnBackendExecute calls that succeed each launch one engine kernel.
    run_traced c FAKE_CUPTI_LOG="$T/calls.log" -- "$CUDNN_APP"
    dump_trace c
    same_as_untraced c "$CUDNN_APP"
    check_links "$T/c.dump" 10 '^cudnn'
    no_pushes "$T/calls.log"
    grep '^kernel name=sm90_xmma_fprop_implicit_gemm_engine' "$T/c.dump" >"$T/engine.dump"
    [ "$(wc -l <"$T/engine.dump")" = 7 ] || fail "expected 7 engine kernels: $(cat "$T/engine.dump")"
    grep '^cpucall' "$T/c.dump" >>"$T/engine.dump"
    grep -E '^(extcorr|timelink|orderlink)' "$T/c.dump" >>"$T/engine.dump"
    check_links "$T/engine.dump" 7 '^cudnnBackendExecute$'
    ;;
cudnn_anchors)
    # GPUTRACE_CUPTI_LINK=order (the default): every launching cuDNN call is bracketed by two
    # anchor correlation ids, and its kernels' ids lie between them. With a callback pair on every
    # launch as well (the reference) both name the same call; by default the anchors alone place
    # every cuDNN kernel, and no launch is paired; GPUTRACE_CUPTI_LINK=callbacks writes no anchors.
    run_traced a GPUTRACE_CUPTI_CALLBACKS=1 -- "$CUDNN_APP"
    dump_trace a
    same_as_untraced a "$CUDNN_APP"
    python3 "$TOOLS/gpu/anchor_check.py" "$T/a.dump" --min-agree 13 >"$T/a.check" ||
        fail "anchors and callback pairs: $(cat "$T/a.check")"
    run_traced n -- "$CUDNN_APP"
    dump_trace n
    [ "$(grep -c '^extcorr kind=5 ' "$T/n.dump")" = 0 ] || fail "launches paired by callbacks"
    python3 "$TOOLS/gpu/anchor_check.py" "$T/n.dump" >"$T/n.check" || fail "$(cat "$T/n.check")"
    # 13 convolution kernels and 6 of the batch-norm calls (issue 30)
    grep -q "^kernels 19, anchored_calls [1-9][0-9]*, in_one 19, in_several 0, outside 0" "$T/n.check" ||
        fail "cuDNN kernels not all inside one anchored call: $(cat "$T/n.check")"
    check_links "$T/n.dump" 19 '^cudnn'
    # each batch-norm kernel leads to the batch-norm call that launched it, which has a call site
    grep -vE '^(kernel|memcpy|memset) ' "$T/n.dump" >"$T/bn.dump"
    grep -E '^kernel name=_ZN5cudnn[0-9]+(bn|norm)_' "$T/n.dump" >>"$T/bn.dump"
    check_links "$T/bn.dump" 6 '^cudnn(Batch)?Normalization'
    awk '$1 == "cpucall" && $5 ~ /Normalization/ && $0 !~ / stack=[1-9]/ { print; bad = 1 }
         END { exit bad }' "$T/n.dump" >"$T/bn.nostack" || fail "batch-norm calls without a call site: $(cat "$T/bn.nostack")"
    run_traced off GPUTRACE_CUPTI_LINK=callbacks -- "$CUDNN_APP"
    dump_trace off
    ! grep -q '^extcorr kind=10[12] ' "$T/off.dump" || fail "anchors written with GPUTRACE_CUPTI_LINK=callbacks"
    ;;
long_run_intervals)
    # A long launch-bound run has more GPU busy intervals than the analysis keeps (4 M; here
    # GPUTRACE_INTERVALS_MAX=2048 for 9,000 kernels of 1 us with launch gaps between): idle gaps
    # are merged into them to bound memory, counted, and given back by where they fell. The
    # figures must be those of the exact analysis (a 1 GB launch-bound loop of the fakes had its
    # busy time 2.7 times too high, its launch-bound advice downgraded, and nothing said so).
    [ -n "$GPUTRACE" ] || { fail "no gputrace command to report with"; exit 1; }
    run_traced l FAKE_KERNEL_NS=1000 -- "$RUNTIME_APP" launch-loop 300 30
    tr=$(ls "$T/l.d"/*.gtrace | head -1)
    "$GPUTRACE" report --json "$tr" >"$T/exact.json" 2>"$T/exact.err" || fail "report: $(cat "$T/exact.err")"
    GPUTRACE_INTERVALS_MAX=2048 "$GPUTRACE" report --json "$tr" >"$T/merged.json" 2>"$T/merged.err" ||
        fail "report (2048 intervals): $(cat "$T/merged.err")"
    # compare EXACT MERGED BUSY_MS TOLERANCE: the merged analysis against the exact one
    compare() {
        python3 - "$@" >>"$T/check.txt" 2>&1 <<'PY' || fail "$(tail -3 "$T/check.txt")"
import json, sys
e, m = (json.load(open(f))["processes"][0]["gpu"] for f in sys.argv[1:3])
busy, tol = float(sys.argv[3]), float(sys.argv[4])
print("exact busy", e["busy_ms"], "merged busy", m["busy_ms"], "merged idle", m["idle"]["merged_into_busy_ms"],
      "gaps", m["idle"]["merged_into_busy_gaps"], "launch", e["launch"], m["launch"])
assert busy == 0 or abs(e["busy_ms"] - busy) < 1e-6, "%g kernels' ms are busy" % busy
assert e["idle"]["merged_into_busy_gaps"] == 0 and e["idle"]["merged_into_busy_ms"] == 0
assert m["idle"]["merged_into_busy_gaps"] > 1000, "nothing merged"
# the totals given back, the steady window's figures to within where the gaps fell and whether
# they followed a wait (not known of a merged gap: counted as launch idle, where the exact
# analysis leaves the one gap a step after the device sync out; 1-4% more in this loop)
for k in ("busy_ms", "busy_pct"):
    assert abs(m[k] - e[k]) <= 1e-3 * max(1, e[k]), k
assert abs(m["idle"]["short_gaps_ms"] - e["idle"]["short_gaps_ms"]) <= 1e-3 * max(1, e["idle"]["short_gaps_ms"]), "short gaps"
assert abs(m["steady_busy_pct"] - e["steady_busy_pct"]) < 1.0, "steady busy %"
for k in ("idle_ms_per_step", "gaps_per_step"):
    assert abs(m["launch"][k] - e["launch"][k]) <= tol * e["launch"][k], "launch " + k
PY
    }
    compare "$T/exact.json" "$T/merged.json" 9.0 0.08
    # a GPU-sampled trace (issue 18) of the same loop: its windows' busy intervals alike
    run_traced s FAKE_KERNEL_NS=1000 GPUTRACE_SAMPLE=0.1/0.1 GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" launch-loop 3000 30
    tr_s=$(ls "$T/s.d"/*.gtrace | head -1)
    "$GPUTRACE" report --json "$tr_s" >"$T/s_exact.json" 2>/dev/null || fail "sampled: report"
    GPUTRACE_INTERVALS_MAX=4096 "$GPUTRACE" report --json "$tr_s" >"$T/s_merged.json" 2>/dev/null ||
        fail "sampled: report (4096 intervals)"
    compare "$T/s_exact.json" "$T/s_merged.json" 0 0.08
    # the same findings in the same order, their shares of the step within 3 points (a severity
    # may differ where a share sits at a threshold: sync-stall 25.7% exact, 25.0% merged)
    python3 - "$T/exact.json" "$T/merged.json" >"$T/advice.txt" 2>&1 <<'PY' || fail "advice: $(cat "$T/advice.txt")"
import json, sys
e, m = ([(a["id"], a["share_pct"] or 0) for a in json.load(open(f))["advice"]] for f in sys.argv[1:3])
print("exact", e, "merged", m)
assert [i for i, _ in e] == [i for i, _ in m], "not the same findings"
assert all(abs(x - y) <= 3 for (_, x), (_, y) in zip(e, m)), "shares differ"
PY
    GPUTRACE_INTERVALS_MAX=2048 "$GPUTRACE" report "$tr" 2>/dev/null | tr -s ' \n' ' ' |
        grep -q "more GPU busy intervals than the analysis keeps (2048): [0-9]* idle gaps of up to .* counted back as short idle gaps" ||
        fail "the report does not say idle gaps were merged"
    ;;
long_run_steps)
    # A run longer than the step finder's list (4 M operations; here GPUTRACE_STEP_OPS_MAX=1000
    # of 9,300 GPU operations, and of the calls of a GPU-sampled run): the pattern found in the
    # first part is carried over the rest, read back from disk, so the steps are those of the whole
    # run, as when everything fits. Before, a long run's pattern covered only the first part and
    # was refused ("holds only 10% of the GPU's busy time"): a 10 GB trace had no steps at all.
    # What grows with the run goes to disk (the values by call and GPU op id, the links: here
    # GPUTRACE_SPILL_PAGES=2 of a cuDNN loop's 180,000 call ids): the report is the same, byte for byte.
    [ -n "$GPUTRACE" ] || { fail "no gputrace command to report with"; exit 1; }
    mkdir -p "$T/spill"
    same_steps() { # TRACE LABEL MIN [CAP]: the report with everything in memory against the capped one
        "$GPUTRACE" report --json "$1" >"$T/$2_all.json" 2>/dev/null || fail "$2: report"
        GPUTRACE_STEP_OPS_MAX=${4:-1000} GPUTRACE_TMPDIR="$T/spill" \
            "$GPUTRACE" report --json "$1" >"$T/$2_cap.json" 2>/dev/null || fail "$2: report (capped)"
        python3 - "$T/$2_all.json" "$T/$2_cap.json" "$3" >"$T/$2_check.txt" 2>&1 <<'PY' || fail "$2: $(tail -3 "$T/$2_check.txt")"
import json, sys
a, c = (max(json.load(open(f))["processes"], key=lambda p: p["records"]) for f in sys.argv[1:3])
print("all", a["steps"]["count"], a["steps"]["source"], "capped", c["steps"]["count"], c["steps"]["source"])
assert a["steps"]["count"] >= int(sys.argv[3]), "too few steps to test with"
# the same steps; the op that starts them may be another of each step's (JAX: two GEMM fusions
# run once a step, and which is counted more in the list depends on where it ends)
for k in ("count", "step_source_kind", "warmup_steps"):
    assert a["steps"][k] == c["steps"][k], k
for k in ("median_ms", "mean_ms"):
    assert abs(a["steps"][k] - c["steps"][k]) <= 0.01 * a["steps"][k], k
assert [x["id"] for x in a.get("advice", [])] == [x["id"] for x in c.get("advice", [])]
PY
    }
    # traced NAME MIN ARGS...: record until the whole run's analysis finds MIN steps (3 tries: on
    # a loaded machine the loop stalls, and the finder rightly takes it for several loops)
    traced() {
        local name=$1 min=$2 try
        shift 2
        for try in 1 2 3; do
            rm -rf "$T/$name.d"
            run_traced "$name" "$@"
            "$GPUTRACE" report --json "$(ls "$T/$name.d"/*.gtrace | head -1)" 2>/dev/null |
                python3 -c 'import json,sys; sys.exit(json.load(sys.stdin)["processes"][0]["steps"]["count"] < int(sys.argv[1]))' "$min" &&
                return 0
        done
        fail "$name: fewer than $min steps in 3 recordings"
    }
    # GPU traces of other styles, recorded on the H200 and committed (load cannot change them):
    # CUDA C launches, a CuPy loop, a JAX step whose autotuning fills the list's first 5,000
    same_steps "$TOOLS/../tests/data/launch_bound.gtrace" launch_bound 7000
    for c in cupy_loop jax_step; do
        mkdir -p "$T/$c" && tar -xJf "$TOOLS/../tests/data/corpus/$c.tar.xz" -C "$T/$c" || fail "$c: unpack"
    done
    same_steps "$(find "$T/cupy_loop" -name '*.gtrace' | head -1)" cupy 250
    same_steps "$(find "$T/jax_step" -name '*.gtrace' | head -1)" jax 190 8000
    traced l 250 -- "$RUNTIME_APP" launch-loop 300 30
    tr=$(ls "$T/l.d"/*.gtrace | head -1)
    same_steps "$tr" gpu 250
    # more iterations than the steps kept (GT_STEPS_MAX; here 100 of 299): 3 make one step, and
    # the report says so; past the list as well (20 steps: the series carried over is thinned
    # as it is read, to every 8th time, and 2 of those make a step of 16 iterations). On a loaded
    # machine (stress-ng) the fakes' loop stalls and the finder takes it for several loops: no
    # steps to compare; `traced` records again, 3 times at most.
    GPUTRACE_STEPS_MAX=100 "$GPUTRACE" report --json "$tr" >"$T/grouped.json" 2>/dev/null || fail "report (100 steps)"
    GPUTRACE_STEPS_MAX=20 GPUTRACE_STEP_OPS_MAX=1000 "$GPUTRACE" report --json "$tr" >"$T/thinned.json" 2>/dev/null ||
        fail "report (20 steps, 1000 operations)"
    python3 - "$T/gpu_all.json" "$T/grouped.json" "$T/thinned.json" >"$T/grouped.txt" 2>&1 <<'PY' || fail "grouped: $(tail -3 "$T/grouped.txt")"
import json, sys
a, g, t = (json.load(open(f))["processes"][0]["steps"] for f in sys.argv[1:4])
import re
# exact when grouped; thinned (every 8th time, as read), the leading markers the whole run's
# analysis leaves out (a burst of waits before the loop) are left out by eighths: a step more or
# less, and the iterations counted with them
for s, most, per, slack in ((g, 100, 3, 0), (t, 20, 16, 1)):
    print(a["count"], a["median_ms"], s["count"], s["median_ms"], s.get("iterations_per_step"), s["step_why"])
    assert "iterations_per_step" not in a and s["iterations_per_step"] == per
    assert abs(s["count"] - a["count"] // per) <= slack and s["count"] <= most, "count"
    # a step of per iterations lasts longer than one (not per times the median: the median of
    # sums is not that where iterations vary, 4.1 times it for 3 under ASan)
    assert s["median_ms"] > a["median_ms"], "median"
    assert ("%d iterations a step" % per) in s["source"]
    n = int(re.search(r"the run has (\d+) iterations, more than the %d steps" % most, s["step_why"]).group(1))
    assert a["count"] <= n <= a["count"] + slack * 8 * per, "iterations"

PY
    traced s 2500 GPUTRACE_SAMPLE=0.1/0.1 GPUTRACE_FLUSH_MS=20 -- "$RUNTIME_APP" launch-loop 3000 30
    same_steps "$(ls "$T/s.d"/*.gtrace | head -1)" sampled 2500
    run_traced c -- "$CUDNN_APP" loop 3000
    tr=$(ls "$T/c.d"/*.gtrace | head -1)
    "$GPUTRACE" report --json "$tr" >"$T/c_mem.json" 2>/dev/null || fail "cudnn loop: report"
    GPUTRACE_SPILL_PAGES=2 GPUTRACE_TMPDIR="$T/spill" GPUTRACE_MEMORY_STATS=1 \
        "$GPUTRACE" report --json "$tr" >"$T/c_disk.json" 2>"$T/c_disk.err" || fail "cudnn loop: report (spilled)"
    grep -q "id pages spilled [1-9][0-9]*, read back [1-9]" "$T/c_disk.err" ||
        fail "no page went to disk: $(grep spilled "$T/c_disk.err")"
    cmp -s "$T/c_mem.json" "$T/c_disk.json" || fail "the report differs when its pages are on disk"
    grep -q '"gpu_ms": [1-9]' "$T/c_mem.json" || fail "the cuDNN calls have no GPU time (the links were not used)"
    [ -z "$(ls -A "$T/spill")" ] || fail "the spill files were left behind: $(ls "$T/spill")"
    ;;
convert_long_run)
    # A launch loop whose calls run further ahead of their kernels than a fixed cache holds: every
    # GPU record comes in one batch at the end (GPUTRACE_FLUSH_MS=60000), 77,500 calls after the
    # first (2,500 steps of 30 launches and a sync; the converter's caches used to keep 65,536).
    # Whatever the link rule, the converter draws an arrow to every kernel the report links, and
    # leaves no link undrawn. For the default rule the arrows written are counted as well (JSON).
    [ -n "$GPUTRACE" ] || { fail "no gputrace command to convert with"; exit 1; }
    for link in order callbacks queued; do
        run_traced "$link" GPUTRACE_FLUSH_MS=60000 GPUTRACE_CUPTI_LINK=$link -- \
            "$RUNTIME_APP" launch-loop 2500 30
        tr=$(ls "$T/$link.d"/*.gtrace | head -1)
        "$GPUTRACE" convert --no-advice -o "$T/$link.pftrace" "$tr" 2>"$T/$link.conv" ||
            fail "$link: convert exit status $?: $(cat "$T/$link.conv")"
        "$GPUTRACE" report --json "$tr" >"$T/$link.json" 2>/dev/null || fail "$link: report exit status $?"
        python3 - "$link" "$T/$link.conv" "$T/$link.json" <<'PY' || fail "$link: converter and report disagree"
import json, re, sys
link, conv, report = sys.argv[1], open(sys.argv[2]).read(), json.load(open(sys.argv[3]))
k = report["processes"][0]["kernels"]
key, words = {"order": ("linked_by_order", "anchors and launch order"),
              "callbacks": ("linked_by_pair", "callback pairs"),
              "queued": ("linked_by_time", "queued time")}[link]
assert k["count"] == k[key] == 75000, ("the report links", k)
m = re.search(r"(\d+) kernels linked by " + words, conv)
assert m and int(m.group(1)) == 75000, ("the converter drew", conv)
assert "not drawn" not in conv, conv
PY
    done
    tr=$(ls "$T/order.d"/*.gtrace | head -1)
    "$GPUTRACE" convert -q --no-advice --format=json -o "$T/order.json.out" "$tr" || fail "json exit status $?"
    python3 - "$T/order.json.out" <<'PY' || fail "arrows written"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
kernels = sum(1 for e in ev if e.get("ph") == "B" and e.get("cat") == "kernel")
assert kernels == 75000 and len(starts & ends) >= kernels, (kernels, len(starts), len(ends))
print("%d kernels, %d arrows with both ends" % (kernels, len(starts & ends)))
PY
    ;;
cublas_correlation)
    # cuBLAS GEMMs (through cublasLtMatmul, as in the real library) link to the wrapped cuBLAS call,
    # and so do the kernels of gemv, complex, batched and typed GEMMs (issue 30): 12 calls, 12
    # kernels.
    # The app does not link cudart; the fake GPU lives in the fake libcudart: preload it.
    run_traced l FAKE_CUPTI_LOG="$T/calls.log" LD_PRELOAD="$GT_LIB:$FAKES/libcudart.so.13" -- "$CUBLAS_APP"
    dump_trace l
    check_links "$T/l.dump" 12 '^cublas'
    grep -vE '^(kernel|memcpy|memset) ' "$T/l.dump" >"$T/gemv.dump"
    grep -E '^kernel name=_Z15gemv2' "$T/l.dump" >>"$T/gemv.dump"
    check_links "$T/gemv.dump" 3 '^cublas[SD]gemv_v2'
    no_pushes "$T/calls.log"
    ;;
cublas_threads)
    # Issue 30: 4 threads, each with its own stream and cuBLAS handle, call cublasSgemv at once
    # (FAKE_CUBLAS_GEMV_MEET=4: each gemv kernel lies between the anchors of all 4 calls) and
    # launch a kernel of their own, 10 rounds. What the launches show each handle's stream to be
    # tells the gemv kernels apart: all 80 kernels lead to their own thread's call. On one stream
    # (the default one) the 40 gemv kernels cannot be told apart and are counted so. No amp advice
    # for the gemv; the same program with fp32 GEMMs gets it.
    [ -n "$GPUTRACE" ] || { fail "no gputrace command to report with"; exit 1; }
    # thread_links DUMP LINKED GEMV_LINKED [shared]: every link goes from a kernel to a call of the
    # thread whose stream the kernel ran on (one thread per CUPTI stream, unless the stream is
    # shared), its calls all on one handle; gemv kernels to cublasSgemv_v2, the others to
    # cudaLaunchKernel; LINKED kernels linked in all, GEMV_LINKED of them gemv kernels.
    thread_links() {
        awk -v want="$2" -v want_gemv="$3" -v shared="${4:-}" '
            $1 == "cpucall" { split($4, a, "="); split($5, nm, "="); name[a[2]] = nm[2] }
            $1 == "cputhread" { split($2, a, "="); split($3, th, "="); split($4, hs, "=")
                                tid[a[2]] = th[2]; handle[a[2]] = hs[2] }
            $1 == "orderlink" { split($2, e, "="); split($3, c, "="); link[c[2]] = e[2] }
            $1 == "kernel" { for (i = 2; i <= NF; i++) { split($i, f, "="); k[f[1]] = f[2] }
                             kname[++n] = k["name"]; kstream[n] = k["stream"]; kcorr[n] = k["corr"] }
            END {
                for (i = 1; i <= n; i++) {
                    if (!(kcorr[i] in link)) continue
                    call = link[kcorr[i]]; t = tid[call]; s = kstream[i]; linked++
                    want_call = kname[i] ~ /gemv/ ? "cublasSgemv_v2" : "cudaLaunchKernel"
                    if (name[call] != want_call) { print kname[i] " linked to " name[call]; bad = 1 }
                    if (kname[i] ~ /gemv/) gemv++
                    if (!shared && (s in owner) && owner[s] != t) { print "stream " s " linked to threads " owner[s] " and " t; bad = 1 }
                    if (!shared && (t in stream_of) && stream_of[t] != s) { print "thread " t " linked on streams " stream_of[t] " and " s; bad = 1 }
                    if ((t in handle_of) && handle_of[t] != handle[call]) { print "thread " t " calls on handles " handle_of[t] " and " handle[call]; bad = 1 }
                    owner[s] = t; stream_of[t] = s; handle_of[t] = handle[call]
                }
                if (linked != want || gemv != want_gemv) { print linked " kernels linked, " gemv " gemv kernels; want " want ", " want_gemv; bad = 1 }
                exit bad
            }' "$1" >"$T/thread_links.txt" || fail "$(cat "$T/thread_links.txt")"
    }
    run_traced s FAKE_CUBLAS_GEMV_MEET=4 -- "$CUBLAS_THREADS_APP" 4 10
    grep -q "4 threads x 10 rounds: done" "$T/s.out" || fail "app: $(cat "$T/s.out" "$T/s.err")"
    dump_trace s
    order_flag "$T/s.dump" 1
    python3 "$TOOLS/gpu/anchor_check.py" "$T/s.dump" >"$T/s.check"
    # the ambiguity arises: each of the 40 gemv kernels inside several calls' anchors
    in_several=$(sed -n 's/.*in_several \([0-9]*\),.*/\1/p' "$T/s.check")
    [ "${in_several:-0}" -ge 40 ] || fail "gemv calls did not overlap: $(cat "$T/s.check")"
    thread_links "$T/s.dump" 80 40
    tr=$(ls "$T/s.d"/*.gtrace | head -1)
    "$GPUTRACE" report "$tr" >"$T/s.report" 2>&1 || fail "report failed: $(cat "$T/s.report")"
    # the links line, unwrapped
    links_line() {
        awk '/^  links / { on = 1; printf "%s", $0; next }
             on && /^            / && !/^ *most often/ { printf " %s", $0; next }
             { on = 0 }' "$1" | tr -s ' '
    }
    links_line "$T/s.report" | grep -q "links 80 of 80 kernels traced to the call that launched them (80 by the order of their launches, 40 told apart by stream)$" ||
        fail "report links: $(links_line "$T/s.report")"
    "$GPUTRACE" report --json "$tr" >"$T/s.json" 2>&1 || fail "report --json failed"
    python3 -c 'import json, sys; k = json.load(open(sys.argv[1]))["processes"][0]["kernels"]; sys.exit(0 if k.get("linked_by_stream") == 40 and k["linked_by_order"] == 80 else 1)' "$T/s.json" ||
        fail "report --json: linked_by_stream is not 40 of 80 linked by order"
    "$GPUTRACE" convert --no-advice -o "$T/s.pftrace" "$tr" 2>"$T/s.conv" || fail "convert failed: $(cat "$T/s.conv")"
    grep -q "80 kernels linked by anchors and launch order (40 of them from library calls made at once on several threads, told apart by stream)" "$T/s.conv" ||
        fail "convert: $(cat "$T/s.conv")"
    # amp_advice JSON: the amp item's id, fp32 calls and share, or nothing when it is not there
    amp_advice() {
        python3 -c 'import json, sys
for a in json.load(open(sys.argv[1]))["advice"]:
    if a["id"] == "amp":
        ev = a["evidence"]
        print("amp", int(ev["fp32_calls"]), ev["fp32_share"])' "$1"
    }
    # gemv is a matrix-vector product: no tensor core runs it, so it is no case for TF32 or AMP
    # (on the H200, managed_gemv's 4 threads' fp32 gemv were advised amp, "266% of the GPU's
    # busy time", ahead of the page faults that slowed them).
    [ -z "$(amp_advice "$T/s.json")" ] || fail "gemv advised amp: $(amp_advice "$T/s.json")"
    # The same threads with a 64x64x64 cublasSgemm in place of the gemv: fp32 matrix products
    # without tensor cores, the amp advice with all 40 calls, its share of the busy time at most
    # all of it.
    run_traced g -- "$CUBLAS_THREADS_APP" 4 10 sgemm
    grep -q "4 threads x 10 rounds: done" "$T/g.out" || fail "sgemm app: $(cat "$T/g.out" "$T/g.err")"
    tr=$(ls "$T/g.d"/*.gtrace | head -1)
    "$GPUTRACE" report --json "$tr" >"$T/g.json" 2>&1 || fail "sgemm: report --json failed"
    amp_advice "$T/g.json" | awk '$1 == "amp" && $2 == 40 && $3 > 0 && $3 <= 100 { ok = 1 } END { exit !ok }' ||
        fail "sgemm: amp advice: '$(amp_advice "$T/g.json")'"
    # One stream for every thread: nothing tells the gemv calls apart. The launches keep their
    # kernels; the 40 gemv kernels stay unlinked, counted as ambiguous (not as unwrapped calls').
    run_traced o FAKE_CUBLAS_GEMV_MEET=4 -- "$CUBLAS_THREADS_APP" 4 10 one-stream
    dump_trace o
    python3 "$TOOLS/gpu/anchor_check.py" "$T/o.dump" >"$T/o.check"
    in_several=$(sed -n 's/.*in_several \([0-9]*\),.*/\1/p' "$T/o.check")
    [ "${in_several:-0}" -ge 40 ] || fail "one stream: gemv calls did not overlap: $(cat "$T/o.check")"
    thread_links "$T/o.dump" 40 0 shared
    tr=$(ls "$T/o.d"/*.gtrace | head -1)
    "$GPUTRACE" report "$tr" >"$T/o.report" 2>&1 || fail "report failed: $(cat "$T/o.report")"
    links_line "$T/o.report" | grep -q "links 40 of 80 kernels traced to the call that launched them (40 by the order of their launches); 40 from calls made at once on several threads, not told apart$" ||
        fail "one stream, report links: $(links_line "$T/o.report")"
    "$GPUTRACE" convert --no-advice -o "$T/o.pftrace" "$tr" 2>"$T/o.conv" || fail "convert failed: $(cat "$T/o.conv")"
    ! grep -q "told apart by stream" "$T/o.conv" || fail "one stream, convert: $(cat "$T/o.conv")"
    ;;
*)
    echo "unknown case $CASE"; exit 2 ;;
esac
[ $fails = 0 ] && echo "PASS [$CASE]"
exit $((fails > 0))
