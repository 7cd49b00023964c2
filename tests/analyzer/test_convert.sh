#!/bin/sh
# test_convert.sh CASE DRIVER GEN CHECKER PROTO WORKDIR [DATADIR]
# One `gputrace convert` test case over the synthetic golden traces (test_convert_gen) or, for
# "real", over every tests/data/*.gtrace recorded on a GPU.
set -u
CASE=$1 DRIVER=$2 GEN=$3 CHECK=$4 PROTO=$5 WORK=$6 DATA=${7:-}
DIR=$WORK/convert_$CASE
rm -rf "$DIR" && mkdir -p "$DIR" || exit 1
"$GEN" "$DIR" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

case $CASE in
golden)
    GPUTRACE_SOURCE_LINES=off "$DRIVER" convert -o "$DIR/basic.pftrace" "$DIR/basic.gtrace" || fail "exit status $?"
    # The JSON sink writes absolute times and plain strings: the Perfetto output (incremental
    # clock, interned values) must decode to the same events.
    GPUTRACE_SOURCE_LINES=off "$DRIVER" convert -q --format=json -o "$DIR/basic.json" \
        "$DIR/basic.gtrace" || fail "json exit status $?"
    python3 "$CHECK" "$PROTO" "$DIR/basic.pftrace" --expect basic --compare-json "$DIR/basic.json" ||
        fail "invalid trace"
    ;;
um)
    # Unified memory (issue 30): faults and migrations on a track per GPU, the CPU's faults on
    # the process's; the JSON sink writes the same events.
    "$DRIVER" convert -o "$DIR/um.pftrace" "$DIR/um.gtrace" || fail "exit status $?"
    "$DRIVER" convert -q --format=json -o "$DIR/um.json" "$DIR/um.gtrace" || fail "json exit $?"
    python3 "$CHECK" "$PROTO" "$DIR/um.pftrace" --expect um --compare-json "$DIR/um.json" ||
        fail "invalid trace"
    ;;
queued)
    # Kernels linked by queued time (no callback pairs): the launch, the cuDNN call and the late
    # launch get flows; the unwrapped kernel and the ambiguous one do not, and are counted.
    "$DRIVER" convert -o "$DIR/q.pftrace" "$DIR/queued.gtrace" 2>"$DIR/err.txt" || fail "exit $?"
    cat "$DIR/err.txt"
    grep -q "3 kernels linked by queued time (1 ambiguous, unlinked)" "$DIR/err.txt" ||
        fail "link counts"
    "$DRIVER" convert -q --format=json -o "$DIR/q.json" "$DIR/queued.gtrace" || fail "json exit $?"
    python3 "$CHECK" "$PROTO" "$DIR/q.pftrace" --compare-json "$DIR/q.json" >"$DIR/check.txt" ||
        fail "invalid trace: $(cat "$DIR/check.txt")"
    cat "$DIR/check.txt"
    grep -q " 3 flows" "$DIR/check.txt" || fail "flows: $(cat "$DIR/check.txt")"
    # The report names the two unlinked kernels apart: the ambiguous one came from one of two
    # threads' wrapped calls, only the other from a call no wrapper sees.
    "$DRIVER" report "$DIR/queued.gtrace" 2>/dev/null | tr -s ' \n' ' ' >"$DIR/report.txt"
    grep -q "3 of 5 kernels traced .* 1 from calls made at once on several threads, not told apart; 1 launched by calls gputrace does not wrap" \
        "$DIR/report.txt" || fail "unlinked kernels named: $(grep -o 'links.*wrap' "$DIR/report.txt")"
    # The report's model links the same way: the execute's GPU time is its one kernel (2.5 us),
    # 3 of the 5 kernels lead to a call (the report reads the whole file: also the late one).
    "$DRIVER" report --json "$DIR/queued.gtrace" >"$DIR/report.json" 2>/dev/null
    python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["processes"][0]; c=p["cudnn"]
