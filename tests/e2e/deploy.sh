#!/usr/bin/env bash
# The deployment files in deploy/: the systemd unit passes systemd-analyze
# verify and keeps its least-privilege settings, the DaemonSet parses and
# grants no more than the justified capabilities, the example config uses
# only the agent's keys with their defaults, and the Containerfile builds
# the way the Makefile installs. No root, BPF or container runtime needed.
. "$(dirname "$0")/../lib.sh"
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UNIT=$ROOT/deploy/tagprof.service
CONF=$ROOT/deploy/agent.conf
DAEMONSET=$ROOT/deploy/kubernetes/daemonset.yaml
CONTAINERFILE=$ROOT/deploy/Containerfile

# The capabilities the agent needs, each justified in tagprof.service and
# daemonset.yaml: nothing else may be granted.
CAPS="BPF PERFMON SYS_PTRACE DAC_READ_SEARCH CHECKPOINT_RESTORE SYSLOG"
# The keys of `tagprof agent` config files (src/cmd/config.h).
KEYS="output-dir window freq count event ldlat push-url push-auth-file retain-files retain-bytes max-memory verbose unwind stack-bytes"

check() {   # NAME COMMAND...: PASS when COMMAND succeeds, else FAIL with its output
	local name=$1 why; shift
	if why=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$why" | tr '\n' ' ')"; fi
}

# unit_values KEY: the values of KEY= in the unit, one per line.
unit_values() { sed -n "s/^$1=//p" "$UNIT"; }

# ---- (a) systemd ----

# systemd-analyze verify on a copy whose ExecStart names an executable that
# exists here (the built agent, else a stand-in), so that the check covers
# every setting, not whether tagprof is installed. Any output fails: verify
# exits 0 on unknown keys and bad values, it only warns.
systemd_verify() {
	local dir=$TMP/unit bin out
	mkdir -p "$dir" "$TMP/bin"
	if [ -x "$TAGPROF" ]; then
		bin=$TAGPROF
	else
		bin=$TMP/bin/tagprof
		printf '#!/bin/sh\nexit 0\n' >"$bin" && chmod 755 "$bin"
	fi
	grep -qx 'ExecStart=/usr/local/bin/tagprof agent --config /etc/tagprof/agent.conf' "$UNIT" ||
		{ echo "ExecStart is not /usr/local/bin/tagprof agent --config /etc/tagprof/agent.conf"; return 1; }
	sed "s|^ExecStart=/usr/local/bin/tagprof |ExecStart=$bin |" "$UNIT" >"$dir/tagprof.service"
	out=$(cd "$dir" && systemd-analyze verify --man=no "$dir/tagprof.service" 2>&1) ||
		{ echo "verify failed: $out"; return 1; }
	[ -z "$out" ] || { echo "verify warned: $out"; return 1; }
}

# The settings the unit must keep, and those it must not have.
systemd_policy() {
	local bound ambient c want
	bound=$(unit_values CapabilityBoundingSet)
	ambient=$(unit_values AmbientCapabilities)
	[ -n "$bound" ] || { echo "no CapabilityBoundingSet="; return 1; }
	[ "$bound" = "$ambient" ] ||
		{ echo "AmbientCapabilities= ($ambient) differs from CapabilityBoundingSet= ($bound)"; return 1; }
	for c in $bound; do
		case " $CAPS " in *" ${c#CAP_} "*) ;; *) echo "unjustified capability $c"; return 1;; esac
	done
	for c in BPF PERFMON; do
		case " $bound " in *" CAP_$c "*) ;; *) echo "CAP_$c missing"; return 1;; esac
	done
	for want in 'NoNewPrivileges=yes' 'ProtectSystem=strict' 'ProtectHome=read-only' \
		'StateDirectory=tagprof' 'StateDirectoryMode=0750' 'ReadWritePaths=/var/lib/tagprof' \
		'CacheDirectory=tagprof' 'CacheDirectoryMode=0700' \
		'ProtectControlGroups=yes' 'LockPersonality=yes' 'Restart=on-failure' 'RestartSec=5' \
		'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' 'ExecReload=/bin/kill -HUP $MAINPID'; do
		grep -qxF "$want" "$UNIT" || { echo "lacks $want"; return 1; }
	done
	grep -qE '^MemoryMax=[0-9]+[KMG]$' "$UNIT" || { echo "no MemoryMax="; return 1; }
	# PrivateTmp hides /tmp/perf-PID.map, ProtectKernelTunables hides
	# /proc/kallsyms, ProtectKernelLogs drops CAP_SYSLOG.
	for c in 'PrivateTmp=yes' 'ProtectKernelTunables=yes' 'ProtectKernelLogs=yes' \
		'DynamicUser=yes' 'ProtectProc=invisible' 'ProcSubset=pid' 'CPUQuota=' 'Nice='; do
		! grep -q "^$c" "$UNIT" || { echo "has $c"; return 1; }
	done
}

