"""conformancetest on an example plugin; skipped without a conformance program."""
import os
import unittest

from abkit import conformancetest

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "python", "submittagger",
                       "submittagger.py")


class ConformanceTest(unittest.TestCase):
    def test_example(self):
        rep = conformancetest.run(self, EXAMPLE, "--isolation", "suite")
        self.assertTrue(any(r["status"] == "pass" for r in rep["results"]))


if __name__ == "__main__":
    unittest.main()
