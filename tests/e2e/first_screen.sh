#!/usr/bin/env bash
# The first screen of `go tool pprof -top`: File: names the program
# (ownwork, whose own function own_work does all its work), own_work is
# the first function, and at most two comment lines come between the
# File:/Build ID: lines and Type: (what was recorded, then the problems
# that are not zero). Every counter stays in the '#' comments, which
# `go tool pprof -comments` and `record -v` print. A problem shows when
# there is one (a stripped copy of the program: its frames have no
# symbol, and no debug info is found), and none shows for ownwork itself,
# which runs no code but its own (no C library, static).
. "$(dirname "$0")/../lib.sh"
need_bpf first_screen_record first_screen_file first_screen_top \
	first_screen_lines first_screen_what first_screen_comments \
	first_screen_verbose first_screen_pid_file first_screen_pid_top \
	first_screen_pid_lines first_screen_pid_no_problem first_screen_problem

PROG=$WORKLOADS/ownwork

# header FILE: the lines -top prints before Type:.
header() { pprof "$1" -top | sed '/^Type: /,$d'; }
# comment_lines FILE: those that are neither File: nor Build ID:.
comment_lines() { header "$1" | grep -v -e '^File: ' -e '^Build ID: '; }
# first_function FILE: the function of -top's first line.
first_function() {
	pprof "$1" -top -nodecount=1 | awk 'seen { print $6; exit } /flat%/ { seen = 1 }'
}

# check_screen NAME FILE: File: ownwork, own_work first, at most two
# comment lines.
check_screen() {
	local name=$1 f=$2 file fn lines
	file=$(header "$f" | sed -n 's/^File: //p')
	fn=$(first_function "$f")
	lines=$(comment_lines "$f" | wc -l)
	echo "$name: File: $file, first function $fn, $lines comment lines:" >&2
	comment_lines "$f" | sed 's/^/    /' >&2
	if [ "$file" = ownwork ]; then
		pass "${name}_file"
	else
		fail "${name}_file" "File: ${file:-none} (want ownwork); header: $(header "$f" | head -3 | tr '\n' '|')"
	fi
	if [ "$fn" = own_work ]; then
		pass "${name}_top"
	else
		fail "${name}_top" "first function ${fn:-none} (want own_work)"
	fi
	if [ "$lines" -ge 1 ] && [ "$lines" -le 2 ]; then
		pass "${name}_lines"
	else
		fail "${name}_lines" "$lines comment lines (want 1 or 2): $(comment_lines "$f" | cut -c1-80 | tr '\n' '|')"
	fi
}

out=$TMP/rec.pb.gz
if "$TAGPROF" record -v -F 199 -o "$out" -- "$PROG" 2 2>"$TMP/rec.err"; then
	pass first_screen_record
else
	fail first_screen_record "tagprof exited $?: $(tail -3 "$TMP/rec.err")"
	exit 0
fi
check_screen first_screen "$out"

# The first line says what was recorded: the version, the event, the rate
# asked for and the window's duration (about the program's 2 s).
what=$(comment_lines "$out" | head -1)
if [[ "$what" =~ ^tagprof\ [^\ ]+:\ [^\ ]+\ at\ 199\ Hz,\ ([0-9]+\.[0-9])\ s$ ]] &&
   within "${BASH_REMATCH[1]}" 1.5 4; then
	pass first_screen_what
else
	fail first_screen_what "first comment: '$what' (want tagprof VERSION: EVENT at 199 Hz, ~2.0 s)"
fi

# Every counter is in the '#' comments, and record -v printed the same
# lines at its end.
pprof "$out" -comments >"$TMP/comments"
full=$(grep -c '^# ' "$TMP/comments")
missing=$(sed -n 's/^# /tagprof: /p' "$TMP/comments" | grep -vxFf "$TMP/rec.err" | head -1)
if grep -Eq '^# samples: [0-9]+ received, [0-9]+ lost' "$TMP/comments" &&
   grep -q '^# unwind ' "$TMP/comments" && [ "$full" -ge 10 ]; then
	pass first_screen_comments
else
	fail first_screen_comments "go tool pprof -comments printed $full '#' lines: $(head -4 "$TMP/comments" | cut -c1-60 | tr '\n' '|')"
fi
if [ "$full" -ge 10 ] && [ -z "$missing" ] && ! grep -q '^tagprof: # ' "$TMP/rec.err"; then
	pass first_screen_verbose
else
	fail first_screen_verbose "record -v did not print '${missing:-?}' (of $full '#' lines)"
fi

# -p on the program running: the same screen, and no problem at all (its
# stacks hold its own code alone, which has symbols and DWARF). -c: the
# first line says the period.
"$PROG" 6 &
wl=$!
sleep 0.5
if "$TAGPROF" record -c 10000000 -d 2 -p $wl -o "$TMP/pid.pb.gz" 2>"$TMP/pid.err"; then
	check_screen first_screen_pid "$TMP/pid.pb.gz"
	c=$(comment_lines "$TMP/pid.pb.gz")
	if ! grep -q '^problems: ' <<<"$c" &&
	   grep -Eq '^tagprof [^ ]+: [^ ]+ every 10000000 events, [0-9.]+ s$' <<<"$c"; then
		pass first_screen_pid_no_problem
	else
		fail first_screen_pid_no_problem "comments: $(tr '\n' '|' <<<"$c")"
	fi
else
	fail first_screen_pid_file "tagprof -p exited $?: $(tail -3 "$TMP/pid.err")"
fi
kill $wl 2>/dev/null
wait $wl 2>/dev/null

# A stripped copy: no symbol names its frames and no debug file is found,
# and the problems line says both, with their numbers, and no counter
# that is zero.
strip -o "$TMP/ownwork" "$PROG"
if "$TAGPROF" record -F 199 -o "$TMP/strip.pb.gz" -- "$TMP/ownwork" 1 2>"$TMP/strip.err"; then
	p=$(comment_lines "$TMP/strip.pb.gz" | grep '^problems: ')
	echo "stripped: $p" >&2
	if grep -Eq '[1-9][0-9]* stripped binaries without debug info' <<<"$p" &&
	   grep -Eq '[1-9][0-9]* user frames without symbol' <<<"$p" &&
	   ! grep -Eq '(: |, )0 ' <<<"$p" &&
	   [ "$(comment_lines "$TMP/strip.pb.gz" | wc -l)" -eq 2 ]; then
		pass first_screen_problem
	else
		fail first_screen_problem "problems line: '${p:-none}' (want stripped binaries without debug info and user frames without symbol)"
	fi
else
	fail first_screen_problem "tagprof exited $?: $(tail -3 "$TMP/strip.err")"
fi
