#!/bin/sh
# late_cupti_shown.sh GPUTRACE DIR — what interpose_late_cupti recorded in DIR (7 calls gave the GPU
# work before CUPTI was attached) is shown where a user looks: the recorder's exit line, `gputrace
# info`, and the report's verdict and advice.
set -eu
gputrace=$1
dir=$2
trace=$(ls "$dir"/*.gtrace)
fail=0
expect() { # expect WHAT FILE PATTERN
    if ! grep -q "$3" "$2"; then
        echo "FAIL: $1 lacks '$3':"
        cat "$2"
        fail=1
    fi
}
expect "exit line" "$dir/app.err" "wrote .*; 7 GPU calls before CUPTI was attached, their GPU work not recorded"
"$gputrace" info "$trace" >"$dir/info.txt"
expect "info" "$dir/info.txt" "GPU work not recorded  of 7 calls (launches, copies, memsets, library calls) made"
"$gputrace" report "$trace" >"$dir/report.txt"
expect "verdict" "$dir/report.txt" "incomplete   7 calls' GPU work not recorded (CUPTI attached late)"
expect "advice" "$dir/report.txt" "7 calls gave the GPU work before CUPTI was attached"
"$gputrace" report --json "$trace" >"$dir/report.json"
expect "json" "$dir/report.json" '"calls_before_cupti": 7'
exit $fail