assert len(c) == 1 and abs(c[0]["gpu_ms"] - 0.0025) < 1e-9, c
k=p["kernels"]; assert (k["count"], k["linked_by_pair"], k["linked_by_time"]) == (5, 0, 3), k' "$DIR/report.json" ||
        fail "cuDNN GPU time by queued time"
    ;;
siblings)
    # A cuDNN execute with two module loads inside it, recorded before it (the H200 DataLoader
    # and DDP runs): its slice keeps its own begin, so the arrows to its memset and first kernel,
    # which started before the first load ended, do not go backwards (the checker fails any flow
    # that ends before it starts). Six arrows: two pairs (one of another thread, inside the
    # execute's anchors), two kernels by the anchors, two by launch order (one of the other
    # thread, its id inside the execute's anchors: left to its launch, and counted).
    "$DRIVER" convert -o "$DIR/s.pftrace" "$DIR/siblings.gtrace" 2>"$DIR/err.txt" || fail "exit $?"
    cat "$DIR/err.txt"
    grep -q " 6 flows, .* 4 kernels linked by anchors and launch order, 1 kernels between a library call's anchors not linked to it .*)$" "$DIR/err.txt" ||
        fail "summary (no slice may need moving): $(cat "$DIR/err.txt")"
    python3 "$CHECK" "$PROTO" "$DIR/s.pftrace" >"$DIR/check.txt" || fail "invalid: $(cat "$DIR/check.txt")"
    grep -q " 6 flows" "$DIR/check.txt" || fail "flows: $(cat "$DIR/check.txt")"
    "$DRIVER" convert -q --format=json -o "$DIR/s.json" "$DIR/siblings.gtrace" || fail "json exit $?"
    python3 - "$DIR/s.json" <<'PY' || fail "the execute's slice or its arrows"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
begins = [e["ts"] for e in ev if e.get("ph") == "B" and e.get("name") == "cudnnBackendExecute"]
assert begins == [5000000010.0], begins  # its recorded begin, not the first load's end (87 us)
starts = {e["id"]: e["ts"] for e in ev if e.get("ph") == "s"}
ends = {e["id"]: e["ts"] for e in ev if e.get("ph") == "f"}
assert len(starts) == len(ends) == 6 and all(starts[i] <= ends[i] for i in ends), (starts, ends)
# the other thread's kernel (at 40 us) comes from its launch's slice (at 30 us), not the execute's
launch = [e["ts"] for e in ev if e.get("ph") == "B" and e.get("name") == "cudaLaunchKernel" and e["tid"] == 7002]
assert launch == [5000000030.0], launch
on_kernel = [i for i in ends if 5000000040.0 <= ends[i] < 5000000041.0]  # on the kernel's slice
assert on_kernel == [i for i in starts if starts[i] == 5000000030.001], (starts, ends)
PY
    ;;
foreign)
    # Pairs of other tools' kinds link nothing, in the converter and the report alike: one arrow
    # (the pair of ours), drawn with both ends; the report counts one kernel linked by its pair.
    "$DRIVER" convert -o "$DIR/f.pftrace" "$DIR/foreign.gtrace" 2>"$DIR/err.txt" || fail "exit $?"
    cat "$DIR/err.txt"
    grep -q " 1 flows" "$DIR/err.txt" || fail "summary: $(cat "$DIR/err.txt")"
    python3 "$CHECK" "$PROTO" "$DIR/f.pftrace" >"$DIR/check.txt" || fail "invalid: $(cat "$DIR/check.txt")"
    grep -q " 1 flows" "$DIR/check.txt" || fail "flows: $(cat "$DIR/check.txt")"
    "$DRIVER" report --json "$DIR/foreign.gtrace" >"$DIR/report.json" 2>/dev/null
    python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["processes"][0]["kernels"]
assert (k["count"], k["linked_by_pair"], k["linked_by_order"], k["linked_by_time"]) == (3, 1, 0, 0), k' \
        "$DIR/report.json" || fail "report links"
    ;;
