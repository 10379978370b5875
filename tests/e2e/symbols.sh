#!/usr/bin/env bash
# Symbolization beyond the binary's own symbol table, checked with go tool
# pprof: separate debug files (.gnu_debuglink with its CRC, and the
# build-ID tree, here a temporary one through TAGPROF_DEBUG_DIRS), source
# lines and inlined functions from DWARF, C++ demangling (and
# --no-demangle), JIT perf maps, a chroot, and bad input: a corrupt ELF, a
# truncated or CRC-mismatched debug file, garbage perf-map lines, a binary
# replaced on disk while it runs. Bad input must give a note in the
# profile's comments and unsymbolized frames, never a crash or a wrong name.
. "$(dirname "$0")/../lib.sh"
CHECKS="symbols_debuglink symbols_debuglink_lines symbols_debuglink_crc
symbols_build_id_dir symbols_truncated_debug symbols_inline symbols_cxx_demangle
symbols_cxx_no_demangle symbols_jit_named symbols_jit_anon symbols_perfmap_garbage
symbols_chroot symbols_corrupt_elf symbols_replaced_binary symbols_replaced_same_build
symbols_pprof_clean"
# shellcheck disable=SC2086
need_bpf $CHECKS

SRC=$PWD/tests/workloads
WFLAGS="-O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-optimize-sibling-calls"
: "${CLANG:=clang}"
warned=""

# record OUT ARGS...: tagprof record at 999 Hz; false (and the reason on
# stderr) when it fails.
record() {
	local out=$1; shift
	if ! "$TAGPROF" record -F 999 -o "$out" "$@" 2>"$TMP/rec.err"; then
		echo "tagprof record failed: $(tail -3 "$TMP/rec.err")" >&2
		return 1
	fi
	# pprof tries to name what tagprof left unnamed, from the files on
	# this host, and says when it cannot (a corrupt binary): that is
	# pprof's message, not a defect of the profile, so it is left out.
	pprof "$out" -top -symbolize=none >/dev/null
	if pprof_warned; then
		warned="$warned $(basename "$out"): $(head -2 "$TMP/pprof.err")"
	fi
}

# comments FILE: the profile's counter lines (its comments that start
# with '# ', without it).
comments() { pprof "$1" -raw | sed -n 's/^Comment: # //p'; }

# count FILE TEXT: the number before TEXT in the comments (0 if absent).
count() {
	comments "$1" | grep -o "[0-9]* $2" | head -1 | awk '{ print $1 + 0 }' |
		grep . || echo 0
}

# top FILE ARGS...: the -top listing, every node.
top() {
	local f=$1; shift
	pprof "$f" -top -nodecount=1000000 -nodefraction=0 -sample_index=samples "$@"
}

# A stripped symspin with its debug file beside it: DIR/prog, DIR/prog.debug.
build_split() {
	local dir=$1
	mkdir -p "$dir" &&
	"$CLANG" $WFLAGS -o "$dir/prog" "$SRC/symspin.c" &&
	objcopy --only-keep-debug "$dir/prog" "$dir/prog.debug" &&
	strip --strip-all "$dir/prog" &&
	! nm "$dir/prog" 2>/dev/null | grep -q spin_inner
}

# --- .gnu_debuglink, with its CRC ---
dl=$TMP/dl
if build_split "$dl" && (cd "$dl" && objcopy --add-gnu-debuglink=prog.debug prog) &&
	record "$TMP/dl.pb.gz" -- "$dl/prog" 2; then
	n=$(flat "$TMP/dl.pb.gz" spin_inner -tagfocus=process=prog)
	all=$(total "$TMP/dl.pb.gz" -tagfocus=process=prog)
	by_link=$(count "$TMP/dl.pb.gz" "by debuglink")
	echo "debuglink: spin_inner $n of $all samples, $by_link by debuglink" >&2
	if [ "$n" -gt $((all / 2)) ] && [ "$by_link" -ge 1 ] &&
		[ "$(cum "$TMP/dl.pb.gz" spin_outer -tagfocus=process=prog)" -ge "$n" ]; then
		pass symbols_debuglink
	else
		fail symbols_debuglink "spin_inner $n of $all samples, $by_link debug files by debuglink"
	fi
	# The mapping says what its locations hold: functions, file names,
	# line numbers, inlined frames ([FN][FL][LN][IN] in -raw).
	if top "$TMP/dl.pb.gz" -lines -tagfocus=process=prog |
		grep -Eq ' spin_inner .*symspin\.c:[0-9]+$' &&
		pprof "$TMP/dl.pb.gz" -raw | grep -q "$dl/prog .*\[FN\]\[FL\]\[LN\]\[IN\]"; then
		pass symbols_debuglink_lines
	else
		fail symbols_debuglink_lines "no 'spin_inner symspin.c:LINE' in pprof -lines -top, or mapping flags unset"
	fi
