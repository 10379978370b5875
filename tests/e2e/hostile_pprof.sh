#!/usr/bin/env bash
# Issue 15, case 3: `tagprof report` on crafted pprof files whose repeated
# fields decode to far more than they weigh: 200 MB (190 KiB gzipped) of
# 100M empty samples or 100M empty strings, and one sample with 200M
# one-byte values. Each must be refused with the decode budget named
# (TAGPROF_REPORT_MAX_MB, 256 here), within a time and peak-RSS bound.
# The bound on RSS is the inflated file's 200 MB and room: each is refused
# by counting its elements before decoding (util/pbcost.h), where decoding
# up to the budget first took 720 MiB and 4-5 s here.
# (Before the budget: 100-130 s and 4.5 GiB, stopped only by a 6 GiB
# ulimit -v, at load 20 on 2 CPUs; unbounded, ~9 GiB.)
. "$(dirname "$0")/../lib.sh"

py "$TMP" <<'PY'
import gzip, sys
d = sys.argv[1]
def big(name, head, unit, n):
    with gzip.open(f"{d}/{name}.pb.gz", "wb", compresslevel=1) as f:
        f.write(head)
        chunk = unit * 1_000_000
        for _ in range(n // 1_000_000):
            f.write(chunk)
def varint(v):
    b = b""
    while v >= 0x80:
        b += bytes([v & 0x7f | 0x80]); v >>= 7
    return b + bytes([v])
big("samples", b"", b"\x12\x00", 100_000_000)       # Profile.sample {}
big("strings", b"", b"\x32\x00", 100_000_000)       # Profile.string_table ""
n = 200_000_000                                     # Sample.value, packed
inner = b"\x12" + varint(n)
big("values", b"\x12" + varint(len(inner) + n) + inner, b"\x01", n)
PY
rss_max=393216
# ASan's runtime: shadow and quarantine, the bound the plain build had
# before the count.
[ -z "${SANITIZE:-}" ] || rss_max=1048576
for c in samples strings values; do
	TAGPROF_REPORT_MAX_MB=256 /usr/bin/time -f '%e %M' -o "$TMP/$c.time" \
		timeout -s KILL 120 "$TAGPROF" report pprof "$TMP/$c.pb.gz" \
		-o "$TMP/out.pb.gz" 2>"$TMP/$c.err"
	rc=$?
	read -r secs rss < <(tail -1 "$TMP/$c.time")
	echo "hostile_pprof $c: exit $rc in $secs s, peak RSS $rss KiB: $(grep -v '^Command' "$TMP/$c.err" | head -1)"
	if [ $rc -eq 2 ] && grep -q 'needs more than 256 MiB' "$TMP/$c.err" &&
	   on_time "$secs" 30 && [ "${rss:-0}" -le $rss_max ]; then
		pass hostile_pprof_$c
	else
		fail hostile_pprof_$c "exit $rc in $secs s, peak RSS $rss KiB (bounds 30 s, $rss_max KiB): $(head -2 "$TMP/$c.err")"
	fi
done
