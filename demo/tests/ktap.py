"""KTAP for the demo's host suites, one printer for all of them.

As Documentation/dev-tools/ktap.rst writes it and the kernel's parser
(kunit.py parse) reads it: a failure's reason goes on '#' lines directly
before its 'not ok' line, since the parser gives a diagnostic to the result
that follows it; after a '#' on a result line only a directive (SKIP) may
stand.
"""
import sys


def emit(results, width=400, out=None):
    """Print RESULTS, a list of (ok, description, detail), as KTAP.

    ok is True, False, or None for a skipped test (detail: why). Returns
    the suite's exit status: 1 when a test failed, else 0, so that a suite
    that printed 'not ok' never exits 0.
    """
    out = out or sys.stdout
    print("KTAP version 1", file=out)
    print("1..%d" % len(results), file=out)
    failed = 0
    for i, (ok, desc, detail) in enumerate(results, 1):
        one_line = " ".join(str(detail).split("\n"))[:width]
        if ok is None:
            print("ok %d %s # SKIP %s" % (i, desc, one_line), file=out)
        elif ok:
            print("ok %d %s" % (i, desc), file=out)
        else:
            failed = 1
            if one_line:
                print("# " + one_line, file=out)
            print("not ok %d %s" % (i, desc), file=out)
    return failed