else
	fail symbols_debuglink "could not build or record the stripped program"
	fail symbols_debuglink_lines "could not build or record the stripped program"
fi

# The same, but the debug file changed after the link was made: refused.
crc=$TMP/crc
if build_split "$crc" && (cd "$crc" && objcopy --add-gnu-debuglink=prog.debug prog) &&
	printf 'x' >>"$crc/prog.debug" && record "$TMP/crc.pb.gz" -- "$crc/prog" 1; then
	named=$(top "$TMP/crc.pb.gz" -tagfocus=process=prog | grep -c 'spin_inner\|spin_outer')
	unsym=$(flat "$TMP/crc.pb.gz" '[prog]' -tagfocus=process=prog)
	bad=$(count "$TMP/crc.pb.gz" "CRC mismatch")
	if [ "$named" -eq 0 ] && [ "$unsym" -gt 0 ] && [ "$bad" -ge 1 ]; then
		pass symbols_debuglink_crc
	else
		fail symbols_debuglink_crc "$named named spin_ lines, [prog] $unsym, CRC mismatches $bad"
	fi
else
	fail symbols_debuglink_crc "could not build or record the program"
fi

# --- the build-ID tree, DIR/.build-id/xx/rest.debug ---
# build_id_of FILE: its GNU build ID.
build_id_of() {
	readelf -n "$1" 2>/dev/null | sed -n 's/.*Build ID: *\([0-9a-f]*\).*/\1/p' | head -1
}

bid=$TMP/bid
if build_split "$bid" && id=$(build_id_of "$bid/prog") && [ -n "$id" ] &&
	mkdir -p "$TMP/debugroot/.build-id/${id:0:2}" &&
	mv "$bid/prog.debug" "$TMP/debugroot/.build-id/${id:0:2}/${id:2}.debug" &&
	TAGPROF_DEBUG_DIRS=$TMP/debugroot record "$TMP/bid.pb.gz" -- "$bid/prog" 2; then
	n=$(flat "$TMP/bid.pb.gz" spin_inner -tagfocus=process=prog)
	all=$(total "$TMP/bid.pb.gz" -tagfocus=process=prog)
	by_id=$(count "$TMP/bid.pb.gz" "debug files by build ID")
	if [ "$n" -gt $((all / 2)) ] && [ "$by_id" -ge 1 ] &&
		top "$TMP/bid.pb.gz" -lines -tagfocus=process=prog |
		grep -Eq ' spin_inner .*symspin\.c:[0-9]+$'; then
		pass symbols_build_id_dir
	else
		fail symbols_build_id_dir "spin_inner $n of $all samples, $by_id by build ID, or no file:line"
	fi
	# Truncated: the debug file keeps its header, loses the rest.
	dbg=$TMP/debugroot/.build-id/${id:0:2}/${id:2}.debug
	head -c 3000 "$dbg" >"$dbg.cut" && mv "$dbg.cut" "$dbg"
	if TAGPROF_DEBUG_DIRS=$TMP/debugroot record "$TMP/trunc.pb.gz" -- "$bid/prog" 1; then
		named=$(top "$TMP/trunc.pb.gz" -tagfocus=process=prog | grep -c 'spin_inner\|spin_outer')
		unsym=$(flat "$TMP/trunc.pb.gz" '[prog]' -tagfocus=process=prog)
		bad=$(count "$TMP/trunc.pb.gz" "unreadable or truncated")
		if [ "$named" -eq 0 ] && [ "$unsym" -gt 0 ] && [ "$bad" -ge 1 ]; then
			pass symbols_truncated_debug
		else
			fail symbols_truncated_debug "$named named spin_ lines, [prog] $unsym, $bad refused as truncated"
		fi
	else
		fail symbols_truncated_debug "tagprof failed on a truncated debug file"
	fi
else
	fail symbols_build_id_dir "could not build, place or record the program"
	fail symbols_truncated_debug "could not build, place or record the program"
fi

