"""Runs the named test modules of tests/python with unittest and closes with the plain line
`N passed, M failed, K skipped` that tests/e2e/run.sh also prints. Exits non-zero when a test
failed or, with CI=true, skipped.
    python tests/python/run.py test_wheel [test_jax]"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
suite = unittest.defaultTestLoader.loadTestsFromNames(sys.argv[1:])
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
passed = result.testsRun - failed - skipped
print(f"{passed} passed, {failed} failed, {skipped} skipped")
sys.exit(1 if failed or not result.testsRun or (skipped and os.environ.get("CI") == "true") else 0)
