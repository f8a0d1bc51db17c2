"""tests/python/test_audit.py — fpcert.audit and the replacement (docs/python.md, "Auditing a test's rule";
docs/audit.md) on NumPy callables: issue 46's public cases that apply to a GEMM, rebuilt with their findings derived
by hand below (ulp arithmetic), the rule arguments as torch.testing.assert_close takes them, and the pytest fixture."""
import numpy as np
import pytest

import fpcert


def f32_exact(A, B):
    """A correctly rounded fp32 GEMM: float64 sums of exact fp32 products (exact for these K and magnitudes: products
    of 24-bit significands fit in 48 bits, 256 of them below 2^8 in 53 bits of float64 lose at most 2^-45 relatively,
    far below half an fp32 ulp, 2^-24), rounded once to fp32."""
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)


def bf16_values(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def bf16_exact(A, B):
    """A correctly rounded bf16 GEMM of bf16 inputs (uint16 bits): the float64 product (exact here: K = 96 products of
    8-bit significands, 16 bits each, sums below 2^5) rounded to nearest-even into bf16 by fpcert.encode."""
    return fpcert.encode("bf16", bf16_values(A) @ bf16_values(B)).astype(np.uint16)


def test_tf32_passes_as_fp32_at_allclose_1e2_and_fpcert_refuses_it():
    # Issue 46: "TF32 passes as fp32 at 1e-2 (~7x for free)". Inputs uniform [0, 1]: tf32 keeps p = 11, so each operand
    # moves by at most 2^-11 relatively, each product by at most ~2^-10 ~ 1e-3, and with every term positive each output
    # by at most ~1e-3 relatively: below rtol = 1e-2 on every element, on every seed. fpcert's envelope for fp32
    # accumulation (order unknown) over K = 256 allows about K u = 256 * 2^-24 ~ 1.5e-5 relatively: 1e-3 is far outside.
    a = fpcert.audit(f32_exact, "in=f32,acc=f32,out=f32", shape=(16, 16, 256), inputs="uniform:lo=0,hi=1", seeds=(1, 2, 3),
                     rtol=1e-2, atol=1e-2)
    m = a.mutant("inputs_tf32")
    assert m["dormant"] == 0 and m["rule_passed"] == 3 and m["fpcert_refused"] == 3
    assert "inputs_tf32" in a.passed_mutants()
    assert a["false_alarms"]["variants"][0]["fpcert"] == "pass 3/3"  # the callable itself: fpcert passes it
    assert a.flake_rate == 0
    # zeros errs by |ref| ~ 64 >> 1e-2 + 1e-2 * 64: the rule refuses it
    assert a.mutant("zeros")["rule_passed"] == 0
    assert "inputs_tf32" in str(a)  # the tables


def test_atol_006_on_bf16_outputs_in_16_32_is_unsatisfiable():
    # Issue 46: "atol=0.06 is below half an ulp for bf16 outputs in [16, 32)". There a bf16 ulp is 2^(4-7) = 0.125, so
    # a correctly rounded output may lie 0.0625 from the exact product: P(error > 0.06) ~ 0.0025 / 0.0625 = 4 % per
    # element, and over 2 x 1024 elements some fail on both seeds (P(none on a seed) ~ 0.96^1024 ~ e^-42).
    # Inputs uniform [0, 1], K = 96: outputs of mean 24, standard deviation ~2.2, all in [16, 32) in practice.
    a = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", shape=(32, 32, 96), inputs="uniform:lo=0,hi=1", seeds=(1, 2),
                     rtol=0, atol=0.06, mutants=False)
    assert a.unsatisfiable and a["static"]["cr_fail_runs"] == 2
    assert a["static"]["findings"][0].startswith("UNSATISFIABLE")
    assert a.flake_rate == 1.0  # every correct order fails on every seed
    assert a["power"] == []