max_mb)
    # convert --max-mb on a run too long for it (long.gtrace: 2000 steps of 10 ms, about 6 MB of
    # Perfetto): whole steps are kept (the slowest, #1200, the median, the first steady ones),
    # the output fits, the summary says what was left out, and the timeline marks each gap; the
    # NVTX step ranges all stay (cheap, and they show where the steps left out were); launches
    # and kernels of a step not kept (#1500) are gone, those of the slowest are there.
    "$DRIVER" convert --max-mb 1 -o "$DIR/long.pftrace" "$DIR/long.gtrace" 2>"$DIR/err.txt" || fail "exit $?: $(cat "$DIR/err.txt")"
    cat "$DIR/err.txt"
    size=$(wc -c <"$DIR/long.pftrace")
    [ "$size" -lt 1048576 ] || fail "output of $size bytes over --max-mb 1"
    grep -q "over --max-mb 1: kept [0-9]* of 2000 steps .*the slowest (#1200, 40.0 ms), the median (#[0-9]*, 10.0 ms), the first steady ones (#0-#" "$DIR/err.txt" ||
        fail "summary: $(cat "$DIR/err.txt")"
    python3 "$CHECK" "$PROTO" "$DIR/long.pftrace" >"$DIR/check.txt" || fail "invalid trace: $(cat "$DIR/check.txt")"
    "$DRIVER" convert -q --format=json --max-mb 1 -o "$DIR/long.json" "$DIR/long.gtrace" || fail "json exit $?"
    python3 - "$DIR/long.json" <<'PY' || fail "timeline content"
import json, sys
ev = json.load(open(sys.argv[1]))
ev = ev["traceEvents"] if isinstance(ev, dict) else ev
T0, STEP = 1700000000000000000, 10000000
def step_of(ts_us):  # the step a CPU slice falls in (after the slow one, steps shift by 30 ms)
    t = ts_us * 1000 - 5000000000000 - 1000000
    return t // STEP if t < 1200 * STEP else (1200 if t < 1200 * STEP + 4 * STEP else 1201 + (t - 1200 * STEP - 4 * STEP) // STEP)
launch_steps = {step_of(e["ts"]) for e in ev if e.get("ph") == "B" and e.get("name") == "cudaLaunchKernel"}
assert 1200 in launch_steps, "the slowest step is not kept"
assert 0 in launch_steps and 100 in launch_steps, "the first steady steps are not kept"
assert 1500 not in launch_steps, "a step that was not chosen is there"
kept = len(launch_steps)
assert 100 < kept < 1000, kept
marks = [e for e in ev if e.get("ph") == "i" and "left out" in e.get("name", "")]
assert len(marks) >= 2 and all("kept" in m["args"]["detail"] for m in marks), marks[:3]
ranges = sum(1 for e in ev if e.get("ph") == "B" and e.get("name") == "train_step")
assert ranges == 2000, ranges
print("max_mb: %d steps kept, %d markers" % (kept, len(marks)))
PY
    # No limit, and the default limit (256 MB, far above): everything, and no word about it.
    "$DRIVER" convert --max-mb 0 -o "$DIR/all.pftrace" "$DIR/long.gtrace" 2>"$DIR/err0.txt" || fail "exit $?"
    grep -q "left out\|--max-mb" "$DIR/err0.txt" && fail "--max-mb 0 left something out: $(cat "$DIR/err0.txt")"
    [ "$(wc -c <"$DIR/all.pftrace")" -gt 3000000 ] || fail "--max-mb 0 output too small"
    "$DRIVER" convert -o "$DIR/def.pftrace" "$DIR/long.gtrace" 2>"$DIR/errd.txt" || fail "exit $?"
    grep -q "left out" "$DIR/errd.txt" && fail "the default limit left something out"
    "$DRIVER" convert --max-mb lots -o "$DIR/x.pftrace" "$DIR/long.gtrace" 2>"$DIR/erru.txt"
    [ $? = 2 ] && grep -q "max-mb takes a number" "$DIR/erru.txt" || fail "--max-mb lots: $(cat "$DIR/erru.txt")"
    # Steps heavier than their records suggest (heavy.gtrace: every kernel has a long name of its
    # own, 5.5 MB in all where its records make 1.1 MB): the steps chosen are measured, and the
    # output stays within 10% of the limit, at or under it (by the average alone: 4.6 MB).
    "$DRIVER" convert --max-mb 1 -o "$DIR/heavy.pftrace" "$DIR/heavy.gtrace" 2>"$DIR/errh.txt" ||
        fail "heavy: exit $?: $(cat "$DIR/errh.txt")"
    size=$(wc -c <"$DIR/heavy.pftrace")
    [ "$size" -le 1048576 ] && [ "$size" -ge 943718 ] || fail "heavy: $size bytes for --max-mb 1"
    grep -q "over --max-mb 1: kept [0-9]* of 600 steps" "$DIR/errh.txt" || fail "heavy: $(cat "$DIR/errh.txt")"
    grep -q "still takes" "$DIR/errh.txt" && fail "heavy: $(cat "$DIR/errh.txt")"
    echo "heavy: $size bytes for --max-mb 1"
    ;;
