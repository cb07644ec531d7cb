"""Run abkit's conformance suite on a Python plugin from its own tests
(the counterpart of the Go SDK's sdk/conformancetest):

    import unittest
    from abkit import conformancetest

    class Conformance(unittest.TestCase):
        def test_plugin(self):
            conformancetest.run(self, "myplugin.py")

The plugin runs under this interpreter (conformance run --plugin
sys.executable --plugin-arg FILE), so no shebang or executable bit is
needed. The conformance program is $ABKIT_CONFORMANCE, or conformance in
PATH (go install github.com/abkit/abkit/cmd/conformance@latest); without it
the test is skipped, saying so.
"""

import json
import os
import shutil
import subprocess
import sys


def conformance_program():
    return os.environ.get("ABKIT_CONFORMANCE") or shutil.which("conformance")


def report(script, *args, conformance=None):
    """The suite's JSON report for the plugin in script, and the exit code."""
    prog = conformance or conformance_program()
    if not prog:
        raise FileNotFoundError("no conformance program: set ABKIT_CONFORMANCE or put conformance in PATH")
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([prog, "run", "--plugin", sys.executable, "--plugin-arg", os.path.abspath(script),
                        "-o", "json", *args], capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        raise RuntimeError("conformance exited %d: %s" % (p.returncode, p.stderr.strip()))
    return json.loads(p.stdout), p.returncode


def run(test, script, *args):
    """Fail the unittest test case test on any counted failure of the plugin
    in script; extra args go to conformance run (--run, --skip, ...)."""
    if not conformance_program():
        test.skipTest("no conformance program: set ABKIT_CONFORMANCE or put conformance in PATH")
    rep, code = report(script, *args)
    bad = ["%s: %s: %s" % (r["id"], r["status"], r.get("summary", "")) for r in rep.get("results", [])
           if r["status"] in ("fail", "fixed")]
    if code != 0 or bad:
        test.fail("conformance on %s:\n%s" % (script, "\n".join(bad) or "exit %d" % code))
    return rep