def test_flashattention_2x_rule_at_bf16_on_a_numpy_kernel():
    # Issue 46: FlashAttention's "error at most 2x the PyTorch bf16 reference's". Same outputs in [16, 32): the bf16
    # reference (fp32 accumulation, one rounding into bf16) errs by at most 0.0625 + 95 * 32 * 2^-24 (~1.8e-4), and by
    # more than 0.06 somewhere among 1024 elements (P(not) ~ e^-42): tolerance 2 E in [0.12, 0.1254]. The callable is
    # correctly rounded (error <= 0.0625): ratio <= 0.0625 / 0.12 ~ 0.52, no false alarm; the admissible orders err by
    # at most 0.0625 + 1.8e-4. bf16 accumulation (~30 roundings of up to 0.0625 once the sum passes 16) errs by well
    # over 0.125 on some element: refused; zeros errs by >= 16: refused.
    a = fpcert.audit(bf16_exact, "in=bf16,acc=f32,out=bf16", shape=(32, 32, 96), inputs="uniform:lo=0,hi=1", seeds=(1, 2),
                     rule="kref:k=2,p=bf16")
    assert all(0.06 <= e <= 0.0627 for e in a["static"]["kref_err"])
    assert a.flake_rate == 0 and not a.unsatisfiable
    assert a["false_alarms"]["variants"][0]["worst_ratio"] <= 0.0625 / 0.12
    assert a.mutant("acc_bf16")["rule_passed"] == 0
    assert a.mutant("zeros")["rule_passed"] == 0


