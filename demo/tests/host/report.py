#!/usr/bin/env python3
"""The demo's report code on recorded guest output: a full recorded run
(demo/tests/fixtures/recorded/: what `make demo` collected), and copies of
it with a failed guest, malformed lines, a missing status file, a kernel
without the counters, a failed sweep run, a scenario that is not as
expected, address runs that disagree with the counters and a driver that
reports none. Asserts results.json (the address runs against the driver's
counts, computed here on their own), the printed table and summary,
report.md, the memory-map figures and the exit status of `python3 -m demo
verdict`. KTAP; no guest is booted.
"""
import copy
import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
FIXTURE = os.path.join(TOP, "demo", "tests", "fixtures", "recorded")
sys.path.insert(0, TOP)
sys.dont_write_bytecode = True
# The fixture's manifest says which kernel was the demo's when it was
# recorded; judge takes that kernel's table, whatever KERNEL= this test
# run has.
with open(os.path.join(FIXTURE, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
from demo.tests import ktap  # noqa: E402
from demo import collect, identity, judge, render, table  # noqa: E402
from demo.tests import golden  # noqa: E402

results = []


def check(desc, cond, diag=""):
    results.append((bool(cond), desc, diag))


def demo(report, *cmd, **environment):
    env = dict(os.environ, DMA32_TOP=TOP, DMA32_BUILD=os.path.join(report, "build"), PYTHONDONTWRITEBYTECODE="1",
               **environment)
    return subprocess.run([sys.executable, "-m", "demo", *cmd, "--report", report], cwd=TOP, env=env,
                          capture_output=True, text=True)


def prepare(scratch, name, mutate=None, rendered=False):
    """A copy of the recorded run, changed by mutate(raw_dir), judged and,
    if rendered, rendered; returns (results.json, verdict's CompletedProcess,
    report.md or ""). Rendering (the memory maps: 3.8 s of a case's 4.9)
    is for the cases whose report.md is read or whose damage render must
    survive: a failed guest, missing counters."""
    report = os.path.join(scratch, name)
    shutil.copytree(FIXTURE, os.path.join(report, "raw"))
    if mutate:
        mutate(os.path.join(report, "raw"))
    for step in ("judge", "render") if rendered else ("judge",):
        r = demo(report, step)
        if r.returncode != 0:
            return None, r, ""
    with open(os.path.join(report, "results.json")) as f:
        res = json.load(f)
    verdict = demo(report, "verdict")
    md = ""
    if rendered:
        with open(os.path.join(report, "report.md")) as f:
            md = f.read()
    return res, verdict, md


def judged(scratch, name, mutate, *options, **environment):
    """judge on a copy of the recorded run changed by mutate(raw_dir)."""
    report = os.path.join(scratch, name)
    shutil.copytree(FIXTURE, os.path.join(report, "raw"))
    mutate(os.path.join(report, "raw"))
    return demo(report, "judge", *options, **environment)


def live_table(**changes):
    """The table of the recorded run's kernel with one scenario changed:
    changes = {name: {field: value}}."""
    tbl = table.for_kernel(MANIFEST["kernel"])
    return dataclasses.replace(tbl, scenarios=tuple(
        dataclasses.replace(s, **changes[s.name]) if s.name in changes else s for s in tbl.scenarios))


def refusal(module=table, **changes):
    """judge's refusal of the recorded run with constants of MODULE (the
    table, or collect) changed, and restored after: the message, or None
    when it judged the run."""
    saved = {k: copy.deepcopy(getattr(module, k)) for k in changes}
    try:
        for k, v in changes.items():
            setattr(module, k, v)
        judge.judge(FIXTURE)
        return None
    except judge.Refused as e:
        return str(e)
    finally:
        for k, v in saved.items():
            setattr(module, k, v)


def refusals(scratch):
    """raw/ that cannot be judged as what it was: refused, one message."""
    other = next(k for k in table.KERNELS if k != MANIFEST["kernel"])
    r = judged(scratch, "other-kernel", lambda raw: None, "--kernel-version", other)
    check("refused: judging for another kernel (judge --kernel-version), saying which kernel the run was"
          " collected with", r.returncode == 1 and "collected with %s as the demo's kernel" % MANIFEST["kernel"]
          in r.stderr, "exit %d: %s" % (r.returncode, r.stderr))
    r = judged(scratch, "environment", lambda raw: None, DMA32_KERNEL=other)
    with open(os.path.join(scratch, "environment", "results.json")) as f:
        kernel = json.load(f)["kernel"] if r.returncode == 0 else None
    check("not refused: judge reads no environment (DMA32_KERNEL=%s): the table of the run's kernel, %s" % (
        other, MANIFEST["kernel"]), r.returncode == 0 and kernel == MANIFEST["kernel"], r.stderr)
    first = MANIFEST["scenarios"][0]["name"]
    try:
        judge.judge(FIXTURE, tbl=live_table(**{first: {"count": 16}}))
        msg = None
    except judge.Refused as e:
        msg = str(e)
    check("refused: a table edit that changes a request, naming the scenario and the count",
          msg and "%s: count was" % first in msg and "make demo ONLY=" in msg, msg)
    try:
        judge.judge(FIXTURE, tbl=live_table(**{first: {"name": first + "-renamed"}}))
        msg = None
    except judge.Refused as e:
        msg = str(e)
    check("refused: a scenario that ran but is no longer in the table",
          msg and "%s ran, but the table has no such scenario now" % first in msg, msg)
    counters = dict(table.COUNTERS, swiotlb_bounced="/sys/kernel/debug/swiotlb/io_tlb_elsewhere")
    msg = refusal(COUNTERS=counters)
    check("refused: COUNTERS[\"swiotlb_bounced\"] pointed at another file, naming the counter and both files",
          msg and "counter swiotlb_bounced: %s when it ran, the table now says %s" % (
              MANIFEST["counters"]["swiotlb_bounced"], counters["swiotlb_bounced"]) in msg, msg)
    msg = refusal(COUNTERS=dict(table.COUNTERS, new_counter="/sys/kernel/debug/swiotlb/io_tlb_new"))
    check("refused: a counter the run did not read, before any check can read it (no KeyError)",
          msg and "counter new_counter: not read when it ran" in msg, msg)
    msg = refusal(RUNS=16)
    check("refused: RUNS=16, saying what the run asked for", msg and "runs_asked was %d when it ran, the table"
          " now says 16" % MANIFEST["runs_asked"] in msg, msg)
    msg = refusal(LEVELS=set(table.LEVELS) - {"swiotlb_used"})
    check("refused: a counter reported as a delta that the run reported as a level", msg and "levels was" in msg,
          msg)
    msg = refusal(SWEEP_REPEAT=table.SWEEP_REPEAT + 1)
    check("refused: another sweep than the run's", msg and "sweep was" in msg, msg)
    msg = refusal(collect, GUEST_FILES=collect.GUEST_FILES[:-1])
    check("refused: a guest command the table would now build otherwise, naming the boot and the difference",
          msg and "boot today (today): the guest command the table builds now differs at character" in msg, msg)
    try:
        judge.judge(FIXTURE, tbl=live_table(**{first: {"check": lambda rec, info: (rec["no_such_counter"], "")}}))
        msg = None
    except judge.Refused as e:
        msg = str(e)
    except KeyError as e:
        msg = "KeyError %s" % e
    check("refused: a check that reads a figure the run's records lack, naming the scenario and the key",
          msg and msg.startswith("the check of %s" % first) and "'no_such_counter'" in msg, msg)
    res = judge.judge(FIXTURE, tbl=live_table(**{first: {"check": lambda rec, info: (False, "changed check")}}))
    r0 = rec(res, first)
    check("not refused: a table edit that changes only a check re-judges the run with it",
          r0["as_expected"] is False and r0["showed"] == "changed check", r0["showed"])

    def other_count(raw):
        def f(d):
            d["count"] += 1
        edit_run_json(raw, "today", "dma32-streaming", f)
    r = judged(scratch, "output-disagrees", other_count)
    check("refused: guest output whose request disagrees with the manifest",
          r.returncode == 1 and "dma32-streaming (today): dma32ctl ran count" in r.stderr, r.stderr)
    r = judged(scratch, "incomplete", lambda raw: edit_manifest(raw, lambda m: m.update(complete=False)))
    check("refused: a manifest from a collect that did not finish",
          r.returncode == 1 and "collect that did not finish" in r.stderr, r.stderr)
    r = judged(scratch, "old-schema", lambda raw: edit_manifest(raw, lambda m: m.update(schema=1)))
    check("refused: a manifest of another schema", r.returncode == 1 and "schema 1" in r.stderr, r.stderr)
    r = judged(scratch, "no-manifest", lambda raw: os.remove(os.path.join(raw, "manifest.json")))
    check("refused: raw/ without a manifest", r.returncode == 1 and "no guest results" in r.stderr, r.stderr)
    r = judged(scratch, "other-cmdline", lambda raw: edit(raw, "iommu", lambda t: t.replace(
        " intel_iommu=on\n", "\n", 1)))
    check("refused: a guest whose kernel command line lacks what the manifest says it was given",
          r.returncode == 1 and "iommu: the kernel booted without intel_iommu=on" in r.stderr, r.stderr)


def bench_of_other_builds(scratch, base):
    """render takes make bench's bench.md only from the run's kernel and build."""
    folder = os.path.join(scratch, "bench-part")
    os.makedirs(folder)
    with open(os.path.join(folder, "bench.md"), "w") as f:
        f.write("## Benchmarks (`make bench`)\n")
    res = copy.deepcopy(base)
    kernel = res["kernel"]
    ident = res["build"]
    ident["qemu"]["sha256"] = "q" * 64
    ident["kernels"][kernel]["bzimage"]["sha256"] = "b" * 64
    ident["kernels"][kernel]["initramfs"]["sha256"] = "i" * 64

    def bench_part(**bench):
        path = os.path.join(folder, "bench-manifest.json")
        if bench:
            with open(path, "w") as f:
                json.dump(dict({"kernel": kernel, "build": copy.deepcopy(ident)}, **bench), f)
        elif os.path.exists(path):
            os.remove(path)
        return render.bench_part(res, folder)
    md, why = bench_part(kernel=kernel)
    check("bench.md of the run's kernel and build: taken into report.md", md and why is None, why)
    md, why = bench_part(kernel=next(k for k in table.KERNELS if k != kernel))
    check("bench.md of another kernel: left out, saying so", md is None and "left out" in why, why)
    other = copy.deepcopy(ident)
    other["kernels"][kernel]["bzimage"]["sha256"] = "c" * 64
    md, why = bench_part(kernel=kernel, build=other)
    check("bench.md of another bzImage: left out, saying so", md is None and "left out" in why, why)
    md, why = bench_part()
    check("bench.md without bench-manifest.json: left out, saying so", md is None and "bench-manifest.json" in why,
          why)


def earlier_run_removed(scratch):
    """collect deletes raw/ and every file made from an earlier run, and
    nothing else, before its first boot."""
    report = os.path.join(scratch, "earlier-run")
    raw = os.path.join(report, "raw")
    os.makedirs(raw)
    derived = ["results.json", "report.md", "table.txt", "throughput.png", "throughput.dat", "memmap-today.png",
               "memmap-today.dat", "bench.md", "bench.json", "bench-manifest.json"]
    for name in derived + ["notes.txt", "raw/today.out", "raw/manifest.json"]:
        with open(os.path.join(report, name), "w") as f:
            f.write("earlier\n")
    collect.remove_earlier_run(report, raw)
    left = sorted(os.listdir(report)) + ["raw/" + f for f in os.listdir(raw)]
    check("collect: deletes raw/ and results.json, report.md, the figures and bench.md of an earlier run, and"
          " nothing else", left == ["notes.txt", "raw"], left)


# A stand-in for scripts/run-guest that plays the recorded run back: the
# boot's output on stdout, its status file where --status says, and what it
# was asked (arguments, guest command, DMA32_KERNEL) in a .asked file.
PLAYBACK = """#!/usr/bin/env python3
import json, os, shutil, sys
args = sys.argv[1:]
status = args[args.index("--status") + 1]
name = os.path.basename(status)[:-len(".status.json")]
recorded = os.environ["DEMO_PLAYBACK"]
with open(os.path.join(recorded, name + ".out")) as f:
    sys.stdout.write(f.read())
shutil.copy(os.path.join(recorded, name + ".status.json"), status)
with open(status[:-len(".status.json")] + ".asked", "w") as f:
    json.dump({"argv": args, "kernel": os.environ.get("DMA32_KERNEL")}, f)
"""


def collect_round_trip(scratch):
    """collect, with run-guest standing in for the recorded run, writes a
    manifest judge takes as it is: the recorded commands, what run-guest
    was given, the versions and the build's identity."""
    top, build, report = (os.path.join(scratch, "playback", d) for d in ("top", "build", "report"))
    os.makedirs(os.path.join(top, "scripts"))
    with open(os.path.join(top, "scripts", "run-guest"), "w") as f:
        f.write(PLAYBACK)
    os.chmod(os.path.join(top, "scripts", "run-guest"), 0o755)
    kernel = MANIFEST["kernel"]
    files = identity.kernel_files(build, kernel, table.DEFAULT_KERNEL)
    files["qemu"] = os.path.join(build, "qemu", "build", "qemu-system-x86_64")
    for what, path in files.items():
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("a stand-in %s\n" % what)
    with open(os.path.join(build, "versions.txt"), "w") as f:
        f.write("linux-source-%s\t1.2.3\n" % kernel)
    os.makedirs(report)
    with open(os.path.join(report, "results.json"), "w") as f:
        f.write("{}\n")
    only = "^(%s)$" % "|".join(re.escape(s["name"]) for s in MANIFEST["scenarios"] if s["boot"] == "today")
    env = dict(os.environ, DMA32_TOP=top, DMA32_BUILD=build, DEMO_PLAYBACK=FIXTURE, PYTHONDONTWRITEBYTECODE="1")
    env.pop("DMA32_QEMU", None)
    r = subprocess.run([sys.executable, "-m", "demo", "collect", "--report", report, "--kernel-version", kernel,
                        "--only", only], cwd=TOP, env=env, capture_output=True, text=True)
    check("collect with a stand-in run-guest: runs, one progress line per scenario",
          r.returncode == 0 and r.stdout.count(" as expected: ") == only.count("|") + 1, r.stdout[-300:] + r.stderr)
    if r.returncode != 0:
        return
    check("collect: deleted the earlier run's results.json before its first boot",
          not os.path.exists(os.path.join(report, "results.json")), os.listdir(report))
    with open(os.path.join(report, "raw", "manifest.json")) as f:
        m = json.load(f)
    recorded = MANIFEST["boots"]["today"]["runs"][0]
    ran = m["boots"]["today"]["runs"][0]
    with open(os.path.join(report, "raw", "today.asked")) as f:
        asked = json.load(f)
    given = ran["argv"] + ["--status", os.path.join(report, "raw", "today.status.json"), "--run", ran["command"]]
    check("collect: the manifest keeps the exact guest command and arguments run-guest was given (the recorded"
          " ones), and DMA32_KERNEL",
          ran["command"] == recorded["command"] and ran["argv"] == recorded["argv"] and asked["argv"] == given
          and asked["kernel"] == kernel, (asked["kernel"], ran["argv"]))
    k = m["build"]["kernels"][kernel]
    want = [identity.file_identity(files[f])["sha256"] for f in ("bzimage", "initramfs", "qemu")]
    check("collect: the manifest carries the versions as of the run and the build's identity",
          m["versions"] == {"linux-source-%s" % kernel: "1.2.3"} and [k["bzimage"]["sha256"], k["initramfs"]["sha256"],
                                                                      m["build"]["qemu"]["sha256"]] == want
          and ran["proc_version"] == k["proc_version"] == recorded["proc_version"] and ran["proc_version"]
          and "git_describe" in m["build"], (m["versions"], k))
    r = demo(report, "judge", "--kernel-version", kernel)
    with open(os.path.join(report, "results.json")) as f:
        res = json.load(f) if r.returncode == 0 else {}
    check("collect then judge: the played-back run is judged as recorded, its versions and build carried over",
          r.returncode == 0 and [x["as_expected"] for x in res["scenarios"]] == [True] * (only.count("|") + 1)
          and res["versions"] == m["versions"] and res["build"] == m["build"] and "generated" not in res, r.stderr)


def rec(res, name):
    return next(r for r in res["scenarios"] if r["name"] == name)


def set_status(raw, run, **changes):
    """Change run-guest's outcome for one boot run, in its status file and
    in the manifest, as a run that ended so would have written both; no
    changes: run-guest wrote no status at all."""
    path = os.path.join(raw, "manifest.json")
    with open(path) as f:
        m = json.load(f)
    entry = next(r for b in m["boots"].values() for r in b["runs"] if r["name"] == run)
    if changes:
        entry["status"].update(changes)
        with open(os.path.join(raw, run + ".status.json"), "w") as f:
            json.dump(entry["status"], f)
    else:
        entry["status"] = None
        os.remove(os.path.join(raw, run + ".status.json"))
    with open(path, "w") as f:
        json.dump(m, f)


def edit_manifest(raw, fn):
    path = os.path.join(raw, "manifest.json")
    with open(path) as f:
        m = json.load(f)
    fn(m)
    with open(path, "w") as f:
        json.dump(m, f)


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


PAGE_SHIFT = 12


def tally(runs, zones):
    """From address runs alone: pages, pages above 4 GiB, pages per zone
    (by the boot's zone spans), bounced runs and their pages."""
    t = {"pages": 0, "above": 0, "zones": {}, "bounced": 0, "bounced_pages": 0}
    for r in runs:
        if r["reserved"]:   # the truncation-alias window: not pages
            continue
        for pfn in range(r["phys"] >> PAGE_SHIFT, (r["phys"] >> PAGE_SHIFT) + r["pages"]):
            z = next((n for n, d in zones.items() if d.get("spanned") and d.get("start_pfn") is not None
                      and d["start_pfn"] <= pfn < d["start_pfn"] + d["spanned"]), "other")
            t["zones"][z] = t["zones"].get(z, 0) + 1
        t["pages"] += r["pages"]
        t["above"] += sum(1 for p in range(r["pages"]) if (r["phys"] >> PAGE_SHIFT) + p >= 1 << 20)
        if r["bounced"]:
            t["bounced"] += 1
            t["bounced_pages"] += r["pages"]
    return t


def check_runs(res):
    """The address runs of every scenario against the driver's counts."""
    recs = [r for r in res["scenarios"] if r["guest_ok"]]
    check("recorded run: every scenario has its ring's and its buffers' address runs",
          recs and all(r["runs"] is not None and any(x["kind"] == "ring" for x in r["device_runs"])
                       for r in recs),
          [r["name"] for r in recs if r["runs"] is None or not r["device_runs"]])
    check("recorded run: no scenario dropped a run",
          all(r["runs_dropped"] == 0 for r in recs), [(r["name"], r["runs_dropped"]) for r in recs])
    bad = {k: [] for k in ("pages", "above", "dma", "zones", "bounced", "bytes", "slots")}
    counts = []
    for r in recs:
        boot = res["boots"][r["boot"]]
        t = tally(r["runs"] or [], boot["zones"])
        counts.append("%s %d" % (r["name"], len(r["runs"] or [])))
        if t["pages"] != r["pages"]:
            bad["pages"].append((r["name"], t["pages"], r["pages"]))
        if t["above"] != r["pages_above_4g"]:
            bad["above"].append((r["name"], t["above"], r["pages_above_4g"]))
        if t["zones"].get("DMA", 0) != r["zone_dma_pages_used"]:
            bad["dma"].append((r["name"], t["zones"].get("DMA", 0), r["zone_dma_pages_used"]))
        if any(t["zones"].get(z, 0) != n for z, n in r["zone_pages"].items()):
            bad["zones"].append((r["name"], t["zones"], r["zone_pages"]))
        if (t["bounced"] > 0) != (r["driver_bounced"] > 0) or t["bounced"] > r["driver_bounced"]:
            bad["bounced"].append((r["name"], t["bounced"], r["driver_bounced"]))
        if r["size"] % (1 << PAGE_SHIFT) == 0 and t["bounced_pages"] << PAGE_SHIFT != r["driver_bounced_bytes"]:
            bad["bytes"].append((r["name"], t["bounced_pages"] << PAGE_SHIFT, r["driver_bounced_bytes"]))
        dev = boot.get("device") or {}
        slots = [x for x in r["runs"] or [] if x["bounced"]
                 and not dev.get("swiotlb_start", 0) <= x["dma"] < dev.get("swiotlb_end", 0)]
        if slots:
            bad["slots"].append((r["name"], len(slots)))
    diag = "; ".join(counts)
    check("address runs: their pages add up to the driver's pages in every scenario (%s)" % diag,
          not bad["pages"], bad["pages"])
    check("address runs: their pages above 4 GiB equal the driver's count in every scenario",
          not bad["above"], bad["above"])
    check("address runs: their ZONE_DMA pages (by the boot's zone spans) equal the driver's count",
          not bad["dma"], bad["dma"])
    check("address runs: their pages per zone equal the driver's page_zonenum() counts", not bad["zones"],
          bad["zones"])
    check("address runs: bounced runs exactly where the driver counted bounced mappings, no more of them",
          not bad["bounced"], bad["bounced"])
    check("address runs: bounced runs cover exactly the driver's bounced bytes (page-multiple sizes)",
          not bad["bytes"], bad["bytes"])
    check("address runs: every bounced run's DMA address lies in the swiotlb pool", not bad["slots"], bad["slots"])
    check("address runs: the judge finds no disagreement either",
          all(r["runs_disagree"] == [] for r in recs), [(r["name"], r["runs_disagree"]) for r in recs])


def section(md, heading):
    """The text under HEADING, up to the next heading of its level or above."""
    level = heading.split()[0]
    body = md.split(heading, 1)[1] if heading in md else ""
    return re.split(r"\n#{1,%d} " % len(level), body, maxsplit=1)[0]


def table_rows(text, header_start):
    """The header and body rows of the first markdown table whose header
    line starts with HEADER_START."""
    lines = text.splitlines()
    at = next((i for i, l in enumerate(lines) if l.startswith(header_start)), None)
    if at is None:
        return None, []
    body = []
    for l in lines[at + 2:]:
        if not l.startswith("|"):
            break
        body.append(l)
    return lines[at], body


def check_layout(res, md):
    """The report's order: six before/after lines, the claims table, the
    narrow tables by topic with "How to read it" right after them, four
    memory maps in the body and the rest, the wide table and the other
    kernel in appendices."""
    first = section(md, "## What the zone buys")
    lines = [l for l in first.splitlines() if l.startswith("* **")]
    many_b, gart_b = rec(res, "many-before-streaming"), rec(res, "gart-before-streaming")
    dma, pool = table.bound_holdings(many_b, res["boots"]["many-before"])
    mbps = res["sweep"]["mbps"]
    want = ["[%d of ZONE_DMA's" % dma, "[%.1f of the 64 MiB swiotlb pool" % (pool / 1048576.0),
            "[%.1f of the 64 MiB aperture" % (gart_b["gart_coherent"] * 4096 / 1048576.0),
            "[%.0f MB/s]" % mbps["streaming"][str(1 << 20)]["median"],
            "[%.0f MB/s]" % mbps["streaming-dma32"][str(1 << 20)]["median"],
            "(#row-before-coherent-64m)", "[ENOMEM after %s MiB]" % table.request_mib(
                rec(res, "nozone-coherent-64M")), "(2.6.14: once)", "this run; varies"]
    # As a reader sees it: links shown as their text, 100 columns
    plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", first)
    wrapped = sum(len(textwrap.wrap(l, 100)) or 1 for l in plain.strip().splitlines())
    anchors = set(re.findall(r'<a id="([^"]+)"></a>', md))
    targets = re.findall(r"\]\(#([^)]+)\)", first)
    unlinked = re.sub(r"\[[^\]]*\]\([^)]*\)", "", " ".join(lines))
    unlinked = re.sub(r"2\.6\.1[45]|2005|\d+ GiB|\d+-bit|1 MiB buffers|dma32=off|of \d+ boots|\*\*[^*]*\*\*|\w*DMA32",
                      "",
                      unlinked)
    check("first screen: six lines led by the eight aged devices, at most 25 lines of 100 columns, before the"
          " claims", len(lines) == 6 and "Eight aged devices" in lines[0] and "K8 GART" in lines[1]
          and "needs no zone" in lines[4] and "depends on the zone" in lines[5] and wrapped <= 25
          and all(w in first for w in want) and md.index("## What the zone buys") < md.index("## The claims"),
          (len(lines), wrapped, [w for w in want if w not in first]))
    check("first screen: every number is a link to its row (or to the sweep), and every link lands",
          not re.findall(r"\d", unlinked) and targets and "\n## Throughput by strategy\n" in md
          and all(t in anchors or t == "throughput-by-strategy" for t in targets),
          (re.findall(r"[^ ]*\d[^ ]*", unlinked), [t for t in targets if t not in anchors]))
    head, body = table_rows(section(md, "## The claims"), "| claim |")
    check("claims table: claim | before | after | caveat | rows, one row per claim",
          head == "| claim | before | after | caveat | rows |" and len(body) == len(res["claims"])
          and all(c["claim"].replace("|", "/") in "\n".join(body) for c in res["claims"]), (head, len(body)))
    long_cells = [(c["id"], part, n) for c in res["claims"] for part in ("before", "after", "caveat")
                  for n in [len(re.sub(r"`[a-z0-9@.-]+`", "`r`", c[part]))] if n > render.CLAIM_CELL_CHARS]
    check("claims table: short statements, no cell over %d characters besides its row names"
          % render.CLAIM_CELL_CHARS, not long_cells, long_cells)
    context_cells = [l for l in body if "- (context row: no before/after)" in l]
    check("claims table: a claim of context rows says it has no before/after", len(context_cells) >= 2,
          len(context_cells))
    check("claims table: the before/after pairs follow it",
          all("`%s` / `%s`" % (b, a) in section(md, "## The claims") for b, a in table.PAIRS), "")
    topics = section(md, "## The rows by topic")
    missing, unitless, failures = [], [], []
    for title, cols in render.TOPICS:
        head, body = table_rows(section(topics, "### %s\n" % title), "| scenario |")
        if head is None:
            missing.append(title)
            continue
        unitless += [h for h, _ in cols[2:-1] if "(" not in h and (h, _) != render.MUST_SHOW]
        failures += [l for l in body if "NOT" in l.rsplit("|", 2)[0]]
    check("topic tables: one per topic, units in every figure's header, failures only in the verdict",
          not missing and not unitless and not failures, (missing, unitless, failures))
    many, gart = section(topics, "### Many devices\n"), section(topics, "### The K8 GART\n")
    names = {r["name"] for r in res["scenarios"]}

    def controls_said(text, pair):
        model, nozone = table.CONTROLS[pair]
        if model in names and nozone in names:
            return "`%s` / `%s`: controls: `%s`" % (pair + (model,)) in text and "`%s`" % nozone in text
        return "`%s` / `%s`: control rows not in this run" % pair in text
    check("topic tables: the two-setting pairs' controls (or that they did not run), asymmetric aging and tuned"
          " load under their tables",
          controls_said(many, ("many-before-streaming", "many-after-streaming")) and "below 4 GiB" in many
          and "raised until" in gart and controls_said(gart, ("gart-before-streaming", "gart-after-streaming")),
          (many[-400:], gart[-400:]))
    shown = [r["name"] for r in res["scenarios"] if not r.get("repeats_row")]
    check("topic tables: every row of this kernel in exactly one, with its anchor", all(
        topics.count('<a id="%s"></a>`%s` |' % (render.anchor(n), n)) == 1 for n in shown),
        [n for n in shown if topics.count('<a id="%s"></a>`%s` |' % (render.anchor(n), n)) != 1])
    check("how to read it: right after the topic tables, and the bounce counts' bounds as the definitions say",
          md.index("## The rows by topic") < md.index("## How to read it") < md.index("## Where the memory was")
          and "must agree" not in md and "<= *swiotlb bounced* <=" in md, "")
    body_maps = re.findall(r"\n### (\S+)\n", section(md, "## Where the memory was"))
    appendix = re.findall(r"\n### (\S+)\n", section(md, "## Appendix: the other memory maps"))
    check("memory maps: four in the body (before, today, many-before, gart-before), the rest in the appendix",
          sorted(body_maps) == sorted(["before", "today", "many-before", "gart-before"])
          and sorted(body_maps + appendix) == sorted(res["boots"]), (body_maps, len(appendix)))
    check("appendices: the whole table and the other kernel come after the body",
          md.index("# Appendices") < md.index("## Appendix: the whole table")
          and md.index("# Appendices") < md.index("## Appendix: both guest kernels"), "")


def check_figures(res, report, md):
    """One memory-map figure per boot, written and shown after its table."""
    boots = [b for b, v in res["boots"].items() if v.get("zones")]
    missing, small, placed = [], [], []
    for b in boots:
        path = os.path.join(report, "memmap-%s.png" % b)
        if not os.path.exists(path):
            missing.append(b)
            continue
        with open(path, "rb") as f:
            head = f.read(8)
        if head != b"\x89PNG\r\n\x1a\n" or os.path.getsize(path) < 10000:
            small.append((b, os.path.getsize(path)))
        sec = md.find("### %s\n" % b)
        tab = md.find("| `", sec)
        img = md.find("](memmap-%s.png)" % b)
        nxt = md.find("\n### ", sec + 1)
        if not (0 <= sec < tab < img and (nxt < 0 or img < nxt)):
            placed.append(b)
    sizes = ", ".join("%s %d KiB" % (b, os.path.getsize(os.path.join(report, "memmap-%s.png" % b)) >> 10)
                      for b in boots if b not in missing)
    check("memory maps: one PNG per boot (%s)" % sizes, boots and not missing and not small, (missing, small))
    check("memory maps: report.md shows each after its boot's table", boots and not placed, placed)


def bytecode_folders():
    """The __pycache__ folders under demo/."""
    return sorted(os.path.relpath(d, TOP) for d, _, _ in os.walk(os.path.join(TOP, "demo"))
                  if os.path.basename(d) == "__pycache__")


def main():
    scratch = tempfile.mkdtemp(prefix="demo-report-")
    before = bytecode_folders()
    try:
        run_all(scratch)
    finally:
        shutil.rmtree(scratch)
    new = sorted(set(bytecode_folders()) - set(before))
    check("nothing written outside the scratch folder: no __pycache__ under demo/ from python3 -m demo", not new, new)
    return ktap.emit(results, width=300)


def run_all(scratch):
    # The recorded run as it is.
    res, verdict, md = prepare(scratch, "as-recorded", rendered=True)
    check("recorded run: judged and rendered", res is not None, verdict.stderr)
    if res is None:
        return
    base, base_md = res, md
    check_runs(res)
    check_figures(res, os.path.join(scratch, "as-recorded"), md)
    check_layout(res, md)
    names = [r["name"] for r in res["scenarios"]]
    check("recorded run: one record per scenario run, in the manifest's order",
          names == [s["name"] for s in MANIFEST["scenarios"]], names)
    check("recorded run: results.json carries the schema version and the run's kernel",
          res.get("schema") == judge.SCHEMA == MANIFEST["schema"] and res.get("kernel") == MANIFEST["kernel"],
          (res.get("schema"), res.get("kernel")))
    fields = ("machine", "mem", "shuffle", "kind", "swiotlb_bounced", "driver_bounced", "as_expected",
              "zone_dma_free_before", "zone_dma_free_after")
    missing = [(r["name"], k) for r in res["scenarios"] for k in fields if k not in r]
    check("recorded run: every record has the boot's conditions, counters and verdict", not missing, missing)
    bad_counts = [r["name"] for r in res["scenarios"] if r["guest_ok"] and r["swiotlb_bounced"] is not None
                  and r["driver_bounced"] is not None and r["swiotlb_bounced"] != r["driver_bounced"]]
    check("recorded run: the kernel's bounce count equals the driver's in every row", not bad_counts, bad_counts)
    pinned = golden.load_golden()
    diff = golden.mismatches(res, pinned)
    check("recorded run: every row's verdict and key figures, every claim's numbers, as in the golden list",
          not diff, "; ".join(diff[:5]))
    unchosen = golden.unchosen_failures(pinned["rows"])
    check("golden list: every pinned row is as expected and its guest ran, or EXPECTED_FAILURES says why not",
          not unchosen, unchosen)
    want = 0 if all(r["as_expected"] and r["guest_ok"] for r in pinned["rows"].values()) else 1
    check("recorded run: verdict's exit status is the golden list's (%d)" % want, verdict.returncode == want,
          "exit %d, summary %s" % (verdict.returncode, res["summary"]))
    rows = [l for l in verdict.stdout.splitlines() if l.split()[:1] and l.split()[0] in names]
    check("recorded run: the printed table has a row per scenario", len(rows) == len(names), verdict.stdout)
    check("recorded run: report.md quotes every claim that has numbers",
          all(c["claim"] in md for c in res["claims"]) and len(res["claims"]) == len(pinned["claims"]),
          (len(res["claims"]), len(pinned["claims"])))
    check("recorded run: report.md states machine and memory layout per scenario",
          "`-M q35 -m 6G` (2 GiB below 4 GiB)" in md and "`-M pc -m 6G` (3 GiB below 4 GiB)" in md, "")
    guarantees = [r["name"] for r in res["scenarios"] if r["kind"] == "guarantee"]
    check("recorded run: DMA-API guarantees are labelled apart from the claims",
          guarantees and all(re.search(r"\b%s\b.*\bguarantee\b" % re.escape(g), verdict.stdout) for g in guarantees),
          guarantees)

    # A guest that timed out: its scenarios fail with run-guest's reason.
    def timeout(raw):
        set_status(raw, "nodma32", outcome="timeout", exit=124, message="guest timed out after 180s")
    res, verdict, _ = prepare(scratch, "timeout", timeout, rendered=True)
    nod = [r for r in res["scenarios"] if r["boot"] == "nodma32"]
    check("a timed-out guest: its rows say why, from the status file",
          nod and all(not r["guest_ok"] and r["guest_error"] == "guest timed out after 180s" for r in nod),
          [(r["name"], r["guest_error"]) for r in nod])
    check("a timed-out guest: the other boots' rows are unaffected",
          all(r["guest_ok"] for r in res["scenarios"] if r["boot"] != "nodma32"), "")
    check("a timed-out guest: verdict prints it and exits 1",
          verdict.returncode == 1 and "nodma32-coherent: guest failed: guest timed out after 180s" in verdict.stdout,
          "exit %d: %s" % (verdict.returncode, verdict.stdout[-400:]))

    # The headline rows on the other kernel, side by side.
    again = [r for r in base["scenarios"] if r.get("repeats_row")]
    check("both kernels: the repeated headline rows ran on 6.12, each next to its 6.1 row",
          again and all(r["kernel"] == "6.12" and rec(base, r["repeats_row"])["kernel"] == "6.1" for r in again),
          [(r["name"], r["kernel"]) for r in again])
    sect = section(base_md, "## Appendix: both guest kernels")
    check("both kernels: report.md has a side-by-side row per repeated headline row and the pools of both",
          all("| `%s` |" % r["repeats_row"] in sect for r in again) and "Linux 6.12: swiotlb pool" in sect
          and "%d of %d headline rows are as expected on both kernels" % (len(again), len(again)) in sect, sect[-600:])

    # Shuffled boots run three times: min <= median <= max, and the row is
    # as expected only when every boot was.
    reps = [r for r in base["scenarios"] if r["boot"] in ("nodma32", "bits31", "bits31-2g")]
    check("repeated boots: each shuffled row has 3 boots and min <= median <= max for every figure",
          reps and all(r["repeats"] == 3 and len(r["per_boot"]) == 3 and
                       all(r["min"][k] <= r["median"][k] <= r["max"][k] for k in r["median"]) for r in reps),
          [(r["name"], r.get("repeats")) for r in reps])
    res, verdict, _ = prepare(scratch, "repeat-fails", lambda raw: edit(
        raw, "bits31~3", lambda t: t.replace("@@done", "")))
    r = rec(res, "bits31-coherent")
    check("repeated boots: one boot that failed fails the row, naming the boot",
          r["as_expected"] is False and r["per_boot"][2]["as_expected"] is False and not r["guest_ok"]
          and "boot 3" in r["showed"] and verdict.returncode == 1, r["showed"])

    # A boot outside the median that breaks a column's definition: swiotlb
    # copied 4 bytes per byte requested (more than its 2) on that boot alone.
    median = rec(base, "nodma32-streaming")["median_boot"]
    other = next(k for k in (1, 2, 3) if k != median)
    run_name = "nodma32" if other == 1 else "nodma32~%d" % other

    def copies_on_one_boot(raw):
        def f(d):
            c = d["counters"][table.COUNTERS["swiotlb_bounced_bytes_sync"]]
            c["after"] = c["before"] + 4 * d["bytes"]
        edit_run_json(raw, run_name, "nodma32-streaming", f)
    res, verdict, _ = prepare(scratch, "definition-off-median", copies_on_one_boot)
    r = rec(res, "nodma32-streaming")
    check("repeated boots: boot %d of 3, not the median (%d), breaking a definition fails the row, naming the"
          " boot" % (other, median), r["as_expected"] is False and r["median_boot"] == median
          and r["per_boot"][other - 1]["definitions_broken"] and not r["per_boot"][median - 1]["definitions_broken"]
          and any(d.startswith("boot %d: copied/B" % other) for d in r["definitions_broken"])
          and "NOT as expected on boot %d" % other in r["showed"] and verdict.returncode == 1,
          (r["definitions_broken"], r["showed"][:200]))

    # No status file at all (run-guest died before it could write one).
    res, verdict, _ = prepare(scratch, "no-status", lambda raw: set_status(raw, "ring32"))
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
    res, verdict, md = prepare(scratch, "not-expected", bounce_mismatch, rendered=True)
    r = rec(res, "dma32-streaming")
    check("kernel and driver disagree on bounces: not as expected",
          r["as_expected"] is False and r["swiotlb_bounced"] != r["driver_bounced"], r["showed"])
    check("not as expected: verdict names it and exits 1",
          verdict.returncode == 1 and "NOT as expected: dma32-streaming" in verdict.stdout, verdict.stdout[-300:])
    check("not as expected: report.md marks the row", "**NOT AS EXPECTED**" in md, "")
    rows = {x["name"]: x for x in res["scenarios"]}
    refused = golden.unchosen_failures(rows)
    golden.EXPECTED_FAILURES["dma32-streaming"] = "a probe: the kernel's count one over the driver's"
    try:
        chosen = golden.unchosen_failures(rows)
    finally:
        del golden.EXPECTED_FAILURES["dma32-streaming"]
    check("golden --update: refuses a run with a row not as expected, unless EXPECTED_FAILURES names it with a"
          " reason", [x.split(":")[0] for x in refused] == ["dma32-streaming"] and chosen == [], (refused, chosen))

    # Address runs that disagree with the counters: a buffer's run moved
    # above 4 GiB, which the driver did not count.
    def moved_run(raw):
        def f(d):
            d["runs"][0]["phys"] = hex(int(d["runs"][0]["phys"], 16) + (8 << 30))
        edit_run_json(raw, "today", "dma32-coherent", f)
    res, verdict, _ = prepare(scratch, "moved-run", moved_run)
    r = rec(res, "dma32-coherent")
    check("address runs that disagree with the counters: not as expected, saying so",
          r["as_expected"] is False and "address runs disagree" in r["showed"] and verdict.returncode == 1,
          r["showed"])

    # A driver (or dma32ctl) without address runs: null, no figure, no crash.
    def no_runs(raw):
        def drop(t):
            out = []
            for line in t.splitlines():
                if line.startswith("{") and '"runs"' in line:
                    d = json.loads(line)
                    for k in ("ring", "ctrl", "runs", "runs_dropped"):
                        d.pop(k, None)
                    line = json.dumps(d)
                out.append(line)
            return "\n".join(out) + "\n"
        for boot in [f[:-4] for f in os.listdir(raw) if f.endswith(".out")]:
            edit(raw, boot, drop)
    res, verdict, md = prepare(scratch, "no-runs", no_runs, rendered=True)
    r = rec(res, "dma32-streaming")
    check("no address runs: null in results.json, the row judged as before",
          r["runs"] is None and r["runs_disagree"] is None and r["as_expected"] == rec(
              base, "dma32-streaming")["as_expected"], (r["runs"], r["showed"]))
    check("no address runs: report.md says there is no figure",
          "(no figure: no address runs in the results)" in md and not os.path.exists(
              os.path.join(scratch, "no-runs", "memmap-today.png")), md[-300:])

    # A kernel without the counters (no kernel-patches): n/a, never 0.
    def no_counters(raw):
        for boot in [f[:-4] for f in os.listdir(raw) if f.endswith(".out")]:
            def f(t):
                t = re.sub(r'"(/sys/kernel/debug/[^"]+)": \{"before": \d+, "after": \d+\}',
                           r'"\1": {"before": null, "after": null}', t)
                return re.sub(r'"(/sys/kernel/debug/[^"]+)":\{"before":\d+,"after":\d+\}',
                              r'"\1":{"before":null,"after":null}', t)
            edit(raw, boot, f)
    res, verdict, _ = prepare(scratch, "no-counters", no_counters, rendered=True)
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

    # Address runs that do not parse: the row fails, saying so.
    def malformed_runs(raw):
        def f(d):
            d["runs"][0]["pages"] = "many"
        edit_run_json(raw, "today", "dma32-coherent", f)
    res, verdict, _ = prepare(scratch, "malformed-runs", malformed_runs)
    r = rec(res, "dma32-coherent")
    check("malformed address runs: not as expected, saying so",
          r["as_expected"] is False and "malformed address runs" in r["showed"] and verdict.returncode == 1,
          r["showed"])

    refusals(scratch)
    bench_of_other_builds(scratch, base)
    earlier_run_removed(scratch)
    collect_round_trip(scratch)

    # Bad usage: one line, exit 2 / 1.
    r = demo(os.path.join(scratch, "empty"), "judge")
    check("judge without guest results: one line, exit 1",
          r.returncode == 1 and r.stderr.strip().count("\n") == 0 and "has no guest results" in r.stderr, r.stderr)
    r = demo(os.path.join(scratch, "empty"), "collect", "--only", "[")
    check("a bad --only regex: one line, exit 1",
          r.returncode == 1 and "not a valid regular expression" in r.stderr, r.stderr)


if __name__ == "__main__":
    sys.exit(main())