default_name)
    "$DRIVER" convert -q "$DIR/basic.gtrace" || fail "exit status $?"
    [ -s "$DIR/basic.perfetto-trace" ] || fail "basic.perfetto-trace not written"
    "$DRIVER" convert -q "$DIR/rank0.gtrace" "$DIR/rank1.gtrace" || fail "exit status $?"
    name=$(basename "$DIR")
    [ -s "$DIR/$name.perfetto-trace" ] || fail "$name.perfetto-trace not written"
    ;;
ranks)
    "$DRIVER" convert -o "$DIR/ranks.pftrace" "$DIR/rank0.gtrace" "$DIR/rank1.gtrace" ||
        fail "exit status $?"
    "$DRIVER" convert -q --format=json -o "$DIR/ranks.json" "$DIR/rank0.gtrace" \
        "$DIR/rank1.gtrace" || fail "json exit status $?"
    python3 "$CHECK" "$PROTO" "$DIR/ranks.pftrace" --expect ranks --compare-json "$DIR/ranks.json" ||
        fail "invalid merge"
    ;;
ranks_choice)
    # convert --ranks (issue 33 item 4) over job/: a rank keeps its processes and its children
    # without a rank of their own (by ppid on the same host); the launcher and another host's
    # process of the same ppid are of no rank and left out; what was kept is said.
    pids() { # JSON -> the output's process ids, sorted, space-separated
        python3 -c 'import json,sys; e=json.load(open(sys.argv[1])); e=e["traceEvents"] if isinstance(e,dict) else e
print(" ".join(map(str,sorted({x["pid"] for x in e if x.get("ph")=="M" and x.get("name")=="process_name"}))))
n=sum(1 for x in e if x.get("name")=="ranks chosen by convert --ranks"); sys.exit(n!=1)' "$1"
    }
    for case in "1:201 301:0,2-3 (4 files), and 2 files of no rank" "0,2-3:200 202 203 302:1 (2 files)" \
        "3,2,3:202 203 302:0-1 (3 files)"; do
        list=${case%%:*} rest=${case#*:} want=${rest%%:*} left=${rest#*:}
        "$DRIVER" convert --no-advice --format=json --ranks "$list" -o "$DIR/r.json" "$DIR/job" \
            2>"$DIR/err.txt" || fail "--ranks $list: exit $? $(cat "$DIR/err.txt")"
        cat "$DIR/err.txt"
        got=$(pids "$DIR/r.json") || fail "--ranks $list: not one note in the trace"
        [ "$got" = "$want" ] || fail "--ranks $list: processes $got, expected $want"
        grep -qF "left out: $left" "$DIR/err.txt" || fail "--ranks $list: left out not said"
    done
    # bad lists and ranks: status 2, a clear message, no output
    for bad in "4:rank 4 is not in these traces (they hold 0-3)" "1-2-3:is not a rank" \
        "-1:is not a rank" "2-1:ends before it begins" ",:empty item" "slowest:cannot tell" \
        "99999999999:is not a rank"; do
        list=${bad%%:*} words=${bad#*:}
        "$DRIVER" convert --no-advice --ranks "$list" -o "$DIR/bad.json" "$DIR/job" 2>"$DIR/err.txt"
        rc=$?
        [ $rc -eq 2 ] || fail "--ranks $list: exit $rc, expected 2"
        grep -qF "$words" "$DIR/err.txt" || fail "--ranks $list: unclear: $(cat "$DIR/err.txt")"
        [ ! -e "$DIR/bad.json" ] || fail "--ranks $list: an output was written"
    done
    "$DRIVER" convert --ranks 0 -o "$DIR/bad.json" "$DIR/basic.gtrace" 2>"$DIR/err.txt"
    [ $? -eq 2 ] && grep -q "no input has a rank" "$DIR/err.txt" || fail "one process: $(cat "$DIR/err.txt")"
    ;;
folder)
    mkdir -p "$DIR/run" && mv "$DIR/rank0.gtrace" "$DIR/rank1.gtrace" "$DIR/run/" || exit 1
    "$DRIVER" convert -q "$DIR/run/" || fail "exit status $?"
    python3 "$CHECK" "$PROTO" "$DIR/run.perfetto-trace" --expect ranks || fail "invalid merge"
    ;;
moved_wait)
    # A sync's arrow to the kernel it waited for, whose slice was moved past the sync's end (its
    # stream's lanes all busy): not drawn, and counted in the summary; the other sync's arrow is.
    "$DRIVER" convert -o "$DIR/m.pftrace" "$DIR/moved_wait.gtrace" 2>"$DIR/err.txt" || fail "exit $?"
    cat "$DIR/err.txt"
    grep -q " 1 flows, .*1 wait arrows not drawn (the op waited for was moved past the wait's end to nest), 1 slices adjusted to nest$" \
        "$DIR/err.txt" || fail "summary: $(cat "$DIR/err.txt")"
    python3 "$CHECK" "$PROTO" "$DIR/m.pftrace" >"$DIR/check.txt" || fail "invalid: $(cat "$DIR/check.txt")"
    grep -q " 1 flows" "$DIR/check.txt" || fail "flows: $(cat "$DIR/check.txt")"
    ;;
