"""The Python module `hcsim` (sim/python/module.cpp) against the command line it mirrors.

Expected values come from the hcsim binary itself: hcsim.run(...) must return the report
`hcsim run --format json` prints, key for key and bit for bit, for a dict, a file path and
--set overrides; bad input raises hcsim.ScenarioError with the CLI's "FILE:/pointer: message"
lines; a warning is a UserWarning, an error with strict=True. Run by ctest (tests/python.cmake)
with PYTHONPATH=build/python, HCSIM=build/hcsim and HCSIM_SOURCE_DIR set.
"""
import json
import os
import subprocess
import sys
import unittest
import warnings

import hcsim

HCSIM = os.environ["HCSIM"]
ROOT = os.environ["HCSIM_SOURCE_DIR"]
QUICKSTART = os.path.join(ROOT, "scenarios", "quickstart.json")


def cli_report(path, *sets):
    args = [HCSIM, "run", path, "--format", "json"]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def quickstart():
    with open(QUICKSTART) as f:
        return json.load(f)


class Module(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cli = cli_report(QUICKSTART)

    def test_dict_gives_the_cli_report(self):
        rep = hcsim.run(quickstart())
        self.assertEqual(rep["step_time_s"], self.cli["step_time_s"])
        self.assertEqual(rep, self.cli)

    def test_path_gives_the_cli_report(self):
        self.assertEqual(hcsim.run(QUICKSTART), self.cli)

    def test_sets_are_the_cli_overrides(self):
        sets = ["/strategy/tp=8", "/strategy/dp=1"]
        rep = hcsim.run(quickstart(), sets=sets)
        self.assertEqual(rep, cli_report(QUICKSTART, *sets))
        self.assertNotEqual(rep["step_time_s"], self.cli["step_time_s"])

    def test_resolved_scenario_reruns_to_the_same_report(self):
        self.assertEqual(hcsim.run(hcsim.resolve(quickstart())), self.cli)

    def test_bad_input_names_the_pointer(self):
        sc = quickstart()
        sc["strategy"]["tp"] = 0
        sc["workload"]["micro_batch"] = "four"
        with self.assertRaises(hcsim.ScenarioError) as ctx:
            hcsim.run(sc)
        paths = [p for p, _ in ctx.exception.issues]
        self.assertIn("/strategy/tp", paths)
        self.assertIn("/workload/micro_batch", paths)
        self.assertTrue(str(ctx.exception).startswith("<dict>:/"), str(ctx.exception))
        self.assertIsInstance(ctx.exception, ValueError)
        with self.assertRaises(hcsim.ScenarioError):
            hcsim.validate(sc)

    def test_validate_accepts_the_quickstart(self):
        self.assertIsNone(hcsim.validate(quickstart()))

    def test_validate_applies_the_memory_check(self):
        # 175B parameters' weights alone (350 GB in bf16) on one 80 GB device.
        sc = quickstart()
        sc["workload"]["model"] = {"preset": "gpt3-175b"}
        sc["cluster"]["pools"][0]["count"] = 1
        sc["strategy"] = {"dp": 1, "tp": 1, "pp": 1}
        with self.assertRaises(hcsim.ScenarioError) as ctx:
            hcsim.validate(sc)
        self.assertIn("memory", str(ctx.exception))

    def test_warning_is_a_user_warning_and_strict_an_error(self):
        sets = ["/cluster/topology/nvlink/bandwidth=600"]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            hcsim.validate(quickstart(), sets=sets)
        msgs = [str(w.message) for w in caught if issubclass(w.category, UserWarning)]
        self.assertTrue(any(m.startswith("<dict>:/cluster/topology/nvlink/bandwidth: ") for m in msgs), msgs)
        with self.assertRaises(hcsim.ScenarioError):
            hcsim.validate(quickstart(), sets=sets, strict=True)

    def test_not_a_scenario_is_a_type_error(self):
        with self.assertRaises(TypeError):
            hcsim.run(42)

    def test_readme_one_liner_prints_the_cli_step_time(self):
        code = ("import json, hcsim; print(hcsim.run(json.load(open('scenarios/quickstart.json')))"
                "['step_time_s'])")
        out = subprocess.run(["/usr/bin/python3", "-c", code], check=True, capture_output=True, text=True,
                             cwd=ROOT).stdout
        self.assertEqual(float(out), self.cli["step_time_s"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