def test_audit_rule_arguments_as_torch_testing_takes_them():
    # neither rtol nor atol: torch.testing.assert_close's defaults for the output dtype (bf16: 1.6e-2, 1e-5)
    a = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", shape=(8, 8, 16), seeds=(1,), mutants=False)
    assert a["rule"] == "allclose:rtol=0.016,atol=1e-05"
    b = fpcert.audit(None, dtype="bfloat16", shape=(8, 8, 16), seeds=(1,), mutants=False)  # traits from the dtype
    assert b["traits"] == a["traits"]
    with pytest.raises(ValueError, match="both rtol and atol"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", rtol=1e-2)
    with pytest.raises(ValueError, match="not both"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", rtol=1e-2, atol=1e-2, rule="maxabs:tol=1")
    with pytest.raises(ValueError, match="only GEMMs"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", op="conv2d")
    with pytest.raises(ValueError, match="unknown kind"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", rule="frobenius:tol=1")
    # a registered kernel by name, the relfro and cosine rules
    c = fpcert.audit(None, "model_gemm_f16_f32acc", shape=(16, 16, 64), seeds=(1,), rule="cosine:min=0.99", mutants=False)
    assert c["kernel"] == "model_gemm_f16_f32acc" and c.flake_rate == 0


def test_audit_a_wrong_numpy_kernel_the_rule_misses():
    # A kernel that drops the last product (k_minus_1 as a user's bug) checked at allclose 1e-2 with outputs ~ 1e-3
    # (inputs uniform [0, 2^-7], K = 64: 64 products of mean 2^-16): |0 - ref| ~ 1e-3 <= atol = 1e-2, so even zeros pass.
    a = fpcert.audit(f32_exact, "in=f32,acc=f32,out=f32", shape=(16, 16, 64), inputs="uniform:lo=0,hi=0.0078125", seeds=(1, 2),
                     rtol=1e-2, atol=1e-2)
    assert a.mutant("zeros")["rule_passed"] == 2 and a.mutant("zeros")["fpcert_refused"] == 2
    assert "zeros" in a.passed_mutants()
    assert a["static"]["admit_zero"] == a["static"]["elements"]


def test_assert_close_op_keyword_and_the_fixture(fpcert_assert_close):
    A, B = fpcert.generate("uniform:m=8,n=8,k=32,seed=3")
    C = f32_exact(A, B)
    fpcert.assert_close(C, A, B, "in=f32,products=f32,acc=f32,out=f32", op="matmul")
    with pytest.raises(ValueError, match="only GEMMs"):
        fpcert.assert_close(C, A, B, op="softmax")
    case = fpcert_assert_close(C, A, B, traits="in=f32,products=f32,acc=f32,out=f32")
    assert case["status"] == "pass" and "test_assert_close_op_keyword_and_the_fixture" in case["case"]
    wrong = C.copy()
    wrong[2, 3] = np.float32(wrong[2, 3] * np.float32(1.01))  # 1 % off: far outside the fp32 bound
    with pytest.raises(AssertionError, match="C\\[2, 3\\]"):
        fpcert_assert_close(wrong, A, B, traits="in=f32,products=f32,acc=f32,out=f32")


def test_audit_torch_matmul_cpu():
    torch = pytest.importorskip("torch", reason="torch is not installed (CI has none): torch.matmul is audited on the H200")
    a = fpcert.audit(torch.matmul, "in=f32,products=f32,acc=f32,out=f32", shape=(16, 16, 64), seeds=(1,), rtol=1e-2, atol=1e-2,
                     device="cpu")
    assert a.mutant("zeros")["rule_passed"] == 0


def test_batch_invariance_declared_on_a_numpy_kernel():
    # A kernel whose arithmetic depends on the batch size, as a library picking its path from M: below 8 rows it
    # accumulates in float32 (each exact fp32 product, exact in float64, added then rounded to fp32 at every step),
    # from 8 rows it rounds the float64 sum once (f32_exact). The probe rows run alone (M = 1) and at M = 2, 3, 7 take the
    # same path, so their bits agree; at M = 64 and 257 they are rounded once instead of 64 times, which changes some of
    # the 16 columns of each probe row on random data. Reproducibility: both paths are plain NumPy, the same every call.
    def by_batch(A, B):
        if A.shape[0] >= 8:
            return f32_exact(A, B)
        acc = np.zeros((A.shape[0], B.shape[1]), dtype=np.float32)
        for t in range(A.shape[1]):
            acc = (acc.astype(np.float64) + np.outer(A[:, t].astype(np.float64), B[t, :].astype(np.float64))).astype(np.float32)
        return acc

    a = fpcert.audit(by_batch, "in=f32,acc=f32,out=f32", shape=(16, 16, 64), seeds=(3,), rule="fpcert", mutants=False,
                     batch_invariant=True)
    sizes = {b["batch"]: b for b in a["batch_invariance"]["sizes"]}
    assert a["batch_invariance"]["declared"]
    assert [sizes[m]["differ"] for m in (2, 3, 7)] == [0, 0, 0]
    assert sizes[64]["differ"] == 3 and sizes[257]["differ"] == 3
    assert a["reproducibility"]["reproducible"] and a["reproducibility"]["runs"] == 3
    # the same kernel undeclared: reproducibility reported, batch invariance not checked
    b = fpcert.audit(f32_exact, "in=f32,acc=f32,out=f32", shape=(16, 16, 64), seeds=(3,), rule="fpcert", mutants=False)
    assert not b["batch_invariance"]["declared"] and b["batch_invariance"]["sizes"] == []
    assert b["reproducibility"]["reproducible"]


def test_audit_on_the_tests_own_tensors():
    # C = [16, 2^-4, 2^-9] . [1, 1, 1] = 16.064453125 exactly; the bf16 neighbours are 16 and 16.125 (ulp 2^(4-7) in
    # [16, 32)), so the correctly rounded output is 0.060546875 away: atol = 0.06 is unsatisfiable, 0.061 is not.
    A = np.array([[16, 0.0625, 2.0 ** -9]], np.float32)
    B = np.ones((3, 1), np.float64)
    bad = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rtol=0, atol=0.06, mutants=False)
    assert (bad["m"], bad["n"], bad["k"]) == (1, 1, 3)
    assert bad["static"]["cr_fail_runs"] == 1 and bad.flake_rate == 1
    assert fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rtol=0, atol=0.061, mutants=False)["static"]["cr_fail_runs"] == 0
    # A zeros kernel passes allclose 1e-2 where every |C_ij| <= 8 * 2^-8 * 2^-8 = 2^-13 < 1e-2 (tiny tensors: entries in
    # [0, 2^-8)), and is caught on the same tensors times 2^8 (|C_ij| ~ 8 / 4 = 2 >> 1e-2 + 1e-2 |C_ij|, almost surely)
    rng = np.random.default_rng(46)
    At, Bt = (rng.random((4, 8)) / 256).astype(np.float32), (rng.random((8, 4)) / 256).astype(np.float32)
    tiny = fpcert.audit(f32_exact, "in=f32,acc=f32,out=f32", A=At, B=Bt, rtol=1e-2, atol=1e-2)
    assert tiny.mutant("zeros")["rule_passed"] == 1 and tiny.mutant("zeros")["fpcert_refused"] == 1
    big = fpcert.audit(f32_exact, "in=f32,acc=f32,out=f32", A=At * 256, B=Bt * 256, rtol=1e-2, atol=1e-2)
    assert big.mutant("zeros")["rule_passed"] == 0
    # bad input: NaN, shape mismatch, 1-D, A without B, seeds beside the tensors
    with pytest.raises(fpcert.InputError, match="NaN at"):
        fpcert.audit(None, "in=f32,acc=f32,out=f32", A=np.array([[1.0, np.nan]]), B=np.ones((2, 1)), rule="maxabs:tol=1")
    with pytest.raises(fpcert.InputError, match="shape mismatch"):
        fpcert.audit(None, "in=f32,acc=f32,out=f32", A=np.ones((2, 3)), B=np.ones((2, 1)), rule="maxabs:tol=1")
    with pytest.raises(fpcert.InputError, match="2-D"):
        fpcert.audit(None, "in=f32,acc=f32,out=f32", A=np.ones(3), B=np.ones((3, 1)), rule="maxabs:tol=1")
    with pytest.raises(fpcert.InputError, match="both A and B"):
        fpcert.audit(None, "in=f32,acc=f32,out=f32", A=np.ones((1, 3)), rule="maxabs:tol=1")
    with pytest.raises(fpcert.InputError, match="do not go with"):
        fpcert.audit(None, "in=f32,acc=f32,out=f32", A=np.ones((1, 3)), B=np.ones((3, 1)), seeds=(1,), rule="maxabs:tol=1")


def test_audit_reference_the_test_compares_with():
    # k = 1, bf16: a_i b_j = 1 + (c + d) 2^-7 + c d 2^-14 is exact in fp32 and not a bf16 value (c d >= 1): atol = 0 is
    # unsatisfiable against the exact product, and met by every correct order against the product stored in bf16.
    A = np.array([[1 + 1 / 128], [1 + 3 / 128], [1 + 5 / 128]], np.float32)
    B = np.array([[1 + 1 / 128, 1 + 7 / 128]], np.float32)
    spec = "in=bf16,acc=f32,out=bf16"
    exact = fpcert.audit(None, spec, A=A, B=B, rtol=0, atol=0, mutants=False)
    assert exact["reference_kind"] == "exact" and exact.unsatisfiable and exact.flake_rate == 1
    out = fpcert.audit(None, spec, A=A, B=B, rtol=0, atol=0, mutants=False, reference="out")
    assert out["reference_kind"] == "out" and not out.unsatisfiable and out.flake_rate == 0
    with pytest.raises(fpcert.InputError, match="exact, f32 or out"):
        fpcert.audit(None, spec, A=A, B=B, rtol=0, atol=0, mutants=False, reference="fp64")


def test_a_test_function_wrapped_its_own_assertion_audited():
    # fp16 outputs, numpy.testing.assert_allclose(rtol=1e-4): half an ulp of fp16 is 2^-11 ~ 4.9e-4 relative, so no fp16
    # output can meet rtol 1e-4 in general: the test passes on this kernel only where its outputs happen to be exact,
    # and the wrapper fails it as unsatisfiable with the tables.
    rng = np.random.default_rng(7)
    A = rng.random((8, 16)).astype(np.float16)
    B = rng.random((16, 8)).astype(np.float16)

    @fpcert.audited(k=16, mutants=False, seeds=(1, 2))
    def test_fp16_matmul():
        out = (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float16)
        np.testing.assert_allclose(out, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4)

    with pytest.raises(AssertionError, match="rtol=0.0001"):
        test_fp16_matmul()

    # fp32 outputs at rtol 1e-2: satisfiable, no false alarm over the admissible orders: the wrapped test passes, and
    # its audit is kept on the wrapper. The shape comes from the actual (8 x 8), k from the decorator.
    A32, B32 = A.astype(np.float32), B.astype(np.float32)

    @fpcert.audited(k=16, mutants=False, seeds=(1, 2))
    def test_fp32_matmul():
        np.testing.assert_allclose(A32 @ B32, A32.astype(np.float64) @ B32.astype(np.float64), rtol=1e-2, atol=1e-3)

    test_fp32_matmul()
    (a,) = test_fp32_matmul.fpcert_audits
    assert (a["m"], a["n"], a["k"]) == (8, 8, 16) and not a.unsatisfiable and a.flake_rate == 0

    @fpcert.audited(k=16)
    def test_no_assertion():
        pass

    with pytest.raises(fpcert.InputError, match="made no assert_close"):
        test_no_assertion()


def test_audit_on_float16_and_bfloat16_tensors_stored_without_rounding():
    # The 1 x 3 . 3 x 1 case above (C = 16 + 2^-4 + 2^-9, unsatisfiable at atol 0.06 for bf16 outputs) with A as bfloat16
    # bits (uint16: 16 = 0x4180, 2^-4 = 0x3D80, 2^-9 = 0x3B00, binary32's upper halves) and B as float16 ones: every
    # value exact in bf16, so nothing is rounded into the kernel's bf16 inputs and the finding says so.
    A = np.array([[0x4180, 0x3D80, 0x3B00]], np.uint16)
    B = np.ones((3, 1), np.float16)
    a = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rtol=0, atol=0.06, mutants=False)
    assert a.unsatisfiable and (a["m"], a["n"], a["k"]) == (1, 1, 3)
    findings = " ".join(a["static"]["findings"])
    assert "stored in bf16/f16, no rounding" in findings and "were rounded" not in findings
    # float16 with 1 + 2^-10 (11 significant bits): not a bf16 value (8 bits), rounded into the bf16 inputs and counted
    A16 = np.array([[16, 0.0625, 2.0 ** -9, 1 + 2.0 ** -10]], np.float16)
    b = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A16, B=np.ones((4, 1), np.float16), rtol=0, atol=0.06, mutants=False)
    assert "1 of A's 4 values and 0 of B's 4 were rounded" in " ".join(b["static"]["findings"])
    # the same uint16 bits read as float16 (A_format="f16"): 0x4180 = 2 (1 + 3/8) = 2.75; fp16 inputs declared, stored exactly
    c = fpcert.audit(None, "in=f16,acc=f32,out=f32", A=A, B=B, A_format="f16", rule="maxabs:tol=1", mutants=False)
    assert "stored in f16, no rounding" in " ".join(c["static"]["findings"])
    with pytest.raises(fpcert.InputError, match="A_format='e4m3'"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, A_format="e4m3", rule="maxabs:tol=1")
    with pytest.raises(fpcert.InputError, match="names the format of uint16 bits"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A16, B=np.ones((4, 1)), A_format="bf16", rule="maxabs:tol=1")