truncated)
    "$DRIVER" convert -o "$DIR/t.pftrace" "$DIR/truncated.gtrace" 2>"$DIR/err.txt"
    rc=$?
    cat "$DIR/err.txt"
    [ $rc -eq 1 ] || fail "exit status $rc, expected 1"
    grep -q "offset [0-9]" "$DIR/err.txt" || fail "no offset in the warning"
    python3 "$CHECK" "$PROTO" "$DIR/t.pftrace" || fail "invalid trace from a truncated file"
    ;;
not_trace)
    "$DRIVER" convert -o "$DIR/n.pftrace" "$DIR/not_a_trace.gtrace" 2>"$DIR/err.txt"
    rc=$?
    cat "$DIR/err.txt"
    [ $rc -eq 2 ] || fail "exit status $rc, expected 2"
    grep -qi "not a .*trace\|not a gputrace" "$DIR/err.txt" || fail "unclear message"
    [ ! -e "$DIR/n.pftrace" ] || fail "an output was left behind"
    "$DRIVER" convert -o "$DIR/n.pftrace" "$DIR/missing.gtrace" 2>/dev/null
    [ $? -eq 2 ] || fail "missing file: expected 2"
    ;;
info_folder)
    # gputrace info takes run folders like every other command: each trace in it, sorted.
    mkdir -p "$DIR/run" "$DIR/empty" && cp "$DIR/rank0.gtrace" "$DIR/rank1.gtrace" "$DIR/run/" || exit 1
    "$DRIVER" info "$DIR/run" >"$DIR/info.txt" || fail "info exit status $?"
    [ "$(grep -c '^/.*rank[01].gtrace$' "$DIR/info.txt")" = 2 ] || fail "info: $(head -3 "$DIR/info.txt")"
    grep -n 'rank0.gtrace$' "$DIR/info.txt" | grep -q '^1:' || fail "info: rank0 first"
    "$DRIVER" info "$DIR/empty" 2>"$DIR/err.txt"
    [ $? -eq 2 ] || fail "info of an empty folder: expected exit status 2"
    grep -q "no .gtrace files" "$DIR/err.txt" || fail "info: unclear message $(cat "$DIR/err.txt")"
    ;;
