"""pytest plugin: ``pytest --fpcert-report=report.html`` collects every fpcert.assert_close and
fpcert.certify call of the test run into one HTML report (docs/python.md); the fixture ``fpcert_assert_close``
is fpcert's derived bound as a drop-in for torch.testing.assert_close, named after the test. Loaded by the
``pytest11`` entry point the installed package declares, or with ``-p fpcert.pytest_plugin``."""
import json

import pytest

import fpcert


def pytest_addoption(parser):
    group = parser.getgroup("fpcert")
    group.addoption("--fpcert-report", default=None, metavar="PATH",
                    help="write every fpcert.assert_close and fpcert.certify call of this run into one HTML report")


class _Collector:
    def __init__(self, path):
        self.path, self.cases, self.runs = path, [], []

    def __call__(self, kind, data):
        (self.cases if kind == "assert_close" else self.runs).append(data)

    def write(self):
        runs = list(self.runs)
        if self.cases:
            env = json.loads(fpcert._fpcert.environment("pytest --fpcert-report=" + str(self.path)))
            runs.insert(0, {"kind": "gemm", "environment": env, "suite": "assert_close",
                            "kernels": sorted({c["kernel"] for c in self.cases}), "cases": self.cases})
        if runs:
            fpcert._fpcert.write_html([json.dumps(r) for r in runs], str(self.path))
        return len(self.cases), sum(len(r["cases"]) for r in self.runs)


def pytest_configure(config):
    path = config.getoption("fpcert_report", None)
    if path:
        config._fpcert_collector = _Collector(path)
        fpcert.collector = config._fpcert_collector


def pytest_unconfigure(config):
    c = getattr(config, "_fpcert_collector", None)
    if c is not None:
        fpcert.collector = None
        n_close, n_cases = c.write()
        config._fpcert_summary = f"fpcert: {n_close} assert_close call(s) and {n_cases} certify case(s) -> {c.path}"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    c = getattr(config, "_fpcert_collector", None)
    if c is not None:
        terminalreporter.write_line(f"fpcert: {len(c.cases)} assert_close call(s), {len(c.runs)} certify run(s) "
                                    f"-> report {c.path} (written at exit)")


@pytest.fixture
def fpcert_assert_close(request):
    """``fpcert_assert_close(actual, A, B, op="matmul", traits=None, **kw)``: fpcert.assert_close with the test's id
    as the case's name (the report lists it under that name). Where a test wrote
    ``torch.testing.assert_close(out, ref, rtol=..., atol=...)``, it writes ``fpcert_assert_close(out, A, B)``."""
    def check(actual, A, B, op="matmul", traits=None, **kw):
        kw.setdefault("name", request.node.nodeid)
        return fpcert.assert_close(actual, A, B, traits, op=op, **kw)
    return check
