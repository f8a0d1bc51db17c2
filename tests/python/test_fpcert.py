"""tests/python/test_fpcert.py — the Python entry on NumPy arrays (docs/python.md): references,
traits, tolerances, assert_close's explanations, certify through the runner, generators, the CLI's
`fpcert tolerance`, and the pytest plugin's report."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fpcert

F32_BLAS = "in=f32,products=f32,acc=f32,out=f32"  # NumPy's matmul: BLAS order unknown, with or without FMA


def exact_f32(A, B):
    """A correctly rounded fp32 GEMM (float64 sums of exact fp32 products, K <= 2^29... then rounded):
    for the inputs here every fp32 product is exact in float64 and K * 2^-53 is far below u_f32."""
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)


def test_reference_is_exact_on_integers():
    A = np.arange(12, dtype=np.float32).reshape(3, 4) - 5
    B = np.arange(8, dtype=np.float32).reshape(4, 2) * 3 - 7
    r = fpcert.reference(A, B)
    assert np.array_equal(r.hi, A.astype(np.float64) @ B.astype(np.float64))
    assert not r.lo.any()
    # abs_sum is an upper bound within a few ulps of the exact sum (oracle/gemm_ref.hpp)
    exact_abs = np.abs(A).astype(np.float64) @ np.abs(B).astype(np.float64)
    assert (r.abs_sum >= exact_abs).all() and np.allclose(r.abs_sum, exact_abs, rtol=1e-13, atol=0)
    assert r.rounded("f32").dtype == np.float32 and r.rounded("bf16").dtype == np.uint16


def test_reference_carries_the_part_fp64_loses():
    # 1 * 1 + 2^-60 * 1: hi = 1, lo = 2^-60 (one double cannot hold it)
    A = np.array([[1.0, 2.0**-60]])
    B = np.array([[1.0], [1.0]])
    r = fpcert.reference(A, B)
    assert r.hi[0, 0] == 1.0 and r.lo[0, 0] == 2.0**-60


def test_traits_by_name_spec_and_keywords():
    t = fpcert.traits("in=f16,acc=f32,out=f16")
    assert (t.a_input, t.acc, t.out) == ("f16", "f32", "f16")
    assert fpcert.traits(in_="bf16", acc="f32", out="bf16").out == "bf16"
    assert "model_gemm_f16_f32acc" in fpcert.kernel_names()
    assert fpcert.traits("model_gemm_f16_f32acc").a_input == "f16"
    with pytest.raises(ValueError, match="unknown key"):
        fpcert.traits("in=f16,accumulator=f32")
    with pytest.raises(ValueError, match="unknown format"):
        fpcert.traits("in=f17")
    tt = fpcert.torch_traits("float32", allow_tf32=True)
    assert tt.a_operand == "tf32" and tt.acc_rounding == "rz"


def test_tolerance_per_element_holds_for_a_correct_result_and_states_its_terms():
    A, B = fpcert.generate("uniform:m=16,n=24,k=512,seed=5")
    tol = fpcert.tolerance(F32_BLAS, A, B)
    r = fpcert.reference(A, B)
    C = A @ B
    err = np.abs((C.astype(np.float64) - r.hi) - r.lo)
    assert tol.allowed.shape == (16, 24)
    assert (err <= tol.allowed).all()
    # gamma_512 at u = 2^-24 times (|A||B|)_ij, plus the product term: the bound has those terms.
    assert tol.bound["variant"] == "envelope"
    text = tol.explain()
    assert "accumulation" in text and "coef" in text


def test_shape_tolerance_f16_accumulator_vacuous_where_gamma_does_not_exist():
    # Sequential: gamma_K with u = 2^-11 exists only while K u < 1, so K = 2048 is vacuous. Unknown order
    # (tensor-core alignment included): u + 2^-10 = 3 * 2^-11 per rounding, so K = 683 already is.
    seq = "in=f16,acc=f16,out=f16,order=sequential"
    assert not fpcert.shape_tolerance(seq, 64, 64, 1024)["element"]["vacuous"]
    assert fpcert.shape_tolerance(seq, 64, 64, 2048)["element"]["vacuous"]
    assert not fpcert.shape_tolerance("in=f16,acc=f16,out=f16", 64, 64, 682)["element"]["vacuous"]
    assert fpcert.shape_tolerance("in=f16,acc=f16,out=f16", 64, 64, 683)["element"]["vacuous"]


@pytest.mark.parametrize("fmt", ["f32", "f16", "bf16"])
def test_assert_close_passes_correctly_rounded_results(fmt):
    A, B = fpcert.generate("normal:m=12,n=10,k=300,seed=9")
    r0 = fpcert.reference(A, B)
    if fmt == "f32":
        C, spec = exact_f32(A, B), "in=f32,acc=f32,out=f32"
        a, b = A, B
    else:
        enc = lambda X: fpcert._from_codes(fpcert._fpcert.encode(fmt, X.astype(np.float64)), fmt)  # noqa: E731
        a, b = enc(A), enc(B)
        C = fpcert.reference(a, b).rounded(fmt)
        spec = f"in={fmt},acc=f32,out={fmt}"
    assert r0.shape == (12, 10)
    case = fpcert.assert_close(C, a, b, spec)
    assert case["status"] == "pass" and case["m"] == 12


def test_assert_close_explains_the_worst_elements():
    A, B = fpcert.generate("uniform:m=8,n=8,k=64,seed=2")
    C = exact_f32(A, B)
    C[3, 5] = np.nextafter(C[3, 5], np.float32(np.inf) * np.sign(C[3, 5]))  # one ulp: allowed
    C[6, 1] *= np.float32(1 + 2**-8)                                         # 2^-8 relative: far beyond
    with pytest.raises(AssertionError) as e:
        fpcert.assert_close(C, A, B, "in=f32,acc=f32,out=f32")
    text = str(e.value)
    assert "C[6, 1]" in text and "ulp" in text and "allowed" in text and "cancellation |A||B|/|AB|" in text
    assert "accumulation" in text and "envelope" in text  # the bound's terms and its arithmetic are printed
    assert text.index("C[6, 1]") < text.index("C[3, 5]") if "C[3, 5]" in text else True  # worst first


def test_assert_close_rejects_outputs_not_in_the_output_format():
    A, B = fpcert.generate("uniform:m=4,n=4,k=8,seed=1")
    with pytest.raises(ValueError, match="not a f16 value"):
        fpcert.assert_close(A.astype(np.float64) @ B.astype(np.float64) + 1e-9, A, B, "in=f32,acc=f32,out=f16")


def test_certify_a_numpy_kernel_through_the_runner(tmp_path):
    res = fpcert.certify(exact_f32, "in=f32,acc=f32,out=f32", suite="quick", name="exact_f32", mn=16,
                         json=tmp_path / "r.json", junit=tmp_path / "r.xml", html=tmp_path / "r.html")
    assert res.passed, repr(res)
    assert len(res.cases) >= 4 and all(c["kernel"] == "python:exact_f32" for c in res.cases)
    assert json.loads((tmp_path / "r.json").read_text())["cases"][0]["backend"]
    assert "<testsuite" in (tmp_path / "r.xml").read_text()
    assert "<svg" in (tmp_path / "r.html").read_text()


def test_certify_fails_a_wrong_kernel_and_survives_an_exception():
    wrong = fpcert.certify(lambda A, B: exact_f32(A, B) * np.float32(1 + 2**-10), "in=f32,acc=f32,out=f32",
                           suite="quick", name="scaled", mn=16)
    assert not wrong.passed and any(c["status"] == "fail" for c in wrong.cases)

    def boom(A, B):
        raise RuntimeError("kernel exploded")
    res = fpcert.certify(boom, "in=f32,acc=f32,out=f32", suite="quick", name="boom", mn=16)
    graded = [c for c in res.cases if c["case"] != "evidence"]
    assert graded and all(c["status"] == "error" and "kernel exploded" in c["reason"] for c in graded)
    # No case graded, so none is evidence of the accumulation: certify says so, as `fpcert certify` does.
    assert [c["status"] for c in res.cases if c["case"] == "evidence"] == ["fail"]
    bad_shape = fpcert.certify(lambda A, B: exact_f32(A, B)[:, 1:], "in=f32,acc=f32,out=f32", suite="quick", mn=16)
    assert all(c["status"] == "error" for c in bad_shape.cases if c["case"] != "evidence")


def test_certify_f16_kernel_gets_f16_arrays():
    seen = {}

    def k(A, B):
        seen["dtype"] = (A.dtype, B.dtype)
        return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
    res = fpcert.certify(k, "in=f16,acc=f32,out=f16", suite="quick", mn=16, case="k256_uniform")
    assert seen["dtype"] == (np.float16, np.float16)
    assert len(res.cases) == 1 and res.passed, repr(res)


def test_generate_returns_arrays_in_the_source_format():
    A, B, info = fpcert.generate("cancel:n=1000,kappa=1e12", with_info=True)
    assert A.dtype == np.float32 and A.shape == (1, 1000) and B.shape == (1000, 1)
    assert info["family"] == "cancel" and info["achieved"]["kappa_max"] > 1e10


def test_cli_tolerance():
    exe = os.environ.get("FPCERT_BIN")
    if not exe:
        pytest.skip("FPCERT_BIN not set (ctest sets it)")
    out = subprocess.run([exe, "tolerance", "--traits", "in=f16,acc=f32,out=f16", "--m", "64", "--n", "64", "--k", "4096"],
                         capture_output=True, text=True, check=True).stdout
    assert "normwise:" in out and "per element:" in out and "gamma_4096" in out
    j = json.loads(subprocess.run([exe, "tolerance", "--kernel", "model_gemm_f16_f32acc", "--k", "1024", "--json"],
                                  capture_output=True, text=True, check=True).stdout)
    assert j["k"] == 1024 and j["element"]["rtol"] > 0
    bad = subprocess.run([exe, "tolerance", "--m", "4"], capture_output=True, text=True)
    assert bad.returncode == 2


def test_pytest_plugin_writes_one_report(tmp_path):
    (tmp_path / "test_inner.py").write_text(
        "import numpy as np, fpcert\n"
        "def test_a():\n"
        "    A, B = fpcert.generate('uniform:m=4,n=4,k=16,seed=1')\n"
        "    C = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)\n"
        "    fpcert.assert_close(C, A, B, 'in=f32,acc=f32,out=f32')\n"
        "def test_b():\n"
        "    f = lambda A, B: (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)\n"
        "    fpcert.certify(f, 'in=f32,acc=f32,out=f32', suite='quick', mn=8, case='k256_uniform')\n")
    report = tmp_path / "report.html"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "fpcert.pytest_plugin", f"--fpcert-report={report}",
                        str(tmp_path / "test_inner.py")], capture_output=True, text=True, cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    html = report.read_text()
    assert "assert_close" in html and "test_inner.py::test_a" in html and "k256_uniform" in html


def seq_mul_add(A, B):
    """fp32 products, then a sequential fp32 sum from 0, k = 0, 1, ...: the order declared below."""
    acc = np.zeros((A.shape[0], B.shape[1]), np.float32)
    for q in range(A.shape[1]):
        acc = acc + np.outer(A[:, q], B[q, :])
    return acc


def test_a_declared_order_gets_the_bitwise_tier():
    A, B = fpcert.generate("normal:m=6,n=5,k=64,seed=4")
    C = seq_mul_add(A, B)
    case = fpcert.assert_close(C, A, B, "in=f32,products=f32,acc=f32,out=f32,order=sequential:step=mul_add")
    assert case["tier"] == "bitwise"
    # The same bits declared as FMA steps: the emulation differs, and the bitwise tier says where.
    with pytest.raises(AssertionError, match="bitwise"):
        fpcert.assert_close(C, A, B, "in=f32,acc=f32,out=f32,order=sequential:step=fma")
    with pytest.raises(ValueError, match="step must be fma or mul_add"):
        fpcert.traits("in=f32,order=sequential:step=fused")


def test_certify_deterministic_false_declares_run_to_run_and_reports_the_spread():
    # Split-K in 4 chunks (each chunk's fp32 sum by float64 products rounded once per chunk: a valid order), the
    # partials added in fp32 in an order that changes with every call: nondeterministic run to run by design.
    calls = [0]

    def splitk(A, B):
        calls[0] += 1
        k = A.shape[1]
        parts = [(A[:, s:s + (k + 3) // 4].astype(np.float64) @ B[s:s + (k + 3) // 4].astype(np.float64)).astype(np.float32)
                 for s in range(0, k, (k + 3) // 4)]
        order = np.random.default_rng(calls[0]).permutation(len(parts))
        C = np.zeros((A.shape[0], B.shape[1]), np.float32)
        for i in order:
            C = (C + parts[i]).astype(np.float32)
        return C
    undeclared = fpcert.certify(splitk, "in=f32,acc=f32,out=f32", suite="quick", name="splitk_undeclared", mn=16,
                                case="k256_uniform")
    assert not undeclared.passed
    assert any(ch["kind"] == "nondeterministic" and not ch["passed"] for ch in undeclared.cases[0]["checks"])
    declared = fpcert.certify(splitk, "in=f32,acc=f32,out=f32", suite="quick", name="splitk_declared", mn=16,
                              case="k256_uniform", deterministic=False)
    assert declared.passed, repr(declared)
    c = declared.cases[0]
    assert c["determinism"] == "run_to_run" and c["spread"]["differing_runs"] >= 1 and c["spread"]["max_frac"] <= 1


def test_encode_nan_conventions():
    """encode(nan=...): what NaN values become, per docs/formats.md "NaN conventions" (values from the
    CUDA headers' NaN constants, the PTX cvt .satfinite rule and ml_dtypes' mxfloat.h, not from fpcert)."""
    v = np.array([np.nan, -np.nan, 1.0])
    assert list(fpcert.encode("f16", v, nan="nvidia")) == [0x7FFF, 0x7FFF, 0x3C00]  # CUDART_NAN_FP16, sign dropped
    assert list(fpcert.encode("f16", v, nan="canonical")) == [0x7E00, 0x7E00, 0x3C00]
    assert list(fpcert.encode("bf16", v, nan="nvidia")) == [0x7FFF, 0x7FFF, 0x3F80]
    assert list(fpcert.encode("e2m1", v, nan="cuda")) == [0x7, 0x7, 0x2]  # positive MAX_NORM (+6)
    assert list(fpcert.encode("e2m1", v, nan="ml_dtypes")) == [0x8, 0x0, 0x2]  # -quiet_NaN() flips -0 to +0
    assert fpcert.nan_convention("f32", "nvidia") == "every NaN input -> 0x7fffffff"
    with pytest.raises(fpcert.InputError, match="e2m1 has no NaN"):
        fpcert.encode("e2m1", v, nan="any")
    with pytest.raises(fpcert.InputError, match="unknown NaN convention"):
        fpcert.encode("f16", v, nan="quiet")


def test_check_elementwise_refuses_a_wrong_exp_and_passes_a_correctly_rounded_one():
    # float64 exp of a float32 x rounded once to float32 is correctly rounded except on rare double-rounding inputs; the
    # claim "1 ulp" holds for it. Then the same results moved 3 codes up on [1, 2) are refused there.
    x = np.linspace(-80, 80, 20001, dtype=np.float32)
    y = np.exp(x.astype(np.float64)).astype(np.float32)
    r = fpcert.check_elementwise("exp", x, y, ulps=1)
    assert r["inputs"] == 20001 and r["above_claim"] == 0 and r["max_ulps"] <= 1
    bad = y.view(np.uint32).copy()
    sel = (x >= 1) & (x < 2)
    bad[sel] += 3
    r = fpcert.check_elementwise("exp", x, bad.view(np.float32), ulps=1)
    assert r["above_claim"] == int(sel.sum()) and r["above_claim"] > 0
    assert 1.0 <= r["listed"][0]["input"] < 2.0
    h = np.arange(0, 65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    with np.errstate(all="ignore"):
        hy = np.log(h.astype(np.float64)).astype(np.float16)  # double rounding float64 -> float16: 1 ulp at most
    r = fpcert.check_elementwise("log", h, hy, ulps=1)
    assert r["inputs"] == 65536 and r["above_claim"] == 0


def test_check_elementwise2_division_correctly_rounded_and_a_one_ulp_off_pow_refused():
    # numpy's float32 division is IEEE (correctly rounded): claimed at 0 ulp it passes, the special pairs included. powf as
    # float64 pow rounded once is correctly rounded except on rare double-rounding pairs (claimed at 1 ulp); moved 2 codes
    # up on x1 in [1, 2) it is refused there.
    rng = np.random.default_rng(42)
    a = rng.standard_normal(4096).astype(np.float32) * np.float32(1e3)
    b = rng.standard_normal(4096).astype(np.float32)
    a[:4] = [0.0, -0.0, np.inf, np.nan]
    b[:4] = [0.0, -0.0, np.inf, 1.0]
    with np.errstate(all="ignore"):
        r = fpcert.check_elementwise2("div", a, b, a / b)
    assert r["inputs"] == 4096 and r["above_claim"] == 0 and r["max_ulps"] == 0
    x = rng.uniform(0.5, 4.0, 4096).astype(np.float32)
    y = rng.uniform(-20, 20, 4096).astype(np.float32)
    z = np.power(x.astype(np.float64), y.astype(np.float64)).astype(np.float32)
    assert fpcert.check_elementwise2("pow", x, y, z, ulps=1)["above_claim"] == 0
    bad = z.view(np.uint32).copy()
    sel = (x >= 1) & (x < 2)
    bad[sel] += 2
    r = fpcert.check_elementwise2("pow", x, y, bad.view(np.float32), ulps=1)
    assert r["above_claim"] == int(sel.sum()) > 0
    assert "," in r["listed"][0]["input_bits"]
    with pytest.raises(fpcert.InputError, match="not a binary function"):
        fpcert.check_elementwise2("exp", x, y, z)


def test_check_elementwise_sqrt_correctly_rounded_and_a_float_rsqrt_within_one_ulp():
    # IEEE 754 makes numpy's float32 sqrt correctly rounded: claimed at 0 ulp (ulps=None) it passes on every positive
    # float16 input (computed in float32, rounded once more: innocuous for sqrt) and on 2^16 float32 patterns. 1/sqrt(x) in
    # float32 (two roundings) is not correctly rounded: held to 0 ulp it is refused, held to 1 ulp it passes.
    h = np.arange(0, 0x7c00, dtype=np.uint32).astype(np.uint16).view(np.float16)
    r = fpcert.check_elementwise("sqrt", h, np.sqrt(h))
    assert r["inputs"] == 0x7c00 and r["above_claim"] == 0 and r["max_ulps"] == 0
    x = (np.arange(1, 65537, dtype=np.uint64) * 32749 % 0x7f800000).astype(np.uint32).view(np.float32)
    assert fpcert.check_elementwise("sqrt", x, np.sqrt(x))["above_claim"] == 0
    y = np.float32(1) / np.sqrt(x)
    assert fpcert.check_elementwise("rsqrt", x, y)["above_claim"] > 0
    assert fpcert.check_elementwise("rsqrt", x, y, ulps=1)["above_claim"] == 0



# ---- reductions (docs/python.md, "Reductions") ----------------------------------------------------------------------
def test_certify_reduction_numpy_sum_passes_the_envelope_and_a_dropped_element_fails():
    # numpy.sum over float32 rows: NumPy's own pairwise order, declared here as unknown (the envelope of any tree).
    ok = fpcert.certify_reduction(lambda x: np.sum(x, axis=1, dtype=np.float32), "sum", x="f32", acc="f32", order="unknown")
    assert ok.passed, repr(ok)
    assert any(c["status"] == "pass" for c in ok.cases)
    # Dropping each row's last element: the uniform cases' last terms are far above the bound (~n u |x|).
    bad = fpcert.certify_reduction(lambda x: np.sum(x[:, :-1], axis=1, dtype=np.float32) if x.shape[1] > 1 else np.zeros(x.shape[0], np.float32),
                                   "sum", x="f32", acc="f32", order="unknown", name="droplast")
    assert not bad.passed


def test_certify_reduction_sequential_order_is_graded_bit_for_bit():
    def seq(x):  # acc = +0; acc = fl(acc + x_i): the declared sequential order, in float32
        acc = np.zeros(x.shape[0], np.float32)
        for i in range(x.shape[1]):
            acc = (acc + x[:, i]).astype(np.float32)
        return acc
    r = fpcert.certify_reduction(seq, "sum", x="f32", acc="f32", order="sequential")
    assert r.passed, repr(r)
    assert any(c["tier"] == "bitwise" and c["status"] == "pass" for c in r.cases)
    # numpy.sum of float32 rows declared with NumPy's own pairwise order (blocks of 128, 8 accumulators: fpcert's
    # emulation of it, oracle/reduce/reduce_order.hpp): every case bit for bit.
    npy = fpcert.certify_reduction(lambda x: np.sum(x, axis=1, dtype=np.float32), "sum", x="f32", acc="f32", order="numpy")
    assert npy.passed, repr(npy)
    assert all(c["tier"] == "bitwise" for c in npy.cases if c["status"] == "pass")


def test_certify_reduction_half_accumulator_declared_as_f32_fails_on_cancellation():
    def f16_acc(x):  # f16 inputs summed in an f16 accumulator, declared as an fp32 one
        acc = np.zeros(x.shape[0], np.float16)
        for i in range(x.shape[1]):
            acc = (acc + x[:, i]).astype(np.float16)
        return acc.astype(np.float32)
    r = fpcert.certify_reduction(f16_acc, "sum", x="f16", acc="f32", order="sequential")
    assert not r.passed


def test_certify_reduction_refuses_a_contradictory_declaration():
    with pytest.raises(fpcert.InputError):
        fpcert.certify_reduction(lambda x: np.sum(x, axis=1), "sum", order="sequential", deterministic=False)
    with pytest.raises(fpcert.InputError):
        fpcert.certify_reduction(lambda x: np.sum(x, axis=1), "sum", suite="certify")


def test_certify_alpha_beta_callable_blas_semantics():
    # D = alpha A B + beta C declared (traits alpha_beta=1): fn gets C (None where beta = 0) and the scalars. A correct
    # callable (float64 sums of exact fp32 products, the epilogue in float64, one rounding into fp32: fewer roundings
    # than the declared epilogue allows) passes the five ab_* cases; one that ignores beta (adds C as it is) is refused
    # where beta != 1; one that drops alpha is refused where alpha != 1. The verdicts come from the BLAS definition.
    t = fpcert.traits("in=f32,acc=f32,out=f32,alpha_beta=1")
    assert t.alpha_beta and not fpcert.traits("in=f32,acc=f32,out=f32").alpha_beta
    seen = []

    def blas(A, B, C, alpha, beta):
        seen.append((C is None, beta))
        D = alpha * (A.astype(np.float64) @ B.astype(np.float64))
        if C is not None:
            D = D + beta * C.astype(np.float64)
        return D.astype(np.float32)

    ok = fpcert.certify(blas, t, suite="certify", name="blas_ab", case="ab_*")
    ab = [c for c in ok.cases if c["case"].startswith("ab_")]  # (the evidence rule wants the accumulation cases too)
    # the five row-major ab_* cases pass; the nt ones (B column-major: cuBLASLt's FP8 shape, *_nt_aligned and
    # ab_general_exact_nt) are not supported: a Python callable takes nn/c_row only
    nt = [c for c in ab if c["case"].endswith(("_nt_aligned", "_nt"))]
    assert len(nt) == 3 and all(c["status"] == "not_supported" and "nn/c_row" in c["reason"] for c in nt), repr(nt)
    ab = [c for c in ab if not c["case"].endswith(("_nt_aligned", "_nt"))]
    assert len(ab) == 5 and all(c["status"] == "pass" for c in ab), repr(ok)
    assert all(c_none == (beta == 0) for c_none, beta in seen)  # C withheld exactly where beta = 0

    def ignores_beta(A, B, C, alpha, beta):
        D = alpha * (A.astype(np.float64) @ B.astype(np.float64))
        return (D + (C.astype(np.float64) if C is not None else 0)).astype(np.float32)

    bad = fpcert.certify(ignores_beta, t, suite="certify", name="ignores_beta", case="ab_*")
    failed = {c["case"] for c in bad.cases if c["status"] == "fail"}
    assert {"ab_general", "ab_alpha0", "ab_inplace"} <= failed and "ab_beta1" not in failed

    def drops_alpha(A, B, C, alpha, beta):
        D = A.astype(np.float64) @ B.astype(np.float64)
        return (D + (beta * C.astype(np.float64) if C is not None else 0)).astype(np.float32)

    bad = fpcert.certify(drops_alpha, t, suite="certify", name="drops_alpha", case="ab_*")
    failed = {c["case"] for c in bad.cases if c["status"] == "fail"}
    assert {"ab_general", "ab_beta0", "ab_alpha0", "ab_inplace"} <= failed and "ab_beta1" not in failed
    with pytest.raises(ValueError, match="alpha_beta"):
        fpcert.traits("in=f32,alpha_beta=maybe")


def test_certify_batched_callable_strided_batches():
    # Strided batches declared (traits batched=1): fn gets (batch, m, k) and (batch, k, n) arrays, a broadcast operand
    # as (1, ...), and returns (batch, m, n). A numpy matmul (float64 sums of exact fp32 products, one rounding into
    # fp32) passes every batch_* case it takes (row-major only: batch_transposed is not supported); one that uses A[0]
    # for every batch is refused wherever the batches' A differ, batch by batch; a callable without batched=1 is
    # never given a batch case.
    t = fpcert.traits("in=f32,acc=f32,out=f32,batched=1")
    assert t.batched and not fpcert.traits("in=f32,acc=f32,out=f32").batched
    shapes = []

    def matmul(A, B):
        shapes.append((A.shape, B.shape))
        return np.matmul(A.astype(np.float64), B.astype(np.float64)).astype(np.float32)

    ok = fpcert.certify(matmul, t, suite="certify", name="batched_matmul", case="batch_*")
    status = {c["case"]: c["status"] for c in ok.cases if c["case"].startswith("batch_")}
    assert status == {"batch_strided": "pass", "batch_broadcast_b": "pass", "batch_broadcast_a": "pass",
                      "batch_alpha_beta": "not_supported", "batch_transposed": "not_supported",
                      "batch_nt_aligned": "not_supported"}, repr(ok)
    assert ((5, 33, 29), (5, 29, 47)) in shapes  # batch_strided: 5 batches of 33 x 29 times 29 x 47
    assert ((4, 33, 29), (1, 29, 47)) in shapes  # batch_broadcast_b: B once
    assert all(len(c["batches"]) >= 3 for c in ok.cases if c["status"] == "pass" and c["case"].startswith("batch_"))

    def first_a_only(A, B):
        A0 = np.broadcast_to(A[:1], (max(A.shape[0], B.shape[0]),) + A.shape[1:])  # batch 0's A for every batch
        return np.matmul(A0.astype(np.float64), B.astype(np.float64)).astype(np.float32)

    bad = fpcert.certify(first_a_only, t, suite="certify", name="first_a_only", case="batch_*")
    cases = {c["case"]: c for c in bad.cases}
    assert cases["batch_strided"]["status"] == "fail" and cases["batch_broadcast_b"]["status"] == "fail"
    assert cases["batch_broadcast_a"]["status"] == "pass"  # one A for all batches: right there
    outcome = [b["passed"] for b in cases["batch_strided"]["batches"]]
    assert outcome[0] and not any(outcome[1:])

    plain = fpcert.certify(matmul, fpcert.traits("in=f32,acc=f32,out=f32"), suite="certify", name="plain", case="batch_*")
    assert all(c["status"] == "not_supported" for c in plain.cases if c["case"].startswith("batch_"))
    with pytest.raises(ValueError, match="batched"):
        fpcert.traits("in=f32,batched=maybe")


def test_shape_multiple_declared_cases_of_other_shapes_not_supported():
    # traits shape_multiple=16 (cuBLASLt's FP8 GEMM, torch._scaled_mm): a case whose M, N or K is no multiple of 16 is
    # "not supported" before the callable is asked, with the reason (shape_primes); one of multiples of 16 runs
    # (fill_device: 128 x 128 x 48 on the CPU).
    t = fpcert.traits("in=f32,acc=f32,out=f32,shape_multiple=16")
    assert t.shape_multiple == 16 and fpcert.traits("in=f32,acc=f32,out=f32").shape_multiple == 1
    shapes = []

    def matmul(A, B):
        shapes.append((A.shape, B.shape))
        return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)

    ok = fpcert.certify(matmul, t, suite="certify", name="multiples_of_16", case="fill_device")
    assert [c["status"] for c in ok.cases if c["case"] == "fill_device"] == ["pass"], repr(ok)
    no = fpcert.certify(matmul, t, suite="certify", name="multiples_of_16", case="shape_primes")
    prime = [c for c in no.cases if c["case"] == "shape_primes"]
    assert prime and prime[0]["status"] == "not_supported" and "multiples of 16" in prime[0]["reason"], repr(no)
    assert shapes and all(a[0] % 16 == 0 and a[1] % 16 == 0 and b[1] % 16 == 0 for a, b in shapes)
    with pytest.raises(fpcert.InputError):
        fpcert.traits("in=f32,shape_multiple=0")


def test_set_reference():
    """fpcert.set_reference: cpu, auto (the default from import: nothing asked until a reference of 2^27 products),
    gpu (RuntimeError naming the reason without a device); a bad word is a ValueError. References stay exact."""
    assert fpcert.set_reference("cpu") == "cpu-eigen"
    A, B = fpcert.generate("normal:m=33,n=17,k=300,seed=5")
    cpu = fpcert.reference(A, B)
    assert fpcert.set_reference("auto").startswith("auto: ")
    r = fpcert.reference(A, B)  # 168,300 products: below 2^27, the CPU oracle either way
    assert np.array_equal(r.hi, cpu.hi) and np.array_equal(r.lo, cpu.lo)
    with pytest.raises(ValueError, match="expected 'cpu', 'gpu' or 'auto'"):
        fpcert.set_reference("fast")
    try:
        chosen = fpcert.set_reference("gpu")
    except RuntimeError as e:
        assert "no usable CUDA device" in str(e)
    else:
        assert chosen == "gpu-cublas-dgemm"
    assert fpcert.set_reference("auto").startswith("auto: ")