json)
    "$DRIVER" convert --format=json -o "$DIR/basic.json" "$DIR/basic.gtrace" || fail "exit $?"
    python3 "$CHECK" --json "$DIR/basic.json" || fail "invalid JSON"
    ;;
real)
    n=0
    for f in "$DATA"/*.gtrace; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        out="$DIR/$(basename "$f" .gtrace).pftrace"
        "$DRIVER" convert --no-advice -o "$out" "$f" 2>"$out.err"
        rc=$?
        cat "$out.err" >&2
        [ $rc -le 1 ] || fail "$f: exit status $rc"
        "$DRIVER" convert -q --no-advice --format=json -o "$out.json" "$f"
        [ $? -le 1 ] || fail "$f: json exit status"
        python3 "$CHECK" "$PROTO" "$out" --compare-json "$out.json" || fail "$f: invalid output"
        # One link rule: the kernels the converter drew an arrow for (its first run's summary), by
        # how they were linked, are the kernels the report counts as linked.
        "$DRIVER" report --json "$f" >"$out.report" 2>/dev/null
        python3 - "$out.err" "$out.report" <<'PY' || fail "$f: converter and report disagree on links"
import json, re, sys
err = open(sys.argv[1]).read()
def drawn(what):
    m = re.search(r'(\d+) kernels linked by ' + what, err)
    return int(m.group(1)) if m else 0
got = (drawn('callback pairs'), drawn('anchors and launch order'), drawn('queued time'))
k = json.load(open(sys.argv[2]))['processes'][0]['kernels']
want = (k['linked_by_pair'], k['linked_by_order'], k['linked_by_time'])
assert got == want, ('convert drew', got, 'report counts', want)
PY
    done
    echo "checked $n real traces"
    # links_of TRACE SUMMARY COUNTS: the converter's summary line matches SUMMARY (grep) and the
    # report's kernels count / linked_by_pair / linked_by_order / linked_by_time are COUNTS.
    links_of() {
        local t=$1 name
        name=$(basename "$t" .gtrace)
        "$DRIVER" convert --no-advice -o "$DIR/$name.pftrace" "$t" 2>"$DIR/$name.err" ||
            fail "$t: exit $?"
        grep -q "$2" "$DIR/$name.err" || fail "$name links: $(cat "$DIR/$name.err")"
        "$DRIVER" report --json "$t" >"$DIR/$name.json" 2>/dev/null
        python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["processes"][0]["kernels"]
got = "%d %d %d %d" % (k["count"], k["linked_by_pair"], k["linked_by_order"], k["linked_by_time"])
assert got == sys.argv[2], (got, sys.argv[2])' "$DIR/$name.json" "$3" || fail "report: $name links"
    }
    # Recorded with the queued-time mode (the third session's default): every kernel a wrapped
    # call launched is linked by its queued time, by the converter and the report alike (9,148 of
    # 10,348; the rest are cuDNN's unwrapped batch norm and the like).
    links_of "$DATA/resnet18_queued.gtrace" "9148 kernels linked by queued time (0 ambiguous" \
        "10348 0 0 9148"
    # Recorded with anchors (the order default): linked by anchors (cuDNN/cuBLAS) or launch order
    # (PyTorch's own launches), 6,098 of 6,898, by the converter (drawn late, streaming) and the
    # report alike; the _ref trace has a callback pair on every launch as well, and pairs win.
    links_of "$DATA/resnet18_anchors.gtrace" \
        "6708 flows.*6098 kernels linked by anchors and launch order" "6898 0 6098 0"
    links_of "$DATA/resnet18_anchors_ref.gtrace" "6708 flows" "6898 6098 0 0"
    [ "$n" -gt 0 ] || fail "no real trace in $DATA: the recorded GPU traces are part of the repo"
    # convert with advice reads each file twice: the model's first pass, then the conversion with
    # the model's second pass reading along (and its call-site table borrowed).
    if command -v strace >/dev/null 2>&1; then
        f=$DATA/train_item_every_step.gtrace
        # (LeakSanitizer cannot run under ptrace: leaks are checked by the other cases)
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
            strace -f -e trace=open,openat -o "$DIR/strace.txt" "$DRIVER" convert -q -o "$DIR/s.pftrace" "$f" ||
            fail "convert under strace"
        opens=$(grep -c "train_item_every_step.gtrace\"" "$DIR/strace.txt")
        [ "$opens" -le 2 ] || fail "convert opened $f $opens times (at most twice)"
        echo "convert opened the trace $opens times"
    fi
    # A PyTorch run recorded on the GPU with loss.item() every step (train.py line 114 then):
    # each step's stall names that line, from the Python frames of its stack.
    f=$DATA/train_item_every_step.gtrace
    if [ -e "$f" ]; then
        GPUTRACE_SOURCE_LINES=off "$DRIVER" convert --no-advice -o "$DIR/item.pftrace" "$f" ||
            fail "$f: exit status $?"
        python3 "$CHECK" "$PROTO" "$DIR/item.pftrace" \
            --call-site 'cudaStreamSynchronize (stall)=train.py:114 in main' ||
            fail "$f: the stall does not name train.py:114"
        # diff matches call sites by that text: the run against itself pairs every site.
        GPUTRACE_SOURCE_LINES=off "$DRIVER" diff --json "$f" "$f" >"$DIR/diff.json" ||
            fail "diff exit status $?"
        python3 - "$DIR/diff.json" <<'PY' || fail "diff does not match the call sites"
import json, sys
sites = json.load(open(sys.argv[1]))['pairs'][0]['call_sites']
item = [s for s in sites if s['call_site'] == 'train.py:114 in main']
assert item and all(s['a_count'] == s['b_count'] > 0 for s in item), item
assert all(s['a_count'] == s['b_count'] and s['a_ms'] == s['b_ms'] for s in sites), sites
print('diff: %d call sites matched, %s' % (len(sites), item[0]))
PY
    fi
    # Two runs of one program (sync every iteration by cudaDeviceSynchronize in A, by a .item()-like
    # cudaMemcpy in B): the stream sync they share is matched, the changed call is in one run only.
    a=$DATA/sync_every_iter.gtrace b=$DATA/sync_every_iter_item.gtrace
    if [ -e "$a" ] && [ -e "$b" ]; then
        GPUTRACE_SOURCE_LINES=off "$DRIVER" diff --json "$a" "$b" >"$DIR/diff2.json" ||
            fail "diff exit status $?"
        python3 - "$DIR/diff2.json" <<'PY' || fail "diff does not match call sites across runs"
import json, sys
sites = json.load(open(sys.argv[1]))['pairs'][0]['call_sites']
key = lambda s: (s['call'], s['a_count'] > 0, s['b_count'] > 0)
both = [s for s in sites if key(s) == ('cudaStreamSynchronize', True, True)]
only_a = [s for s in sites if key(s) == ('cudaDeviceSynchronize', True, False)]
only_b = [s for s in sites if key(s) == ('cudaMemcpy', False, True)]
assert both and only_a and only_b, sites
assert only_a[0]['a_count'] == only_b[0]['b_count'] == 200, (only_a, only_b)
print('diff across runs:', both[0]['call_site'], 'in both')
PY
    fi
    ;;
*)
    fail "unknown case $CASE"
    ;;
esac
echo "PASS: $CASE"