def test_audit_allow_tf32_turns_tf32_into_correct_arithmetic():
    # fp32, rtol 1e-5, inputs uniform [0, 1] with K = 256: fp32 orders err by ~sqrt(K) 2^-24 ~ 1e-6 relatively (no false
    # alarm), TF32 by ~2^-11 sqrt(2/3) / sqrt(K) per element ~ 2e-5 and more at the largest elements (docs/audit.md,
    # "Allowed arithmetic"): with allow=("tf32",) the TF32 rows fail the rule, and inputs_tf32 is not a mutant any more.
    kw = dict(shape=(16, 16, 256), inputs="uniform:lo=0,hi=1", seeds=(1, 2), rtol=1e-5, atol=1e-8)
    plain = fpcert.audit(None, "in=f32,acc=f32,out=f32", **kw)
    assert plain.flake_rate == 0 and plain.mutant("inputs_tf32")["rule_passed"] == 0
    a = fpcert.audit(None, "in=f32,acc=f32,out=f32", allow=("tf32",), **kw)
    assert a["allow"] == ["tf32"]
    rows = {v["name"]: v for v in a["false_alarms"]["variants"]}
    assert all(v["rule_failed"] == v["runs"] for n, v in rows.items() if n.startswith("tf32 "))
    assert all(v["rule_failed"] == 0 for n, v in rows.items() if not n.startswith("tf32 "))
    with pytest.raises(KeyError):
        a.mutant("inputs_tf32")
    with pytest.raises(fpcert.InputError, match="admits fp32 inputs"):
        fpcert.audit(None, "in=bf16,acc=f32,out=bf16", allow="tf32", **kw)


