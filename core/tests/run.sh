#!/bin/sh
# C-side tests: the protocol contract of osmeter-core itself (no Python needed).
set -u
core="$1/osmeter-core"
fail=0
check() { # description, command, expected exit status, text the output must contain
    out=$(eval "$2" 2>&1); rc=$?
    if [ "$rc" -ne "$3" ] || ! printf '%s' "$out" | grep -q -- "$4"; then
        echo "FAIL: $1 (exit $rc): $out" | head -c 600; echo; fail=$((fail + 1))
    else
        pass=$((${pass:-0} + 1))
    fi
}
check "list prints benchmarks" "$core list" 0 '"id":"syscall.getpid"'
check "run prints a trailer" "$core run syscall.getpid --preset=smoke" 0 '"type":"trailer","status":"ok"'
check "unknown id is refused" "$core run no.such" 2 "unknown benchmark"
check "bad integer is refused" "$core run syscall.getpid samples=abc" 2 "not an integer"
check "out of range is refused" "$core run syscall.getpid samples=0" 2 "out of range"
check "unknown parameter is refused" "$core run syscall.getpid colour=red" 2 "unknown parameter"
check "bad choice is refused" "$core run ctx.pipe_pingpong pin=maybe" 2 "not one of"
check "check validates without running" "$core check syscall.getpid samples=3" 0 '"type":"ok"'
check "k/m suffixes parse" "$core check ctx.pipe_ring n=2,1k" 0 '"type":"ok"'
check "static benchmarks run static" "$core run proc.fork.static --preset=smoke" 0 '"static":true'
echo "${pass:-0} passed, $fail failed"
[ "$fail" -eq 0 ]
