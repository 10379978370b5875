#!/usr/bin/env python3
"""The mutation harness (make mutation): does each test catch the bug it is for?

Every tests/mutation/*.mut file lists small deliberate bugs, each with the
feature it breaks and the tests that must catch it. This script copies the
working tree into a scratch directory, builds it, checks that those tests pass
there without any mutation (the baseline), then applies one mutation at a time:
rebuild, run its tests, and print "caught" (a test printed FAIL, exited non-zero
or timed out), "survived" (every test passed) or "invalid" (the change did not
apply or did not build). It ends with a table and a score; the exit status is
0 only when at least TARGET percent are caught and none is invalid.

A mutation that survives because it cannot change behaviour is marked in its
block with "equivalent: WHY"; it is run all the same, reported, and left out
of the score's denominator only if it does survive.

Format of a block (blocks are separated by blank lines, '#' starts a comment):
    id: unique-name
    feature: what breaks
    file: path/in/repo          sets the file for the find/replace pairs after it
    find: text occurring exactly once in that file (\\n for a newline)
    replace: its replacement (\\n for a newline)
    tests: e2e script basenames (tests/e2e/NAME.sh) and unit tests (test_NAME)
The e2e tests profile the whole machine: nothing else should run meanwhile.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

TARGET = 90.0
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
KEYS = ("id", "feature", "file", "find", "replace", "tests", "equivalent")


class Mutation:
    def __init__(self, where):
        self.where = where          # "file.mut:line", for error messages
        self.id = self.feature = self.equivalent = None
        self.edits = []             # [file, find, replace]
        self.tests = []


def unescape(s):
    return s.replace("\\n", "\n").replace("\\t", "\t")


def parse(path):
    """The blocks of one .mut file; raises ValueError on a malformed one."""
    muts, cur, file = [], None, None
    rel = os.path.relpath(path, ROOT)
    with open(path) as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines + [""], 1):
        if line.startswith("#"):
            continue
        if not line.strip():
            if cur:
                muts.append(cur)
            cur, file = None, None
            continue
        key, sep, val = line.partition(":")
        key, val = key.strip(), val[1:] if val.startswith(" ") else val
        if not sep or key not in KEYS:
            raise ValueError(f"{rel}:{no}: expected one of {', '.join(KEYS)}: {line!r}")
        if cur is None:
            cur = Mutation(f"{rel}:{no}")
        if key == "file":
            file = val.strip()
        elif key == "find":
            if file is None:
                raise ValueError(f"{rel}:{no}: find: before any file:")
            cur.edits.append([file, unescape(val), None])
        elif key == "replace":
            if not cur.edits or cur.edits[-1][2] is not None:
                raise ValueError(f"{rel}:{no}: replace: without its find:")
            cur.edits[-1][2] = unescape(val)
        elif key == "tests":
            cur.tests = val.split()
        else:
            setattr(cur, key, val.strip())
    return muts


def test_exists(name):
    if name.startswith("test_"):
        return os.path.exists(os.path.join(ROOT, "tests/unit", name + ".c"))
    return os.path.exists(os.path.join(ROOT, "tests/e2e", name + ".sh"))


def load(only):
    """Every mutation, checked against the pristine tree: each find text must
    occur exactly once, so a list that the code moved away from says so."""
    muts, errors = [], []
    for path in sorted(glob.glob(os.path.join(ROOT, "tests/mutation/*.mut"))):
        try:
            muts += parse(path)
        except ValueError as e:
            errors.append(str(e))
    seen = set()
    for m in muts:
        if not m.id or not m.feature or not m.tests or not m.edits:
            errors.append(f"{m.where}: needs id, feature, file/find/replace and tests")
            continue
        if m.id in seen:
            errors.append(f"{m.where}: id {m.id} used twice")
        seen.add(m.id)
        for name in m.tests:
            if not test_exists(name):
                errors.append(f"{m.id}: no test named {name}")
        for file, find, repl in m.edits:
            if repl is None:
                errors.append(f"{m.id}: find: without replace:")
                continue
            try:
                with open(os.path.join(ROOT, file)) as f:
                    n = f.read().count(find)
            except OSError as e:
                errors.append(f"{m.id}: {file}: {e.strerror}")
                continue
            if n != 1:
                errors.append(f"{m.id}: {file}: the find text occurs {n} times, "
                              f"not once (stale after a code change?): {find[:60]!r}")
    if only:
        unknown = set(only) - {m.id for m in muts}
        if unknown:
            errors.append("no such mutation: " + " ".join(sorted(unknown)))
        muts = [m for m in muts if m.id in only]
    return muts, errors


def copy_tree(dst):
    """The working tree (uncommitted changes included) and its build directory,
    mtimes kept so that make rebuilds only what a mutation touches."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"],
                           cwd=ROOT, check=True, capture_output=True).stdout
    for rel in filter(None, files.decode().split("\0")):
        src = os.path.join(ROOT, rel)
        if not os.path.lexists(src):
            continue        # deleted in the working tree
        os.makedirs(os.path.join(dst, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(src, os.path.join(dst, rel), follow_symlinks=False)
    build = os.path.join(ROOT, "build")
    if os.path.isdir(build):
        shutil.copytree(build, os.path.join(dst, "build"), symlinks=True)


def build(tree, log):
    with open(log, "w") as out:
        return subprocess.run(["make", "-j2", "tests", "BUILD=build"], cwd=tree,
                              stdout=out, stderr=subprocess.STDOUT).returncode == 0


def run_test(tree, name, timeout, log):
    """(verdict, seconds, why): verdict is "pass", "fail" or "skip"."""
    env = dict(os.environ, BUILD="build", TAGPROF=os.path.join(tree, "build/tagprof"),
               WORKLOADS=os.path.join(tree, "build/workloads"))
    if name.startswith("test_"):
        cmd = [os.path.join(tree, "build/tests", name)]
    else:
        cmd = ["bash", os.path.join(tree, "tests/e2e", name + ".sh")]
    t0 = time.monotonic()
    with open(log, "w") as out:
        try:
            p = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE,
                                 stderr=out, start_new_session=True, text=True)
            stdout, _ = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.communicate()
            return "fail", time.monotonic() - t0, f"timed out after {timeout} s"
        out.write("\n--- stdout\n" + stdout)
    secs = time.monotonic() - t0
    fails = [l for l in stdout.splitlines() if l.startswith("FAIL ")]
    if fails:
        return "fail", secs, fails[0][5:]
    if rc != 0:
        return "fail", secs, f"exited {rc}"
    if not any(l.startswith("PASS ") for l in stdout.splitlines()):
        return "skip", secs, "no PASS line"
    return "pass", secs, ""


def apply(tree, m, undo):
    for file, find, repl in m.edits:
        path = os.path.join(tree, file)
        with open(path) as f:
            text = f.read()
        undo.setdefault(path, text)
        if text.count(find) != 1:
            return f"{file}: find text not found once after earlier edits"
        with open(path, "w") as f:
            f.write(text.replace(find, repl))
    return None


def revert(undo):
    # Writing the original back makes it newer than its object: the next
    # build compiles it again.
    for path, text in undo.items():
        with open(path, "w") as f:
            f.write(text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*", help="run only these mutations")
    ap.add_argument("--list", action="store_true", help="list the mutations and exit")
    ap.add_argument("--keep", action="store_true", help="keep the scratch tree (the logs are always kept)")
    args = ap.parse_args()

    muts, errors = load(set(args.ids))
    if errors:
        for e in errors:
            print("mutation list: " + e, file=sys.stderr)
        return 2
    if args.list:
        for m in muts:
            print(f"{m.id:32} {m.feature}  [{' '.join(m.tests)}]")
        print(f"{len(muts)} mutations")
        return 0

    scratch = tempfile.mkdtemp(prefix="tagprof-mutation.")
    tree, logs = os.path.join(scratch, "tree"), os.path.join(scratch, "logs")
    os.makedirs(logs)
    print(f"scratch copy: {scratch}", flush=True)
    copy_tree(tree)
    if not build(tree, os.path.join(logs, "baseline.build")):
        print(f"baseline build failed: see {logs}/baseline.build")
        return 2

    # Baseline: a test that fails without any mutation would "catch" every
    # one, and one that skips here catches none.
    tests = sorted({t for m in muts for t in m.tests})
    took, flaky = {}, []
    for name in tests:
        verdict, secs, why = run_test(tree, name, 900, os.path.join(logs, f"baseline.{name}"))
        if verdict == "fail":
            # Once more, so that one unlucky run does not waste the hour;
            # a test that fails here at all is flaky, and the summary says
            # so, as whatever it "catches" is then in doubt.
            print(f"baseline {name}: fail ({why}); running it again", flush=True)
            flaky.append(name)
            verdict, secs, why = run_test(tree, name, 900,
                                          os.path.join(logs, f"baseline2.{name}"))
        took[name] = secs
        print(f"baseline {name}: {verdict} in {secs:.0f} s {why}", flush=True)
        if verdict != "pass":
            print(f"baseline: {name} does not pass on the unmutated tree; fix it first "
                  f"(log: {logs}/baseline.{name})")
            return 2

    results = []
    t_start = time.monotonic()
    for i, m in enumerate(muts, 1):
        undo, t0 = {}, time.monotonic()
        verdict, why = "survived", ""
        err = apply(tree, m, undo)
        if err:
            verdict, why = "invalid", err
        elif not build(tree, os.path.join(logs, f"{m.id}.build")):
            verdict, why = "invalid", f"does not build (log: {logs}/{m.id}.build)"
        else:
            for name in m.tests:
                # A generous limit, as a hang is a catch only when the
                # baseline finished well inside it.
                limit = max(120, int(3 * took[name]))
                v, _, w = run_test(tree, name, limit, os.path.join(logs, f"{m.id}.{name}"))
                if v == "fail":
                    verdict, why = "caught", f"{name}: {w}"
                    break
        revert(undo)
        if verdict == "survived" and m.equivalent:
            verdict, why = "equivalent", m.equivalent
        results.append((m, verdict, why))
        print(f"[{i}/{len(muts)}] {verdict:10} {m.id} ({time.monotonic() - t0:.0f} s)"
              f"{': ' + why[:150] if why else ''}", flush=True)
    if not build(tree, os.path.join(logs, "final.build")):
        print("warning: the reverted tree does not build", file=sys.stderr)

    print("\n| mutation | feature | tests | result |\n|---|---|---|---|")
    for m, verdict, why in results:
        print(f"| {m.id} | {m.feature} | {' '.join(m.tests)} | {verdict} |")
    caught = sum(v == "caught" for _, v, _ in results)
    invalid = sum(v == "invalid" for _, v, _ in results)
    judged = sum(v in ("caught", "survived") for _, v, _ in results)
    score = 100.0 * caught / judged if judged else 0.0
    print(f"\n{caught} caught, {judged - caught} survived, "
          f"{sum(v == 'equivalent' for _, v, _ in results)} equivalent, {invalid} invalid "
          f"of {len(results)} mutations in {(time.monotonic() - t_start) / 60:.1f} min: "
          f"score {score:.1f}% (target {TARGET:.0f}%)")
    if flaky:
        print("flaky: these tests failed once on the unmutated tree, so their "
              "catches are in doubt: " + " ".join(flaky))
    if not args.keep:
        shutil.rmtree(tree, ignore_errors=True)
    print(f"logs: {logs}")
    return 0 if score >= TARGET and not invalid and not flaky else 1


if __name__ == "__main__":
    sys.exit(main())