def test_audit_of_a_softmax_test_kernelbench_allclose_1e2():
    # KernelBench's softmax rule, allclose atol = rtol = 1e-2, at 8 rows of 4096 logits uniform in [-4, 4]: every output
    # is at most e^4 / sum_j e^{z_j} ~ 54.6 / (4096 * 6.8) ~ 2e-3 < 1e-2, so all zeros passes (docs/audit.md, "Softmax").
    a = fpcert.audit(None, "model_softmax_f32_shifted", op="softmax", shape=(8, 4096), seeds=(1,), rtol=1e-2, atol=1e-2)
    assert a["op"] == "softmax" and a.flake_rate == 0
    assert a["static"]["admit_zero"] == a["static"]["elements"] == 8 * 4096
    assert a.mutant("smx_zeros")["rule_passed"] == 1 and a.mutant("smx_zeros")["fpcert_refused"] == 1
    assert "constant" in a.passed_mutants()
    with pytest.raises(fpcert.InputError, match="give rtol and atol"):
        fpcert.audit(None, "model_softmax_f32_shifted", op="softmax", shape=(8, 64))
    with pytest.raises(fpcert.InputError, match="registered softmax kernel"):
        fpcert.audit(f32_exact, "model_softmax_f32_shifted", op="softmax", rtol=1e-2, atol=1e-2)


