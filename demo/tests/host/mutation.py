#!/usr/bin/env python3
"""Mutation test of the demo's verdicts: every check (each ex_* function in
demo/table.py, found by name, so new ones are covered without a change
here) and every claim (demo/table.py's CLAIMS) is forced wrong, one at a
time, and the recorded run judged with it must then differ from the golden
list (demo/tests/golden.py): a check's verdict negated, a claim's numbers
changed (or numbers made up where it had none). A mutant that leaves the
golden list intact is a check no test pins: not ok. A check that no
scenario of the recorded run uses cannot be pinned by it: skipped, saying
so, until a recording with its boot is in the fixture. KTAP; no guest.
"""
import dataclasses
import inspect
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
os.environ["DMA32_KERNEL"] = MANIFEST["kernel"]
from demo import judge, table  # noqa: E402

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


def main():
    run = judge.load(golden.FIXTURE)
    judge.check_against(run, table, MANIFEST["kernel"])
    want = golden.load_golden()
    versions = {}
    base = judge.evaluate(run, judge.judging_of(table), table.CLAIMS, versions)
    diff = golden.mismatches(base, want)
    result(not diff, "unmutated: the recorded run matches the golden list", "; ".join(diff[:3]))
    ran = {s["name"] for s in MANIFEST["scenarios"]}
    checks = [(n, f) for n, f in inspect.getmembers(table, inspect.isfunction)
              if n.startswith("ex_") and f.__module__ == table.__name__]
    for name, fn in checks:
        wrong = negated(fn)
        judging = {s.name: (s if s.check is not fn else dataclasses.replace(s, check=wrong))
                   for s in table.SCENARIOS}
        setattr(table, name, wrong)   # the checks that call it
        try:
            res = judge.evaluate(run, judging, table.CLAIMS, versions)
        finally:
            setattr(table, name, fn)
        diff = golden.mismatches(res, want)
        users = sorted(s.name for s in table.SCENARIOS if s.check is fn and s.name in ran)
        if diff:
            result(True, "%s forced wrong: the golden list catches it (%s)" % (name, diff[0]))
        elif not users:
            result(True, "%s forced wrong: no scenario of the recorded run uses it" % name,
                   "SKIP record a run with its boot into demo/tests/fixtures/recorded")
        else:
            result(False, "%s forced wrong: nothing fails" % name, "rows %s" % ", ".join(users))
    for i, (quote, fn) in enumerate(table.CLAIMS):
        claims = list(table.CLAIMS)
        claims[i] = (quote, bumped(fn))
        diff = golden.mismatches(judge.evaluate(run, judge.judging_of(table), claims, versions), want)
        result(bool(diff), "claim %s forced wrong: %s" % (
            fn.__name__, "the golden list catches it" if diff else "nothing fails"))
    return ktap.emit([(None if directive.startswith("SKIP") else ok, desc,
                       directive[len("SKIP "):] if directive.startswith("SKIP") else directive)
                      for ok, desc, directive in results], width=300)


if __name__ == "__main__":
    sys.exit(main())
