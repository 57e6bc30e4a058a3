#!/usr/bin/env python3
"""The demo's report code on recorded guest output: a full recorded run
(demo/tests/fixtures/recorded/: what `make demo` collected), and copies of
it with a failed guest, malformed lines, a missing status file, a kernel
without the counters, a failed sweep run and a scenario that is not as
expected. Asserts results.json, the printed table and summary, report.md
and the exit status of `python3 -m demo verdict`. KTAP; no guest is booted.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURE = os.path.join(TOP, "demo", "tests", "fixtures", "recorded")
sys.path.insert(0, TOP)
sys.dont_write_bytecode = True
from demo import table  # noqa: E402

results = []


def check(desc, cond, diag=""):
    results.append((bool(cond), desc, diag))


def demo(report, *cmd):
    env = dict(os.environ, DMA32_TOP=TOP, DMA32_BUILD=os.path.join(report, "build"))
    return subprocess.run([sys.executable, "-m", "demo", *cmd, "--report", report], cwd=TOP, env=env,
                          capture_output=True, text=True)


def prepare(scratch, name, mutate=None):
    """A copy of the recorded run, changed by mutate(raw_dir), judged and
    rendered; returns (results.json, verdict's CompletedProcess, report.md)."""
    report = os.path.join(scratch, name)
    shutil.copytree(FIXTURE, os.path.join(report, "raw"))
    if mutate:
        mutate(os.path.join(report, "raw"))
    for step in ("judge", "render"):
        r = demo(report, step)
        if r.returncode != 0:
            return None, r, ""
    with open(os.path.join(report, "results.json")) as f:
        res = json.load(f)
    verdict = demo(report, "verdict")
    with open(os.path.join(report, "report.md")) as f:
        md = f.read()
    return res, verdict, md


def rec(res, name):
    return next(r for r in res["scenarios"] if r["name"] == name)


def edit(raw, boot, fn):
    path = os.path.join(raw, boot + ".out")
    with open(path) as f:
        text = f.read()
    with open(path, "w") as f:
        f.write(fn(text))


def edit_run_json(raw, boot, scenario, fn):
    """Change the JSON line dma32ctl printed for one scenario."""
    def change(text):
        out, in_run = [], False
        for line in text.splitlines():
            if line.startswith("@@"):
                in_run = line == "@@run " + scenario
            elif in_run and line.startswith("{"):
                d = json.loads(line)
                fn(d)
                line = json.dumps(d)
            out.append(line)
        return "\n".join(out) + "\n"
    edit(raw, boot, change)


def main():
    scratch = tempfile.mkdtemp(prefix="demo-report-")
    try:
        run_all(scratch)
    finally:
        shutil.rmtree(scratch)
    print("KTAP version 1")
    print("1..%d" % len(results))
    for i, (ok, desc, diag) in enumerate(results, 1):
        print("%s %d %s%s" % ("ok" if ok else "not ok", i, desc, "" if ok else " # " + str(diag).replace("\n", " ")[:300]))


def run_all(scratch):
    # The recorded run as it is.
    res, verdict, md = prepare(scratch, "as-recorded")
    check("recorded run: judged and rendered", res is not None, verdict.stderr)
    if res is None:
        return
    names = [r["name"] for r in res["scenarios"]]
    with open(os.path.join(FIXTURE, "selection.json")) as f:
        selected = json.load(f)["scenarios"]
    check("recorded run: one record per scenario run, in the table's order",
          names == [s.name for s in table.SCENARIOS if s.name in selected], names)
    fields = ("machine", "mem", "shuffle", "kind", "swiotlb_bounced", "driver_bounced", "as_expected",
              "zone_dma_free_before", "zone_dma_free_after")
    missing = [(r["name"], k) for r in res["scenarios"] for k in fields if k not in r]
    check("recorded run: every record has the boot's conditions, counters and verdict", not missing, missing)
    bad_counts = [r["name"] for r in res["scenarios"] if r["guest_ok"] and r["swiotlb_bounced"] is not None
                  and r["driver_bounced"] is not None and r["swiotlb_bounced"] != r["driver_bounced"]]
    check("recorded run: the kernel's bounce count equals the driver's in every row", not bad_counts, bad_counts)
    want = 0 if res["summary"]["as_expected"] == len(names) and not res["summary"]["guest_failures"] else 1
    check("recorded run: verdict's exit status matches the summary", verdict.returncode == want,
          "exit %d, summary %s" % (verdict.returncode, res["summary"]))
    rows = [l for l in verdict.stdout.splitlines() if l.split()[:1] and l.split()[0] in names]
    check("recorded run: the printed table has a row per scenario", len(rows) == len(names), verdict.stdout)
    check("recorded run: report.md quotes every claim that has numbers",
          all(c["claim"] in md for c in res["claims"]) and len(res["claims"]) >= 5, len(res["claims"]))
    check("recorded run: report.md states machine and memory layout per scenario",
          "`-M q35 -m 6G` (2 GiB below 4 GiB)" in md and "`-M pc -m 6G` (3 GiB below 4 GiB)" in md, "")
    guarantees = [r["name"] for r in res["scenarios"] if r["kind"] == "guarantee"]
    check("recorded run: DMA-API guarantees are labelled apart from the claims",
          guarantees and all(re.search(r"\b%s\b.*\bguarantee\b" % re.escape(g), verdict.stdout) for g in guarantees),
          guarantees)

    # A guest that timed out: its scenarios fail with run-guest's reason.
    def timeout(raw):
        with open(os.path.join(raw, "nodma32.status.json")) as f:
            st = json.load(f)
        st.update(outcome="timeout", exit=124, message="guest timed out after 180s")
        with open(os.path.join(raw, "nodma32.status.json"), "w") as f:
            json.dump(st, f)
    res, verdict, md = prepare(scratch, "timeout", timeout)
    nod = [r for r in res["scenarios"] if r["boot"] == "nodma32"]
    check("a timed-out guest: its rows say why, from the status file",
          nod and all(not r["guest_ok"] and r["guest_error"] == "guest timed out after 180s" for r in nod),
          [(r["name"], r["guest_error"]) for r in nod])
    check("a timed-out guest: the other boots' rows are unaffected",
          all(r["guest_ok"] for r in res["scenarios"] if r["boot"] != "nodma32"), "")
    check("a timed-out guest: verdict prints it and exits 1",
          verdict.returncode == 1 and "nodma32-coherent: guest failed: guest timed out after 180s" in verdict.stdout,
          "exit %d: %s" % (verdict.returncode, verdict.stdout[-400:]))

    # No status file at all (run-guest died before it could write one).
    res, verdict, _ = prepare(scratch, "no-status", lambda raw: os.remove(os.path.join(raw, "ring32.status.json")))
    r = rec(res, "ring32-data64-streaming")
    check("no status file: the row fails naming the missing status",
          not r["guest_ok"] and r["guest_error"].startswith("run-guest wrote no status"), r["guest_error"])

    # Output cut short: no '@@done'.
    res, _, _ = prepare(scratch, "truncated", lambda raw: edit(raw, "iommu", lambda t: t.replace("@@done", "")))
    r = rec(res, "iommu-streaming")
    check("output without its end marker: the guest's output ended early",
          r["guest_error"] == "the guest's output ended early", r["guest_error"])

    # A malformed JSON line for one scenario.
    def malformed(raw):
        edit(raw, "today", lambda t: re.sub(r"(@@run dma32-coherent\n)\{[^\n]*", r'\1{"ok": tru', t))
    res, verdict, _ = prepare(scratch, "malformed", malformed)
    r = rec(res, "dma32-coherent")
    check("a malformed result line: that row is not as expected, saying dma32ctl gave no result",
          r["as_expected"] is False and r["showed"].startswith("dma32ctl gave no result"), r["showed"])
    check("a malformed result line: the other rows of the boot still judged",
          rec(res, "dma32-streaming")["showed"] and rec(res, "dma32-streaming")["guest_ok"], "")
    check("a malformed result line: verdict exits 1", verdict.returncode == 1, verdict.returncode)

    # A scenario that ran but did not show what it must.
    def bounce_mismatch(raw):
        def f(d):
            c = d["counters"][table.COUNTERS["swiotlb_bounced"]]
            c["after"] = c["before"] + (d["mappings_above_4g"] or 0) + 1
        edit_run_json(raw, "today", "dma32-streaming", f)
    res, verdict, md = prepare(scratch, "not-expected", bounce_mismatch)
    r = rec(res, "dma32-streaming")
    check("kernel and driver disagree on bounces: not as expected",
          r["as_expected"] is False and r["swiotlb_bounced"] != r["driver_bounced"], r["showed"])
    check("not as expected: verdict names it and exits 1",
          verdict.returncode == 1 and "NOT as expected: dma32-streaming" in verdict.stdout, verdict.stdout[-300:])
    check("not as expected: report.md marks the row", "**NOT AS EXPECTED**" in md, "")

    # A kernel without the counters (no kernel-patches): n/a, never 0.
    def no_counters(raw):
        for boot in [f[:-4] for f in os.listdir(raw) if f.endswith(".out")]:
            def f(t):
                t = re.sub(r'"(/sys/kernel/debug/[^"]+)": \{"before": \d+, "after": \d+\}',
                           r'"\1": {"before": null, "after": null}', t)
                return re.sub(r'"(/sys/kernel/debug/[^"]+)":\{"before":\d+,"after":\d+\}',
                              r'"\1":{"before":null,"after":null}', t)
            edit(raw, boot, f)
    res, verdict, _ = prepare(scratch, "no-counters", no_counters)
    r = rec(res, "dma32-streaming")
    check("a kernel without the counters: null in results.json", r["swiotlb_bounced"] is None, r["swiotlb_bounced"])
    check("a kernel without the counters: n/a in the table, never 0",
          re.search(r"^dma32-streaming\s+\S+ \S+ \S+\s+\S+\s+\S+\s+n/a", verdict.stdout, re.M), verdict.stdout[:600])

    # A failed sweep run is reported, not dropped.
    def sweep_fail(raw):
        edit(raw, "today", lambda t: re.sub(r"(@@sweep streaming 4096 \d+\n)\{[^\n]*\n@@rc 0",
                                            r'\1{"ok": false, "errno": "ENOMEM", "bytes": 0, "ns": 0}\n@@rc 1', t,
                                            count=1))
    res, verdict, _ = prepare(scratch, "sweep-fail", sweep_fail)
    failed = res["sweep"]["failed_runs"]
    check("a failed sweep run: listed in results.json",
          any(f["strategy"] == "streaming" and f["size"] == 4096 and f["errno"] == "ENOMEM" for f in failed), failed)
    check("a failed sweep run: said in the summary", "sweep runs failed" in verdict.stdout, verdict.stdout[-400:])

    # Bad usage: one line, exit 2 / 1.
    r = demo(os.path.join(scratch, "empty"), "judge")
    check("judge without guest results: one line, exit 1",
          r.returncode == 1 and r.stderr.strip().count("\n") == 0 and "has no guest results" in r.stderr, r.stderr)
    r = demo(os.path.join(scratch, "empty"), "collect", "--only", "[")
    check("a bad --only regex: one line, exit 1",
          r.returncode == 1 and "not a valid regular expression" in r.stderr, r.stderr)


if __name__ == "__main__":
    main()