# --- inlined functions: inl_mix inside inl_hot, one location, two lines ---
if record "$TMP/inl.pb.gz" -- "$WORKLOADS/inline" 2; then
	# -raw lists each location's lines innermost first; the next line
	# of an inlined one is indented without an address.
	pairs=$(pprof "$TMP/inl.pb.gz" -raw |
		awk '/^ +[0-9]+: 0x/ { prev = $4; next }
		     prev == "inl_mix" && $1 == "inl_hot" { n++ } { prev = "" }
		     END { print n + 0 }')
	# Not lib.sh's flat: the inlined function's own flat count.
	mix=$(top "$TMP/inl.pb.gz" -tagfocus=process=inline |
		awk '$6 == "inl_mix" { n = $1 } END { print n + 0 }')
	all=$(total "$TMP/inl.pb.gz" -tagfocus=process=inline)
	echo "inline: $pairs locations inl_mix<-inl_hot, inl_mix flat $mix of $all" >&2
	if [ "$pairs" -gt 0 ] && [ "$mix" -gt $((all / 2)) ]; then
		pass symbols_inline
	else
		fail symbols_inline "$pairs locations with inl_mix inlined in inl_hot; inl_mix flat $mix of $all"
	fi
else
	fail symbols_inline "could not record"
fi

# --- C++: demangled names, and the symbols with --no-demangle ---
CXX=$(command -v clang++ || command -v g++)
if [ -n "$CXX" ] && "$CXX" $WFLAGS -o "$TMP/cxxwork" "$SRC/cxxwork.cc" &&
	record "$TMP/cxx.pb.gz" -- "$TMP/cxxwork" 2 &&
	record "$TMP/cxxn.pb.gz" --no-demangle -- "$TMP/cxxwork" 1; then
	t=$(top "$TMP/cxx.pb.gz" -tagfocus=process=cxxwork)
	if grep -q ' Foo<int>::work(long)$' <<<"$t" && grep -q ' Foo<int>::Foo(int)$' <<<"$t" &&
		pprof "$TMP/cxx.pb.gz" -raw | grep -q 'Foo<int>::work(long) .*(_ZN3FooIiE4workEl)'; then
		pass symbols_cxx_demangle
	else
		fail symbols_cxx_demangle "no Foo<int>::work(long) and Foo<int>::Foo(int) (system name _ZN...): $(grep Foo <<<"$t" | head -3 | tr '\n' ' ')"
	fi
	# pprof demangles names that equal their system name itself unless
	# told not to: -symbolize=none shows what the profile holds.
	t=$(top "$TMP/cxxn.pb.gz" -symbolize=none -tagfocus=process=cxxwork)
	if grep -q ' _ZN3FooIiE4workEl$' <<<"$t" && ! grep -q 'Foo<int>' <<<"$t"; then
		pass symbols_cxx_no_demangle
	else
		fail symbols_cxx_no_demangle "no _ZN3FooIiE4workEl with --no-demangle: $(grep -i foo <<<"$t" | head -3 | tr '\n' ' ')"
	fi
else
	fail symbols_cxx_demangle "no C++ compiler, or could not record"
	fail symbols_cxx_no_demangle "no C++ compiler, or could not record"
fi

# --- JIT: a perf map names one region; the other stays unnamed ---
"$WORKLOADS/jitmap" 0 >/dev/null 2>&1
if [ $? -eq 77 ]; then
	for n in symbols_jit_named symbols_jit_anon symbols_perfmap_garbage; do
		skip "$n" "the JIT workload's machine code is x86-64"
	done
elif record "$TMP/jit.pb.gz" -- "$WORKLOADS/jitmap" 2 garbage; then
	t=$(top "$TMP/jit.pb.gz" -tagfocus=process=jitmap)
	# pprof shows an unnamed address by its mapping's file: "[[anon]]".
	anon=$(flat "$TMP/jit.pb.gz" '[[anon]]' -tagfocus=process=jitmap)
	all=$(total "$TMP/jit.pb.gz" -tagfocus=process=jitmap)
	named_n=$(pprof "$TMP/jit.pb.gz" -top -sample_index=samples -tagfocus=process=jitmap \
		-nodecount=1000000 | awk '/ jit spin loop \[tagprof test\]$/ { print $1 }')
	echo "jit: named $named_n, [anon] $anon of $all samples" >&2
	if [ "${named_n:-0}" -gt $((all / 2)) ]; then
		pass symbols_jit_named
	else
		fail symbols_jit_named "'jit spin loop [tagprof test]' has ${named_n:-0} of $all samples (want most)"
	fi
	# The unnamed region runs a third as long: unnamed, never the name
	# of the neighbouring entry.
	if [ "$anon" -gt $((all / 10)) ] && [ "$(grep -c 'jit spin loop' <<<"$t")" -eq 1 ]; then
		pass symbols_jit_anon
	else
		fail symbols_jit_anon "[anon] $anon of $all samples; $(grep -c 'jit spin loop' <<<"$t") named lines"
	fi
	g=$(count "$TMP/jit.pb.gz" "garbage lines skipped")
	if [ "$g" -eq 4 ]; then
		pass symbols_perfmap_garbage
	else
		fail symbols_perfmap_garbage "comments say $g garbage lines skipped, want 4"
	fi
else
	for n in symbols_jit_named symbols_jit_anon symbols_perfmap_garbage; do
		fail "$n" "could not record the JIT workload"
	done
fi

# --- a chroot: the binary exists only under the process's root ---
root=$TMP/root
if [ -n "${SANITIZE:-}" ]; then
	skip symbols_chroot "SANITIZE build: the sanitized workload needs /proc, which the chroot has not; the plain build runs it"
elif command -v chroot >/dev/null && mkdir -p "$root" &&
	cp "$WORKLOADS/callchain" "$root/callchain" &&
	for lib in $(ldd "$WORKLOADS/callchain" | grep -o '/[^ ]*'); do
		mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib" || exit 1
	done && record "$TMP/chroot.pb.gz" -- chroot "$root" /callchain 2; then
	a=$(flat "$TMP/chroot.pb.gz" leaf_a -tagfocus=process=callchain)
	all=$(total "$TMP/chroot.pb.gz" -tagfocus=process=callchain)
	if [ ! -e /callchain ] && [ "$a" -gt $((all / 2)) ] &&
		[ "$(cum "$TMP/chroot.pb.gz" work -tagfocus=process=callchain)" -ge "$a" ]; then
		pass symbols_chroot
	else
		fail symbols_chroot "leaf_a $a of $all samples of the chrooted /callchain"
	fi
else
	fail symbols_chroot "could not build the chroot or record in it"
fi

# --- a corrupt ELF mapped executable ---
mkdir -p "$TMP/bad"
"$WORKLOADS/badelf" "$TMP/bad" 0 >/dev/null 2>&1
if [ $? -eq 77 ]; then
	skip symbols_corrupt_elf "the workload's machine code is x86-64"
elif record "$TMP/bad.pb.gz" -- "$WORKLOADS/badelf" "$TMP/bad" 2; then
	unsym=$(flat "$TMP/bad.pb.gz" '[corrupt.so]' -tagfocus=process=badelf)
	all=$(total "$TMP/bad.pb.gz" -tagfocus=process=badelf)
	bad=$(count "$TMP/bad.pb.gz" "binaries corrupt")
	if [ "$unsym" -gt $((all / 2)) ] && [ "$bad" -ge 1 ]; then
		pass symbols_corrupt_elf
	else
		fail symbols_corrupt_elf "[corrupt.so] $unsym of $all samples, $bad binaries corrupt"
	fi
else
	fail symbols_corrupt_elf "tagprof failed on a corrupt ELF"
fi

# --- a binary replaced on disk while it runs (rename over it) ---
rep=$TMP/rep
mkdir -p "$rep"
if "$CLANG" $WFLAGS -o "$rep/prog" "$SRC/symspin.c" &&
	"$CLANG" $WFLAGS -DSYMSPIN_OTHER -o "$rep/prog.new" "$SRC/symspin.c"; then
	"$rep/prog" 4 &
	pid=$!
	sleep 0.3
	mv -f "$rep/prog.new" "$rep/prog"
	if record "$TMP/rep.pb.gz" -p "$pid" -d 2; then
		# The running build is read through /proc/PID/map_files (the
		# mapped file itself, deleted): its names, never the new file's.
		t=$(top "$TMP/rep.pb.gz" -tagfocus=process=prog)
		other=$(grep -c 'other_inner\|other_outer' <<<"$t")
		inner=$(flat "$TMP/rep.pb.gz" spin_inner -tagfocus=process=prog)
		all=$(total "$TMP/rep.pb.gz" -tagfocus=process=prog)
		if [ "$other" -eq 0 ] && [ "$inner" -gt $((all / 2)) ]; then
			pass symbols_replaced_binary
		else
			fail symbols_replaced_binary "$other lines name the new build, spin_inner $inner of $all"
		fi
	else
		fail symbols_replaced_binary "tagprof failed on a replaced binary"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	# Replaced by a copy of the same build: the build ID in memory
	# matches the new file's, so its symbols are used.
	cp "$rep/prog" "$rep/same"
	"$rep/same" 4 &
	pid=$!
	sleep 0.3
	cp "$rep/same" "$rep/same.new" && mv -f "$rep/same.new" "$rep/same"
	if record "$TMP/same.pb.gz" -p "$pid" -d 2; then
		n=$(flat "$TMP/same.pb.gz" other_inner -tagfocus=process=same)
		all=$(total "$TMP/same.pb.gz" -tagfocus=process=same)
		if grep -q ' (deleted)' "/proc/$pid/maps" && [ "$n" -gt $((all / 2)) ]; then
			pass symbols_replaced_same_build
		else
			fail symbols_replaced_same_build "other_inner $n of $all samples"
		fi
	else
		fail symbols_replaced_same_build "could not record"
	fi
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
else
	fail symbols_replaced_binary "could not build the two programs"
	fail symbols_replaced_same_build "could not build the two programs"
fi

if [ -z "$warned" ]; then
	pass symbols_pprof_clean
else
	fail symbols_pprof_clean "go tool pprof warned:$warned"
fi
