#!/usr/bin/env bash
# Huge inputs (issue 15): a static binary with 1,000,000 function symbols
# and 100 MB of .eh_frame (tests/huge_elf.py writes it, 160 MB, no
# compiler), spinning in hf_0500007. What it costs the profiler is bounded
# and shown:
#  - record (whose budgets are those of 512 MiB: a quarter for one file's
#    symbol tables) reads the symbol table and names the samples; its CFI,
#    over the 16 MiB a binary may have (elfimage.h), is refused and counted
#    once, however often the unwinder meets the binary again;
#  - the agent at its default --max-memory (64M) leaves the table out (its
#    cost, 3 x .symtab + .strtab = 83 MB, is over the quarter of 64M),
#    counts it, shows the frames unnamed, and its RSS stays under 64 MiB;
#  - the agent with --max-memory 384M names them, its RSS stays under that.
# The figures (peak RSS, the time reading the symbol file, which samples
# wait for) are printed on the PASS lines.
. "$(dirname "$0")/../lib.sh"
CHECKS="huge_record_named huge_record_rss huge_record_cfi_refused
huge_agent_default_rss huge_agent_default_unnamed huge_agent_large_named
huge_agent_large_rss"
# shellcheck disable=SC2086
need_bpf $CHECKS

# The binary: $TMP/huge_elf (comm and service name huge_elf).
BIN=$TMP/huge_elf
SPIN=hf_0500007
t0=$EPOCHREALTIME
if ! python3 "$(dirname "$0")/../huge_elf.py" "$BIN" 2>"$TMP/gen.err"; then
	for n in $CHECKS; do fail "$n" "huge_elf.py: $(tail -2 "$TMP/gen.err")"; done
	exit 0
fi
gen=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
echo "# huge_elf: $(($(stat -c %s "$BIN") >> 20)) MiB written in $gen s" >&2

"$BIN" &
spin=$!
trap 'kill $spin 2>/dev/null; rm -rf "$TAGPROF_E2E_TMP"' EXIT

# mib KB: KB as MiB, one decimal.
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# stats PID FILE...: over the profiles FILE..., the samples of process PID:
# "N NAMED UNNAMED OTHER": all, those whose leaf is $SPIN, those whose
# leaf location has no function (mapping and address only), the rest;
# then the comment lines that hold "symbol files loaded" and "over 16 MiB"
# and "symbol tables over", from the last file.
stats() {
	py "$SPIN" "$@" <<'EOF'
import sys, pprof_read
spin, pid, files = sys.argv[1], sys.argv[2], sys.argv[3:]
n = named = unnamed = other = 0
comments = []
for f in files:
    try:
        p = pprof_read.load(f)
    except OSError as e:
        print(0, 0, 0, 0)
        print("no profile of the process: %s" % e.strerror)
        sys.exit(0)
    for s in p.samples:
        lab = s.labels.get("pid")
        if str(lab[0] if isinstance(lab, tuple) else lab) != pid:
            continue
        v = s.values[0]
        n += v
        leaf = p.locations.get(s.locations[0], []) if s.locations else None
        if leaf is None:
            other += v
        elif not leaf:
            unnamed += v
        elif p.strings[p.functions.get(leaf[0], 0)] == spin:
            named += v
        else:
            other += v
    comments = [p.strings[i] for i in p.comments]
print(n, named, unnamed, other)
for c in comments:
    if "symbol files loaded" in c or "symbol tables over" in c:
        print(c)
EOF
}

# load_ms LINE: "TOTAL LONGEST" from "... (N ms reading them, M ms the
# longest)".
load_ms() {
	sed -n 's/.*(\([0-9]*\) ms reading them, \([0-9]*\) ms the longest).*/\1 \2/p' | head -1
}

# ---- (a) record ----
/usr/bin/time -f %M -o "$TMP/rec.rss" "$TAGPROF" record -p $spin -d 7 -F 99 \
	-o "$TMP/rec.pb.gz" -v 2>"$TMP/rec.err"
rc=$?
rss=$(tail -1 "$TMP/rec.rss")
all=$(pprof "$TMP/rec.pb.gz" -top -symbolize=none -sample_index=samples |
	sed -n 's/.*Total samples = \([0-9]*\).*/\1/p')
in_spin=$(flat "$TMP/rec.pb.gz" "$SPIN" -symbolize=none)
ms=$(load_ms <"$TMP/rec.err")
if [ $rc -eq 0 ] && [ "${all:-0}" -ge 20 ] &&
   awk -v a="$in_spin" -v n="$all" 'BEGIN { exit !(a >= 0.9 * n) }'; then
	pass "huge_record_named: $in_spin of $all samples in $SPIN; symbol files read in ${ms% *} ms (the huge one ${ms#* } ms)"
else
	fail huge_record_named "rc=$rc, $in_spin of ${all:-0} samples in $SPIN; $(grep -v '^tagprof: [a-z ]*since start' "$TMP/rec.err" | tail -3)"
fi
# The bound: 16 MiB of the agent alone (a small binary), 83 MB of symbol
# table (what elfsym__table_cost charges), 16 MiB of CFI at most, and
# room: reading the 108 MB of CFI would pass it.
bound=$((140 << 10))
if rss_unchecked huge_record_rss; then
	:
