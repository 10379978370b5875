#!/usr/bin/env bash
# A real JIT: LLVM's ORC JIT (Debian's LLVM 14, tests/workloads/llvmjit)
# writes a perf jitdump through its PerfJITEventListener. tagprof names its
# frames from the dump, gives them the source lines of the debug info (LLVM
# writes them 0x40 off the code, which the reader undoes), so that
# `go tool pprof -list` annotates the source LLVM compiled, and the frame
# walk goes on through the JIT frames to the program's own.
. "$(dirname "$0")/../lib.sh"
CHECKS="jit_llvm_names jit_llvm_lines jit_llvm_list jit_llvm_callers"
need_bpf $CHECKS
if [ ! -x "$WORKLOADS/llvmjit" ]; then
	for n in $CHECKS; do skip "$n" "no llvmjit workload (llvm-14-dev not installed)"; done
	exit 0
fi

src=$TMP/hot.c
"$TAGPROF" record -F 499 -o "$TMP/llvm.pb.gz" -- "$WORKLOADS/llvmjit" 4 "$src" \
	>"$TMP/llvm.out" 2>"$TMP/llvm.err"
all=$(total "$TMP/llvm.pb.gz")
hot=$(flat "$TMP/llvm.pb.gz" hot_loop)

names() {
	grep -q 'jitdumps: 1 read' "$TMP/llvm.err" ||
		{ echo "no jitdump read: $(grep jitdump "$TMP/llvm.err")"; return 1; }
	within "$(pct "$hot" "$all")" 80 100 ||
		{ echo "hot_loop has $hot of $all samples (want >= 80%)"; return 1; }
}
check jit_llvm_names names

# The loop's body is lines 5 and 6 of the source llvmjit wrote (its
# DIBuilder line info); the frames carry the file as LLVM wrote it.
lines() {
	local out
	out=$(pprof "$TMP/llvm.pb.gz" -lines -top -nodecount=5)
	grep -Eq "hot_loop $src:[56]\$" <<<"$out" ||
		{ echo "no hot_loop $src:5/6 line in: $out"; return 1; }
}
check jit_llvm_lines lines

list() {
	local out
	out=$(pprof "$TMP/llvm.pb.gz" -list '^hot_loop$')
	grep -q "ROUTINE.*hot_loop in $src" <<<"$out" ||
		{ echo "pprof -list did not annotate $src: $out"; return 1; }
	# the loop body's lines, 5 and 6, with the source text beside them
	awk '$3 ~ /^[56]:$/ && $1 != "." && /acc/ { n++ } END { exit !n }' <<<"$out" ||
		{ echo "no samples on the loop body's lines: $out"; return 1; }
}
check jit_llvm_list list

# hot_loop <- hot_caller (both JIT code) <- spin <- main. What lies below
# main (libc's start code) is not this check's: in 2 of 7 runs of one day
# every stack of a run ended at main (the issue 15 note of that day).
callers() {
	local chain
	chain=$(traces "$TMP/llvm.pb.gz" | awk '$2 ~ /^hot_loop;/' | sort -rn | head -1)
	grep -Eq ' hot_loop;hot_caller;spin;main(;|$)' <<<"$chain" ||
		{ echo "hot_loop's commonest stack: $chain"; return 1; }
}
check jit_llvm_callers callers
