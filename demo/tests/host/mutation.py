#!/usr/bin/env python3
"""Mutation test of the demo's verdicts: each piece of the judging is forced
wrong, one at a time, and some test must then fail. The pieces: every check
(each ex_* function in demo/expect.py, found by name, so new ones are
covered without a change here), every claim (table.CLAIMS), every column's
definition (table.DEFINITIONS), judge.runs_disagree, judge.layout_ok and
table.apply_definitions. The tests that must notice:

  the golden list  the recorded run judged with the mutant must differ
                   from demo/tests/golden.py's list (what a mutant that
                   fails good rows, or changes a claim's numbers, breaks);
  the probes       the recorded run altered as a misbehaving kernel or
                   driver would leave it (PROBES), each making one row not
                   as expected: judged with the mutant, a probe's rows
                   must not change verdict or what they showed;
  checks.py        its misbehaving records, each of which a check or a
                   definition must fail.

A mutant that all of them let through is a piece of judging no test pins:
not ok. A check that no scenario of the recorded run uses cannot be pinned
by it: skipped, saying so, until a recording with its boot is in the
fixture. KTAP; no guest.
"""
import copy
import dataclasses
import importlib.util
import json
import os
import re
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, TOP)
sys.dont_write_bytecode = True
from demo.tests import ktap  # noqa: E402
from demo.tests import golden  # noqa: E402

with open(os.path.join(golden.FIXTURE, "manifest.json")) as _f:
    MANIFEST = json.load(_f)
from demo import judge, table  # noqa: E402

TABLE = table.for_kernel(MANIFEST["kernel"])
_spec = importlib.util.spec_from_file_location("demo_checks", os.path.join(os.path.dirname(__file__), "checks.py"))
checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(checks)

results = []


def result(ok, desc, directive=""):
    results.append((ok, desc, directive))


def negated(fn):
    def wrong(rec, info):
        ok, txt = fn(rec, info)
        return not ok, txt
    wrong.__name__ = fn.__name__
    return wrong


def bumped(fn):
    """The claim with every number it quotes changed; made-up numbers where
    it had none."""
    def bump(text):
        return re.sub(r"\d+", lambda m: str(int(m.group()) + 1), text)

    def wrong(rec, infos, best):
        parts = fn(rec, infos, best)
        if parts is None:
            made_up = "forced: 1 number without the rows it needs"
            return table.ClaimParts(made_up, made_up, made_up)
        return table.ClaimParts(*(bump(p) for p in parts))
    wrong.__name__ = fn.__name__
    return wrong


# --- probes: the recorded run as a misbehaving kernel or driver leaves it ----

def result_of(run, boot_run, scenario):
    """dma32ctl's JSON result of SCENARIO on BOOT_RUN, in a loaded run."""
    return run.boots[boot_run].runs[scenario]["result"]


def moved_address_run(run):
    """A buffer's address run 8 GiB higher than the driver counted it."""
    r = result_of(run, "today", "dma32-coherent")["runs"][0]
    r["phys"] = hex(int(r["phys"], 16) + (8 << 30))
    return ["dma32-coherent"]


def zone_not_at_2g(run):
    """dma32=2G honoured nowhere: ZONE_DMA32 runs 1000 pages past 2 GiB."""
    run.boots["dma32-2g"].info["zones"]["DMA32"]["spanned"] += 1000
    return [s["name"] for s in MANIFEST["scenarios"] if s["boot"] == "dma32-2g"]


def copies_off_median(run):
    """Boot 2 or 3 of nodma32-streaming, not the median, copying 4 bytes
    per byte requested (a definition breaks; its check holds)."""
    base = judge.evaluate(run, judge.judging_of(TABLE), TABLE.claims)
    median = next(r for r in base["scenarios"] if r["name"] == "nodma32-streaming")["median_boot"]
    other = next(k for k in (2, 3) if k != median)
    res = result_of(run, "nodma32~%d" % other, "nodma32-streaming")
    c = res["counters"][table.COUNTERS["swiotlb_bounced_bytes_sync"]]
    c["after"] = c["before"] + 4 * res["bytes"]
    return ["nodma32-streaming"]


PROBES = [("an address run the driver did not count", moved_address_run),
          ("a kernel that ignored dma32=2G", zone_not_at_2g),
          ("a boot outside the median breaking a definition", copies_off_median)]


def verdicts(res, names):
    """What the probed rows came to: verdict, what they showed, broken definitions."""
    return {r["name"]: (r["as_expected"], r["showed"], r.get("definitions_broken") or [])
            for r in res["scenarios"] if r["name"] in names}


def probed(run):
    """[(description, altered run, its rows)] for every probe."""
    out = []
    for desc, probe in PROBES:
        altered = copy.deepcopy(run)
        out.append((desc, altered, probe(altered)))
    return out