elif [ -n "$rss" ] && [ "$rss" -le $bound ]; then
	pass "huge_record_rss: peak RSS $(mib "$rss") MiB (bound $(mib $bound))"
else
	fail huge_record_rss "peak RSS $(mib "${rss:-0}") MiB, over $(mib $bound)"
fi
# Refused, and counted once: the unwinder retries an unreadable binary
# every 5 s, so a 7 s run meets it twice.
cfi=$(grep -o '[0-9]* binaries over 16 MiB' "$TMP/rec.err" | head -1)
if [ "$cfi" = "1 binaries over 16 MiB" ]; then
	pass "huge_record_cfi_refused: $cfi of CFI"
else
	fail huge_record_cfi_refused "counted '${cfi:-nothing}', want 1 binaries over 16 MiB"
fi

# ---- the agent ----
# agent NAME SECONDS ARGS...: runs the agent for SECONDS in $TMP/NAME,
# then stops it (SIGTERM: it writes its last window), its VmRSS sampled
# every 0.1 s until it is gone. "$TMP/NAME.rss" gets the largest sample,
# its last VmHWM (the true peak) in kB, and whether it stopped within 30 s
# of SIGTERM ("stopped", else it is killed: "hung").
agent() {
	local name=$1 secs=$2 ag k v max=0 hwm=0 now end stop=stopped; shift 2
	"$TAGPROF" agent --output-dir "$TMP/$name" --window 2 -F 99 "$@" \
		2>"$TMP/$name.err" &
	ag=$!
	end=$((${EPOCHREALTIME/./} + secs * 1000000))	# us
	while [ -e "/proc/$ag/status" ]; do
		while read -r k v _; do
			[ "$k" = VmRSS: ] && [ "$v" -gt $max ] && max=$v
			[ "$k" = VmHWM: ] && hwm=$v
		done 2>/dev/null <"/proc/$ag/status"
		now=${EPOCHREALTIME/./}
		if [ "$end" -gt 0 ] && [ "$now" -ge "$end" ]; then
			kill -TERM $ag
			end=$((-(now + 30000000)))
		elif [ "$end" -lt 0 ] && [ "$now" -ge $((-end)) ]; then
			kill -KILL $ag
			stop=hung
		fi
		sleep 0.1
	done
	wait $ag
	echo "$max $hwm $stop" >"$TMP/$name.rss"
}

# check_rss CHECK NAME MIB: the agent run NAME peaked within MIB MiB of RSS
# (its high-water mark and the samples taken), and stopped on SIGTERM.
check_rss() {
	local max hwm stop limit=$(($3 << 10))
	read -r max hwm stop <"$TMP/$2.rss"
	if rss_unchecked "$1"; then
		[ "$stop" = stopped ] || fail "$1" "$stop after SIGTERM"
	elif [ "$hwm" -gt 0 ] && [ "$hwm" -le $limit ] && [ "$max" -le $limit ] &&
	   [ "$stop" = stopped ]; then
		pass "$1: peak RSS $(mib "$hwm") MiB (sampled $(mib "$max")), max-memory $3 MiB"
	else
		fail "$1" "peak RSS $(mib "$hwm") MiB (sampled $(mib "$max")), max-memory $3 MiB; $stop after SIGTERM"
	fi
}

# ---- (b) the default --max-memory, 64M ----
agent def 6
check_rss huge_agent_default_rss def 64
stats $spin "$TMP"/def/*_huge_elf.pb.gz >"$TMP/def.stats" 2>&1
read -r n named unnamed other <"$TMP/def.stats"
over=$(grep -o '[0-9]* files with symbol tables over the memory budget' "$TMP/def.stats" | head -1)
if [ "${n:-0}" -ge 20 ] && [ "$named" -eq 0 ] &&
   [ "$unnamed" -ge $((n * 9 / 10)) ] && [ "${over%% *}" -ge 1 ] 2>/dev/null; then
	pass "huge_agent_default_unnamed: $unnamed of $n samples unnamed (mapping and address), $over"
else
	fail huge_agent_default_unnamed "of ${n:-0} samples: $named named $SPIN, $unnamed unnamed, $other else; counted: '${over:-nothing}'; $(tail -2 "$TMP/def.stats")"
fi

# ---- (c) --max-memory 384M: a quarter of it holds the table ----
agent big 9 --max-memory 384M
stats $spin "$TMP"/big/*_huge_elf.pb.gz >"$TMP/big.stats" 2>&1
read -r n named unnamed other <"$TMP/big.stats"
ms=$(load_ms <"$TMP/big.stats")
if [ "${n:-0}" -ge 20 ] && [ "$named" -ge $((n * 9 / 10)) ] &&
   [ -n "$ms" ] && [ "${ms#* }" -gt 0 ]; then
	pass "huge_agent_large_named: $named of $n samples in $SPIN; symbol files read in ${ms% *} ms, the longest ${ms#* } ms (samples wait meanwhile)"
else
	fail huge_agent_large_named "of ${n:-0} samples: $named named $SPIN, $unnamed unnamed, $other else; load time '${ms:-none}'; $(tail -2 "$TMP/big.stats")"
fi
check_rss huge_agent_large_rss big 384
