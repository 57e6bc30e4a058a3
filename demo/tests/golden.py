"""The golden list of the recorded run (demo/tests/fixtures/recorded/): for
every row whether it is as expected and its key figures, for every claim
the numbers each of its cells (before, after, caveat) quotes. report.py asserts the judged fixture against it;
mutation.py asserts that each check and claim forced wrong breaks it.

    python3 demo/tests/golden.py            print the differences (exit 1 if any)
    python3 demo/tests/golden.py --update   rewrite golden.json from the fixture

Update it only after reading the differences: a row that changes verdict
is the thing this list is there to catch. --update refuses a run with a row
that is not as expected or whose guest failed, unless EXPECTED_FAILURES
names that row and says why it is expected to fail: the golden list pins
what the demo must show, never a failure nobody chose.
"""
import json
import os
import re
import sys
from typing import Any, Dict, List

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(TOP, "demo", "tests", "fixtures", "recorded")
GOLDEN = os.path.join(TOP, "demo", "tests", "fixtures", "golden.json")

# What a row is pinned by, besides its verdict.
KEY_FIGURES = ("guest_ok", "ok", "errno", "repeats", "swiotlb_bounced", "driver_bounced", "mappings",
               "mappings_above_4g", "pages", "pages_above_4g", "zone_dma_pages_used", "zone_dma_fallbacks",
               "buffers", "device_faults", "coherent_swiotlb_bytes", "map_refused", "alias_canary_errors",
               "gart_coherent", "gart_full", "zone_dma_pages_distinct", "bound_zone_dma_pages", "bound_pool_bytes",
               "request_pool_bytes")


# Rows the golden list may pin failing (not as expected, or their guest
# failed): row name -> why that is the expected outcome. Empty: every
# pinned row is as expected and its guest ran.
EXPECTED_FAILURES: Dict[str, str] = {}


def failing(row: Dict[str, Any]) -> bool:
    """A row (of results.json or of the golden list) that is not as
    expected or whose guest failed."""
    return not (row.get("as_expected") and row.get("guest_ok"))


def unchosen_failures(rows: Dict[str, Dict[str, Any]]) -> List[str]:
    """The failing rows EXPECTED_FAILURES does not name with a reason:
    "name: why it fails" each; [] when the rows may be pinned."""
    return ["%s: %s" % (name, row.get("showed") or ("guest failed" if not row.get("guest_ok") else "not as expected"))
            for name, row in sorted(rows.items()) if failing(row) and not EXPECTED_FAILURES.get(name, "").strip()]


# A claim's cells (table.ClaimParts), each pinned by the numbers it quotes.
CLAIM_PARTS = ("before", "after", "caveat")


def numbers(text: str) -> List[str]:
    """The numbers a claim's text quotes, in order."""
    return re.findall(r"\d+(?:\.\d+)?", text)


def golden_of(results: Dict[str, Any]) -> Dict[str, Any]:
    return {"rows": {r["name"]: dict({"as_expected": r["as_expected"]}, **{k: r.get(k) for k in KEY_FIGURES})
                     for r in results["scenarios"]},
            "claims": {c["id"]: {part: numbers(c[part]) for part in CLAIM_PARTS} for c in results["claims"]}}


def mismatches(results: Dict[str, Any], golden: Dict[str, Any]) -> List[str]:
    """Where judged results differ from the golden list: [] when they do not."""
    now, out = golden_of(results), []
    for name in sorted(set(now["rows"]) | set(golden["rows"])):
        a, b = golden["rows"].get(name), now["rows"].get(name)
        if a is None or b is None:
            out.append("%s: %s" % (name, "not in the golden list" if a is None else "no longer judged"))
            continue
        out += ["%s: %s %r, golden %r" % (name, k, b.get(k), a.get(k)) for k in a if a.get(k) != b.get(k)]
    for cid in sorted(set(now["claims"]) | set(golden["claims"])):
        a, b = golden["claims"].get(cid), now["claims"].get(cid)
        if a != b:
            out.append("claim %s: numbers %s, golden %s" % (cid, b, a))
    return out


def load_golden() -> Dict[str, Any]:
    with open(GOLDEN) as f:
        return json.load(f)


def judge_fixture() -> Dict[str, Any]:
    sys.path.insert(0, TOP)
    from demo import judge
    return judge.judge(FIXTURE)


def main(argv: List[str]) -> int:
    results = judge_fixture()
    if argv[1:] == ["--update"]:
        refused = unchosen_failures({r["name"]: r for r in results["scenarios"]})
        if refused:
            print("golden.py: not updated: the recorded run has failing rows that EXPECTED_FAILURES does not name"
                  " with a reason:\n  %s" % "\n  ".join(refused), file=sys.stderr)
            return 1
        with open(GOLDEN, "w") as f:
            json.dump(golden_of(results), f, indent=1, sort_keys=True)
            f.write("\n")
        print("wrote %s: %d rows, %d claims" % (os.path.relpath(GOLDEN), len(results["scenarios"]),
                                                len(results["claims"])))
        return 0
    diff = mismatches(results, load_golden())
    for line in diff:
        print(line)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.dont_write_bytecode = True
    sys.exit(main(sys.argv))