# systemd-analyze's own exposure score stays in its "OK" range (<= 4.0).
systemd_security() {
	local out
	sed "s|^ExecStart=/usr/local/bin/tagprof |ExecStart=/bin/true |" "$UNIT" >"$TMP/tagprof.service"
	out=$(cd "$TMP" && systemd-analyze security --offline=yes --threshold=40 tagprof.service 2>&1) ||
		{ echo "$out" | grep 'Overall exposure' || echo "$out" | tail -3; return 1; }
}

if command -v systemd-analyze >/dev/null; then
	check deploy_systemd_verify systemd_verify
	if systemd-analyze security --help 2>/dev/null | grep -q -- '--offline'; then
		check deploy_systemd_security systemd_security
	else
		skip deploy_systemd_security "systemd-analyze without --offline (systemd < 250)"
	fi
else
	# In Debian only the full systemd package has it: too heavy a test
	# dependency to install for this, so debian-deps.sh does not.
	skip deploy_systemd_verify "systemd-analyze not installed (package systemd)"
	skip deploy_systemd_security "systemd-analyze not installed (package systemd)"
fi
check deploy_systemd_policy systemd_policy

# ---- (b) Kubernetes ----

daemonset_yaml() {
	python3 - "$DAEMONSET" "$CAPS" "$KEYS" <<'EOF'
import re, sys, yaml

path, caps, keys = sys.argv[1], set(sys.argv[2].split()), set(sys.argv[3].split())

def die(msg):
    print(msg)
    sys.exit(1)

docs = [d for d in yaml.safe_load_all(open(path)) if d]
by_kind = {}
for d in docs:
    by_kind.setdefault(d.get("kind"), []).append(d)
ds = by_kind.get("DaemonSet") or die("no DaemonSet")
if len(ds) != 1:
    die("%d DaemonSets" % len(ds))
ds = ds[0]
if ds["metadata"].get("name") != "tagprof-agent" or ds["metadata"].get("namespace") != "tagprof":
    die("DaemonSet is not tagprof/tagprof-agent")
if not any(n["metadata"]["name"] == "tagprof" for n in by_kind.get("Namespace", [])):
    die("no Namespace tagprof")
pod = ds["spec"]["template"]["spec"]
sel = ds["spec"]["selector"]["matchLabels"]
labels = ds["spec"]["template"]["metadata"]["labels"]
if any(labels.get(k) != v for k, v in sel.items()):
    die("selector does not match the pod labels")
if pod.get("hostPID") is not True:
    die("hostPID is not true")
sa = pod.get("serviceAccountName")
if not any(s["metadata"]["name"] == sa and s["metadata"].get("namespace") == "tagprof"
           for s in by_kind.get("ServiceAccount", [])):
    die("no ServiceAccount %s in tagprof" % sa)
if not any(t.get("operator") == "Exists" and "key" not in t for t in pod.get("tolerations", [])):
    die("does not tolerate every taint")
if len(pod["containers"]) != 1:
    die("expected one container")
c = pod["containers"][0]
if c.get("image") != "tagprof:latest":
    die("image is %r" % c.get("image"))
cmd = c.get("command", []) + c.get("args", [])
if not cmd or not cmd[0].endswith("tagprof") or cmd[1:] != ["agent", "--config", "/etc/tagprof/agent.conf"]:
    die("command is %r" % cmd)
sc = c.get("securityContext") or die("no securityContext")
if sc.get("privileged", False) is not False:
    die("privileged")
if sc.get("allowPrivilegeEscalation") is not False:
    die("allowPrivilegeEscalation is not false")
if sc.get("readOnlyRootFilesystem") is not True:
    die("readOnlyRootFilesystem is not true")
cap = sc.get("capabilities") or die("no capabilities")
if "ALL" not in cap.get("drop", []):
    die("capabilities do not drop ALL")
add = set(cap.get("add", []))
if not add <= caps:
    die("unjustified capabilities: %s" % " ".join(sorted(add - caps)))
if not {"BPF", "PERFMON"} <= add:
    die("BPF and PERFMON must be added")
res = c.get("resources") or die("no resources")
for kind in ("requests", "limits"):
    for r in ("cpu", "memory"):
        if not res.get(kind, {}).get(r):
            die("no resources.%s.%s" % (kind, r))
mounts = {m["mountPath"]: m for m in c.get("volumeMounts", [])}
vols = {v["name"]: v for v in pod.get("volumes", [])}
def vol(mount_path):
    m = mounts.get(mount_path) or die("nothing mounted at " + mount_path)
    return m, vols.get(m["name"]) or die("no volume " + m["name"])
m, v = vol("/etc/tagprof")
cm_name = (v.get("configMap") or die("/etc/tagprof is not a ConfigMap"))["name"]
if v["configMap"].get("defaultMode", 0o644) & 0o022:
    die("config defaultMode is writable by group or others: the agent refuses it")
cms = [d for d in by_kind.get("ConfigMap", []) if d["metadata"]["name"] == cm_name]
conf = (cms or die("no ConfigMap " + cm_name))[0].get("data", {}).get("agent.conf") or \
    die("ConfigMap has no agent.conf")
seen = set()
for n, line in enumerate(conf.splitlines(), 1):
    line = line.split("#", 1)[0].strip()
    if not line:
        continue
    mt = re.match(r"^([a-z-]+)\s*=", line) or die("ConfigMap agent.conf line %d: not key = value" % n)
    if mt.group(1) not in keys or mt.group(1) in seen:
        die("ConfigMap agent.conf line %d: unknown or repeated key %s" % (n, mt.group(1)))
    seen.add(mt.group(1))
m, v = vol("/var/lib/tagprof")
if (v.get("hostPath") or {}).get("path") != "/var/lib/tagprof" or m.get("readOnly"):
    die("/var/lib/tagprof is not the host's, writable")
m, v = vol("/var/cache/tagprof")
if (v.get("hostPath") or {}).get("path") != "/var/cache/tagprof" or m.get("readOnly"):
    die("/var/cache/tagprof is not the host's, writable")
m, v = vol("/sys/kernel/btf")
if not m.get("readOnly") or (v.get("hostPath") or {}).get("path") != "/sys/kernel/btf":
    die("/sys/kernel/btf is not the host's, read-only")
EOF
}