def test_audit_of_row_operations_log_softmax_masks_logits_and_layernorm():
    # log-softmax of logits spread over 2048: outputs down to about -2048, where half an f32 ulp (2^-13 at |y| >= 1024) is
    # above atol = 1e-5, so even the correctly rounded outputs fail allclose(rtol=0, atol=1e-5); softmax's do not
    # (outputs in [0, 1]). Counted here from the logits in float64 (fpcert.generate gives the generator's logits).
    X, _ = fpcert.generate("softmax:spread=2048,rows=8,cols=128,seed=1,source=f32")
    X = X.astype(np.float64)
    y = X - X.max(axis=1, keepdims=True)
    y = y - np.log(np.exp(y).sum(axis=1, keepdims=True))
    assert (np.abs(y) >= 1024).mean() > 0.2  # the derivation's premise: many outputs where half an ulp > 1e-5
    a = fpcert.audit(None, "model_log_softmax_f32_shifted", op="log_softmax", shape=(8, 128), seeds=(1,),
                     inputs="softmax:spread=2048", rtol=0, atol=1e-5, mutants=False)
    assert a["op"] == "log_softmax" and a.unsatisfiable and a.flake_rate == 1
    s = fpcert.audit(None, "model_softmax_f32_shifted", op="softmax", shape=(8, 128), seeds=(1,),
                     inputs="softmax:spread=2048", rtol=0, atol=1e-5, mutants=False)
    assert not s.unsatisfiable and s.flake_rate == 0
    # the test's own logits, -inf masking a row's tail, declared by traits: bf16 storage, fpcert's rule
    L = np.tile(np.linspace(-3, 3, 48, dtype=np.float32), (4, 1))
    L[1, 10:] = -np.inf
    d = fpcert.audit(None, "in=bf16,exp=expf", op="softmax", A=L, rule="fpcert")
    assert d["m"] == 4 and d["n"] == 48 and d.flake_rate == 0
    assert d.mutant("smx_mask_after_exp")["fpcert_refused"] == 1
    with pytest.raises(fpcert.InputError, match="unknown key 'acc'"):
        fpcert.audit(None, "in=bf16,acc=f32", op="softmax", A=L, rule="fpcert")
    # LayerNorm, bf16 outputs: rtol = atol = 1e-5 is unsatisfiable (bf16 keeps 8 bits); allclose 1e-2 passes eps 100x
    # and bf16 statistics, which fpcert refuses
    u = fpcert.audit(None, "model_layernorm_bf16_twopass", op="layernorm", shape=(8, 512), seeds=(1,), rtol=1e-5, atol=1e-5,
                     mutants=False)
    assert u.unsatisfiable
    loose = fpcert.audit(None, "model_layernorm_bf16_twopass", op="layernorm", shape=(8, 512), seeds=(1, 2), rtol=1e-2, atol=1e-2)
    assert loose.flake_rate == 0
    for m in ("eps_x100", "stats_bf16"):
        assert loose.mutant(m)["rule_passed"] == 2 and loose.mutant(m)["fpcert_refused"] == 2, m
    assert "eps_x100" in loose.passed_mutants()
    with pytest.raises(fpcert.InputError, match="declares a layernorm"):
        fpcert.audit(None, "model_layernorm_bf16_twopass", op="rmsnorm", rtol=1e-2, atol=1e-2)