class Suite:
    """The tests a mutant must fail: the golden list, the probes' verdicts
    as the unmutated judge gives them, and checks.py's cases."""

    def __init__(self, run):
        self.run, self.want = run, golden.load_golden()
        self.probes = probed(run)
        self.base = self.judged(run)
        self.probe_verdicts = [verdicts(self.judged(altered), names) for _, altered, names in self.probes]

    @staticmethod
    def judged(run, judging=None, claims=None):
        return judge.evaluate(run, judging or judge.judging_of(TABLE), claims or TABLE.claims)

    def catches(self, judging=None, claims=None):
        """Why the current (mutated) judging fails a test; None when none fails."""
        res = self.judged(self.run, judging, claims)
        diff = golden.mismatches(res, self.want)
        if diff:
            return "the golden list: %s" % diff[0]
        for (desc, altered, names), want in zip(self.probes, self.probe_verdicts):
            got = verdicts(self.judged(altered, judging, claims), names)
            changed = sorted(n for n in names if got[n] != want[n])
            if changed:
                return "the probe '%s': %s" % (desc, ", ".join(changed))
        scen = {s.name: s for s in (judging or judge.judging_of(TABLE)).values()}
        for ok, desc, _ in checks.check_cases(res, scen)[0] + checks.definition_cases(res)[0]:
            if ok is False:
                return "checks.py: %s" % desc
        return None


def with_attribute(module, name, value, fn):
    """fn() with MODULE.NAME set to VALUE, restored after."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        return fn()
    finally:
        setattr(module, name, saved)


def mutate_checks(suite):
    ran = {s["name"] for s in MANIFEST["scenarios"]}
    for name, fn in checks.functions("ex_").items():
        wrong = negated(fn)
        judging = {s.name: (s if s.check is not fn else dataclasses.replace(s, check=wrong)) for s in TABLE.scenarios}
        caught = with_attribute(table, name, wrong, lambda: suite.catches(judging))   # and the checks that call it
        users = sorted(s.name for s in TABLE.scenarios if s.check is fn and s.name in ran)
        if caught:
            result(True, "%s forced wrong: %s catches it" % (name, caught))
        elif not users:
            result(True, "%s forced wrong: no scenario of the recorded run uses it" % name,
                   "SKIP record a run with its boot into demo/tests/fixtures/recorded")
        else:
            result(False, "%s forced wrong: nothing fails" % name, "rows %s" % ", ".join(users))


def mutate_claims(suite):
    for i, (quote, fn) in enumerate(TABLE.claims):
        claims = list(TABLE.claims)
        claims[i] = (quote, bumped(fn))
        caught = suite.catches(claims=claims)
        result(bool(caught), "claim %s forced wrong: %s" % (fn.__name__, caught or "nothing fails"))


def mutate_definitions(suite):
    """Each definition made to hold always, and to break always."""
    for i, (col, text, fn) in enumerate(table.DEFINITIONS):
        for how, wrong in (("never breaks", lambda rec: None), ("always breaks", lambda rec: "forced")):
            mutated = list(table.DEFINITIONS)
            mutated[i] = (col, text, wrong)
            caught = with_attribute(table, "DEFINITIONS", mutated, suite.catches)
            result(bool(caught), "definition %s (%s) %s: %s" % (fn.__name__, col, how, caught or "nothing fails"))


# The judge's own pieces, each forced wrong both ways where it has two.
JUDGE_MUTANTS = [
    (judge, "runs_disagree", "never disagrees", lambda rec, zones, asked: [] if rec.get("runs") is not None else None),
    (judge, "runs_disagree", "always disagrees", lambda rec, zones, asked: ["forced"]),
    (judge, "layout_ok", "never checks", lambda boot, info: (None, "")),
    (judge, "layout_ok", "always fails", lambda boot, info: (False, "forced")),
    (table, "apply_definitions", "a no-op", lambda rec: rec),
]


def mutate_judge(suite):
    for module, name, how, wrong in JUDGE_MUTANTS:
        caught = with_attribute(module, name, wrong, suite.catches)
        result(bool(caught), "%s.%s %s: %s" % (module.__name__.split(".")[-1], name, how,
                                               caught or "nothing fails"))


def main():
    try:
        run = judge.load(golden.FIXTURE)
        judge.check_against(run, TABLE)
    except judge.Refused as e:
        return ktap.emit([(False, "the recorded run judged", str(e))], width=300)
    suite = Suite(run)
    diff = golden.mismatches(suite.base, suite.want)
    result(not diff, "unmutated: the recorded run matches the golden list", "; ".join(diff[:3]))
    for (desc, _, names), got in zip(suite.probes, suite.probe_verdicts):
        bad = sorted(n for n in names if got[n][0] is not False)
        result(names and not bad, "unmutated: the probe '%s' makes its rows not as expected" % desc,
               "as expected: %s" % ", ".join(bad))
    mutate_checks(suite)
    mutate_claims(suite)
    mutate_definitions(suite)
    mutate_judge(suite)
    return ktap.emit([(None if directive.startswith("SKIP") else ok, desc,
                       directive[len("SKIP "):] if directive.startswith("SKIP") else directive)
                      for ok, desc, directive in results], width=300)


if __name__ == "__main__":
    sys.exit(main())