if ! command -v python3 >/dev/null; then
	skip deploy_daemonset_yaml "python3 not installed"
elif ! python3 -c 'import yaml' 2>/dev/null; then
	skip deploy_daemonset_yaml "python3 yaml module missing (deploy/debian-deps.sh installs python3-yaml)"
else
	check deploy_daemonset_yaml daemonset_yaml
fi

# ---- (c) the example config ----

# Every line a known key, each key once, all of them there, with the
# agent's defaults (src/cmd/config.c config__defaults).
config_example() {
	awk -v keys="$KEYS" '
	BEGIN { n = split(keys, k, " "); for (i = 1; i <= n; i++) known[k[i]] = 1
		want["output-dir"] = "^/var/lib/tagprof$"; want["window"] = "^(60s?|1m)$"
		want["freq"] = "^19$"; want["event"] = "^auto$"
		want["push-url"] = "^(none)?$"; want["push-auth-file"] = "^(none)?$"
		want["retain-files"] = "^1440$"; want["retain-bytes"] = "^(1G|1024M)$"
		want["max-memory"] = "^64M$"; want["verbose"] = "^(0|false)$"
		want["unwind"] = "^auto$"; want["stack-bytes"] = "^(8192|8K)$"
		want["count"] = "^none$"; want["ldlat"] = "^30$" }
	{ sub(/#.*/, ""); gsub(/^[ \t]+|[ \t]+$/, "") }
	$0 == "" { next }
	!/^[a-z-]+[ \t]*=/ { print "line " NR ": not key = value: " $0; bad = 1; next }
	{ key = $0; sub(/[ \t]*=.*/, "", key); val = $0; sub(/^[^=]*=[ \t]*/, "", val)
	  if (!(key in known)) { print "line " NR ": unknown key " key; bad = 1 }
	  else if (key in seen) { print "line " NR ": " key " again"; bad = 1 }
	  else if (val !~ want[key]) { print "line " NR ": " key " = " val " is not the default"; bad = 1 }
	  seen[key] = 1 }
	END { for (x in known) if (!(x in seen)) { print "lacks " x; bad = 1 }
	      exit bad }' "$CONF"
}
check deploy_config_example config_example

# ---- (d) the Containerfile ----

# Two stages on Debian 12, the build stage installs every build package of
# debian-deps.sh, the runtime stage only libraries that exist in bookworm,
# and `make install` puts the files where the COPY lines take them from
# (make -n: a dry run, nothing is built).
containerfile() {
	local build runtime p pkgs out
	# Packages in debian-deps.sh that only the tests use.
	local test_only=" golang-go linux-perf bpftrace valgrind time python3 python3-yaml libc6-dbg debuginfod chromium llvm-14-dev libclang-rt-14-dev procps util-linux "
	[ "$(grep -m1 '^FROM' "$CONTAINERFILE")" = "FROM debian:bookworm AS build" ] ||
		{ echo "first stage is not FROM debian:bookworm AS build"; return 1; }
	grep -qx 'FROM debian:bookworm-slim' "$CONTAINERFILE" ||
		{ echo "no FROM debian:bookworm-slim runtime stage"; return 1; }
	grep -q 'make BUILD=/build' "$CONTAINERFILE" || { echo "no make BUILD=/build"; return 1; }
	grep -qxF 'ENTRYPOINT ["/usr/local/bin/tagprof"]' "$CONTAINERFILE" ||
		{ echo "ENTRYPOINT is not /usr/local/bin/tagprof"; return 1; }
	build=$(awk '/^FROM/ { n++ } n == 1' "$CONTAINERFILE" | sed 's/#.*//')
	runtime=$(awk '/^FROM/ { n++ } n == 2' "$CONTAINERFILE" | sed 's/#.*//')
	pkgs=$(sed -n '/^PKGS=(/,/^)/p' "$ROOT/deploy/debian-deps.sh" | sed '1d;$d;s/#.*//')
	for p in $pkgs; do
		case "$test_only" in *" $p "*) continue;; esac
		grep -qw -- "$p" <<<"$build" ||
			{ echo "build stage lacks $p (from debian-deps.sh; if it is for tests only, list it in test_only here)"; return 1; }
	done
	for p in libbpf1 libelf1 libdw1 zlib1g libprotobuf-c1 libpfm4 libcurl4 libdebuginfod1; do
		grep -qw -- "$p" <<<"$runtime" || { echo "runtime stage lacks $p"; return 1; }
	done
	# Where apt has package lists (Debian 12 here), the names must exist.
	if apt-cache policy libc6 2>/dev/null | grep -q 'Candidate: [0-9]'; then
		for p in $(sed ':a;/\\$/{N;s/\\\n//;ba}' <<<"$runtime" |
			grep -o 'no-install-recommends[^&]*' | cut -d' ' -f2-); do
			apt-cache policy "$p" 2>/dev/null | grep -q 'Candidate: [0-9]' ||
				{ echo "no package $p in apt"; return 1; }
		done
	fi
	grep -q 'install -m 0644 deploy/agent.conf' <<<"$build" && [ -f "$CONF" ] ||
		{ echo "the image does not get deploy/agent.conf"; return 1; }
	out=$(make -n -C "$ROOT" BUILD="$TMP/cbuild" install PREFIX=/usr/local DESTDIR="$TMP/cout" 2>&1) ||
		{ echo "make -n install failed: $(tail -3 <<<"$out")"; return 1; }
	grep -q "$TMP/cbuild/tagprof $TMP/cout/usr/local/bin/tagprof" <<<"$out" &&
		grep -q "libtagprof.so.* $TMP/cout/usr/local/lib/" <<<"$out" ||
		{ echo "make install does not put tagprof and libtagprof.so where the Containerfile copies from"; return 1; }
	grep -q 'cp -a /out/usr/local/bin/tagprof' <<<"$build" &&
		grep -q 'cp -a /out/usr/local/lib/libtagprof.so\*' <<<"$build" ||
		{ echo "the build stage does not copy /out/usr/local/{bin/tagprof,lib/libtagprof.so*}"; return 1; }
	[ ! -e "$TMP/cbuild" ] && [ ! -e "$TMP/cout" ] || { echo "make -n wrote files"; return 1; }
}
check deploy_containerfile containerfile