def test_audit_of_python_row_callables_softmax_and_layernorm():
    # A NumPy softmax computed in float64 and rounded once to float32: within half an f32 ulp plus ~1e-16 of the exact
    # softmax, so fpcert passes it under the declaration "in=f32" (fl32 of glibc's exp, any row-sum order) and no
    # sampled arithmetic fails KernelBench's allclose 1e-2; every output is below ~2e-3 < atol (8 rows of 4096 logits in
    # [-4, 4]), so the rule passes all zeros (smx_zeros, made around the callable), which fpcert refuses.
    def softmax64(x, mask=None, scale=1.0):
        z = x.astype(np.float64) * scale
        if mask is not None:
            z = z + mask
        with np.errstate(invalid="ignore"):  # a fully masked row: -inf - (-inf) = NaN, as torch.softmax gives
            z = z - z.max(axis=1, keepdims=True)
            e = np.exp(z)
            return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)
    a = fpcert.audit(softmax64, "in=f32", op="softmax", shape=(8, 4096), seeds=(1,), rtol=1e-2, atol=1e-2)
    assert a["kernel"] == "python:test_audit_of_python_row_callables_softmax_and_layernorm.<locals>.softmax64"
    assert a["false_alarms"]["variants"][0]["fpcert"] == "pass 1/1" and a.flake_rate == 0
    assert a.mutant("smx_zeros")["rule_passed"] == 1 and a.mutant("smx_zeros")["fpcert_refused"] == 1
    # the same callable with masks: its -inf entries give exact zeros, fully masked rows NaN (0/0 in float64) where the
    # declaration says zero: fpcert refuses it, and so does the rule (a NaN output against a reference of 0)
    m = fpcert.audit(softmax64, "in=f32", op="softmax", shape=(8, 64), seeds=(1,), inputs="softmax:mask=rows", rtol=1e-2, atol=1e-2,
                     mutants=False)
    assert m["false_alarms"]["variants"][0]["fpcert"] == "pass 0/1" and m["false_alarms"]["variants"][0]["rule_failed"] == 1
    ok = fpcert.audit(softmax64, "in=f32,masked_rows=nan", op="softmax", shape=(8, 64), seeds=(1,), inputs="softmax:mask=rows",
                      rule="allclose:rtol=1e-2,atol=1e-2,equal_nan=1", mutants=False)
    assert ok["false_alarms"]["variants"][0]["fpcert"] == "pass 1/1" and ok.flake_rate == 0 and not ok.unsatisfiable

    # A LayerNorm in float64 rounded once to float32, declared "in=f32": inside fpcert's bound, and rtol = atol = 1e-5
    # holds for every sampled order (fp32 arithmetic errs by ~1e-7 relatively); eps 100x moves the outputs by ~1.5e-3
    # relatively on x uniform in [-1, 1] (var 1/3), which this rule refuses, as it does all zeros.
    def layer_norm64(x, w, b, eps):
        x = x.astype(np.float64)
        y = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)
        if w is not None:
            y = y * w.astype(np.float64)
        if b is not None:
            y = y + b.astype(np.float64)
        return y.astype(np.float32)
    n = fpcert.audit(layer_norm64, "in=f32", op="layernorm", shape=(8, 512), seeds=(1, 2), rtol=1e-5, atol=1e-5)
    assert n["false_alarms"]["variants"][0]["fpcert"] == "pass 2/2" and n.flake_rate == 0
    assert n.mutant("eps_x100")["rule_passed"] == 0 and n.mutant("norm_zeros")["rule_passed"] == 0
    with pytest.raises(fpcert.InputError, match="registered norm kernel"):
        fpcert.audit(layer_norm64, "model_layernorm_f32_twopass", op="layernorm", rtol=1e-5, atol=1e-5)
