"""tests/python/test_diagnose_rows.py — fpcert.diagnose_softmax, diagnose_norm and diagnose_reduction (issue 47;
docs/python.md, "Diagnosing a kernel"; docs/diagnose.md, "Reductions, softmax and normalisation") on NumPy subjects whose
arithmetic is written out here, independently of the CPU models and fault injectors whose hypotheses should name it.

Each subject forces rounding: the quick suites' inputs are random fp32 values (nearly every one with bits below fp16's),
rows of 33 to 1000 entries, so a running sum rounded to fp16 (11 bits) loses bits at almost every addition, an ignored
weight and bias (neither 1 nor 0 on the affine cases) changes every element, and a sequential sum and a pairwise one
differ in the last bits of most rows. Every diagnosis is also checked against its opposite (the correct subject is not
named by the fault, the faulty one is not `declared`), so none of these tests can pass by a diagnosis that names the
same hypothesis whatever it is given."""
import time

import numpy as np
import pytest

import fpcert

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN and Inf rows of the specials cases

# The declaration of model_softmax_f32_shifted (`fpcert kernels`: "softmax shifted, in f32, compute f32, exp 1 ulp, sum f32
# sequential from +0, divide, out f32; masked rows zero"): exp = fp32 rounding of a double exp (libm, 1 ulp), a
# sequential fp32 row sum, a division, a fully masked row all zeros. Declared so, the callable's hypotheses are made
# from that model (its CPU twin).
SOFTMAX_F32 = dict(x="f32", exp="libm", log_impl="libm", sum="f32", order="sequential", masked_rows="zero", accepts_mask=True,
                   accepts_scale=True)


def softmax_seq(x, mask=None, scale=None, acc=np.float32):
    """Shifted softmax in fp32 (NumPy float32 operations: round to nearest even) over each row, exp(z - max) as the fp32
    rounding of float64's exp, the row sum a sequential loop whose running sum is rounded to `acc` after every addition
    (float64 sum of two values of at most 24 bits, then one rounding: exact unless their exponents are ~29 binades apart),
    each e_j / S rounded to fp32. A row with every entry masked (-inf) gives zeros."""
    z = x.astype(np.float32)
    if scale is not None:
        z = (np.float32(scale) * z).astype(np.float32)  # RN(s x) in fp32, as the operation defines the scaled cases
    if mask is not None:
        z = (z + mask.astype(np.float32)).astype(np.float32)
    with np.errstate(all="ignore"):
        m = z.max(axis=1, keepdims=True)  # NaN where the row holds one: z - m is NaN everywhere, so is the row
        full = np.isneginf(m[:, 0])
        m[full] = 0
        e = np.exp((z - m).astype(np.float64)).astype(np.float32)
        s = np.zeros(z.shape[0], dtype=acc)
        for j in range(z.shape[1]):
            s = (s.astype(np.float64) + e[:, j].astype(np.float64)).astype(acc)
        y = (e / s.astype(np.float32)[:, None]).astype(np.float32)
    y[full, :] = 0
    return y


def softmax_f16_row_sum(x, mask=None, scale=None):
    return softmax_seq(x, mask, scale, acc=np.float16)


def test_a_softmax_whose_row_sum_is_rounded_to_f16_is_diagnosed_as_smx_f16_row_sum():
    t0 = time.perf_counter()
    d = fpcert.diagnose_softmax(softmax_f16_row_sum, name="smx_f16_sum", **SOFTMAX_F32)
    print(f"diagnose_softmax: {time.perf_counter() - t0:.2f} s (the record's own: {d['seconds']:.2f} s)")
    assert d["kind"] == "consistent", d.text()
    assert d.top_is("fault=smx_f16_row_sum"), d.text()
    top = d["ranked"][0]
    assert top["elements"] > 100000, d.text()  # every case of softmax_quick ran (262336 elements in all)
    assert top["matched"] >= 0.9 * top["elements"], d.text()
    declared = next(h for h in d["ranked"] if h["id"] == "declared")
    assert declared["matched"] < 0.5 * declared["elements"], d.text()  # the f16 sum changes most elements
    assert "model_softmax_f32_shifted" in d.text()  # the hypotheses came from the CPU twin


def test_the_same_softmax_with_an_f32_row_sum_is_the_declared_arithmetic_on_the_cases_asked():
    cases = ["uniform_n33", "mask_rows"]
    d = fpcert.diagnose_softmax(softmax_seq, name="smx_f32_sum", cases=cases, **SOFTMAX_F32)
    assert d["kind"] == "declared", d.text()
    assert d.top_is("declared"), d.text()
    top = d["ranked"][0]
    assert top["matched"] >= 0.9 * top["elements"], d.text()
    assert d["cases"] == cases, d.text()  # only the cases asked for


def layernorm_seq(x, w, b, eps, affine=True):
    """Two-pass LayerNorm in fp32: the mean a sequential fp32 sum / n, the variance a sequential fp32 sum of (x - mean)^2
    / n, rs = fp32(1 / sqrt(var + eps)) (the square root and the division in float64, one rounding to fp32: within 0.5 ulp
    + 2^-28 ulp), y = (x - mean) * rs, then * weight + bias, each an fp32 operation. affine=False ignores weight and bias."""
    x = x.astype(np.float32)
    n = np.float32(x.shape[1])
    s = np.zeros(x.shape[0], np.float32)
    for j in range(x.shape[1]):
        s = (s + x[:, j]).astype(np.float32)
    mean = (s / n).astype(np.float32)
    d = (x - mean[:, None]).astype(np.float32)
    q = np.zeros(x.shape[0], np.float32)
    for j in range(x.shape[1]):
        q = (q + (d[:, j] * d[:, j]).astype(np.float32)).astype(np.float32)
    t = ((q / n).astype(np.float32) + np.float32(eps)).astype(np.float32)
    rs = (1.0 / np.sqrt(t.astype(np.float64))).astype(np.float32)
    y = (d * rs[:, None]).astype(np.float32)
    if affine and w is not None:
        y = (y * w.astype(np.float32)).astype(np.float32)
    if affine and b is not None:
        y = (y + b.astype(np.float32)).astype(np.float32)
    return y


def layernorm_numpy(x, w, b, eps):
    """A correct LayerNorm as NumPy users write it: np.mean / np.var in float32 (NumPy's pairwise sums, another order
    than the model's sequential one), then the affine part."""
    x = x.astype(np.float32)
    mean = x.mean(axis=1, dtype=np.float32, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, dtype=np.float32, keepdims=True)
    y = ((x - mean) / np.sqrt(var + np.float32(eps))).astype(np.float32)
    if w is not None:
        y = y * w.astype(np.float32)
    if b is not None:
        y = y + b.astype(np.float32)
    return y.astype(np.float32)


# model_layernorm_f32_twopass's declaration: two-pass variance, fp32 compute and sums, rsqrt 1 ulp, fp32 out.
LAYERNORM_F32 = dict(variance="two_pass", x="f32", compute="f32", acc="f32", rsqrt="ulps:1")


def test_a_layernorm_that_ignores_weight_and_bias_is_diagnosed_as_norm_affine_ignored():
    t0 = time.perf_counter()
    d = fpcert.diagnose_norm(lambda x, w, b, eps: layernorm_seq(x, w, b, eps, affine=False), name="ln_no_affine", **LAYERNORM_F32)
    print(f"diagnose_norm: {time.perf_counter() - t0:.2f} s (the record's own: {d['seconds']:.2f} s)")
    assert d["kind"] == "consistent", d.text()
    assert d.top_is("fault=norm_affine_ignored"), d.text()
    top = d["ranked"][0]
    assert top["matched"] >= 0.9 * top["elements"], d.text()
    assert not d.top_is("declared")


def test_a_correct_two_pass_layernorm_is_declared_and_within_its_envelope():
    d = fpcert.diagnose_norm(layernorm_numpy, "layernorm", name="ln_numpy", **LAYERNORM_F32)
    assert d["kind"] == "declared", d.text()
    declared = next(h for h in d["ranked"] if h["id"] == "declared")
    assert declared["envelope_holds"], d.text()
    assert not d.top_is("fault=norm_affine_ignored"), d.text()


def sum_sequential(x):
    """A sequential fp32 sum of each row: s = fp32(s + x_j), j = 0, 1, ... (NumPy float32 addition: one rounding)."""
    s = np.zeros(x.shape[0], np.float32)
    for j in range(x.shape[1]):
        s = (s + x[:, j].astype(np.float32)).astype(np.float32)
    return s


def test_a_sequential_sum_declared_pairwise_is_diagnosed_as_sequential():
    t0 = time.perf_counter()
    d = fpcert.diagnose_reduction(sum_sequential, "sum", x="f32", acc="f32", order="pairwise", name="seq_as_pairwise")
    print(f"diagnose_reduction: {time.perf_counter() - t0:.2f} s (the record's own: {d['seconds']:.2f} s)")
    assert d["kind"] == "consistent", d.text()
    assert d.top_is("order=sequential"), d.text()
    top = d["ranked"][0]
    assert top["matched"] == top["elements"], d.text()  # the emulation of a sequential fp32 sum is exact: every vector
    declared = next(h for h in d["ranked"] if h["id"] == "declared")
    assert declared["matched"] < declared["elements"], d.text()  # pairwise differs somewhere (else the test proves nothing)
    # the same callable declared sequential is the declared arithmetic
    s = fpcert.diagnose_reduction(sum_sequential, x="f32", order="sequential", name="seq_as_seq")
    assert s["kind"] == "declared" and s.top_is("declared"), s.text()


def _registered(prefix):
    names = []
    for op in ("reduction", "softmax", "norm"):
        names += [k for k in fpcert.kernel_names(True, op) if k.startswith(prefix)]
    return names


def test_bad_declarations_are_input_errors_and_leave_nothing_registered():
    bad = [
        (lambda: fpcert.diagnose_norm(layernorm_numpy, "batchnorm", name="bad"), "unknown kind 'batchnorm'"),
        (lambda: fpcert.diagnose_softmax(softmax_seq, x="f12", name="bad"), "unknown format 'f12'"),
        (lambda: fpcert.diagnose_reduction(sum_sequential, "prod", name="bad"), "unknown reduction kind 'prod'"),
        (lambda: fpcert.diagnose_reduction(sum_sequential, order="zigzag", name="bad"), "unknown order 'zigzag'"),
        (lambda: fpcert.diagnose_softmax(softmax_seq, exponent="libm", name="bad"), "unknown keyword(s) exponent"),
        (lambda: fpcert.diagnose_softmax(softmax_seq, suite="norm_quick", name="bad"), "'norm_quick' is not a softmax suite"),
        # read, registered, then refused by the diagnosis itself: the kernel must be removed on that exception too
        (lambda: fpcert.diagnose_reduction(sum_sequential, cases=["no_such_case"], name="bad"), "no case 'no_such_case'"),
    ]
    for call, message in bad:
        with pytest.raises(fpcert.InputError) as e:
            call()
        assert message in str(e.value), str(e.value)
        assert _registered("python:bad") == [], _registered("python:bad")
    # the name is free again: a diagnosis under it runs (one case, a sequential sum declared so)
    d = fpcert.diagnose_reduction(sum_sequential, order="sequential", cases=["uniform_n1000"], name="bad")
    assert d["kind"] == "declared", d.text()
    assert _registered("python:bad") == []


def test_a_diagnosis_leaves_no_kernel_made_from_the_callable():
    # declared with an order no CPU model declares (blocked:64), the hypotheses are made from the callable itself:
    # its mutants python:own~red_* and variants are registered for the diagnosis, and must be gone after it
    d = fpcert.diagnose_reduction(sum_sequential, order="blocked:64", cases=["uniform_n1000"], name="own")
    assert any("made from the kernel itself" in n or "no CPU model" in n for n in d["notes"]), d.text()
    assert _registered("python:own") == [], _registered("python:own")


def test_diagnose_by_name_takes_row_kernels():
    # fpcert.diagnose with a registered reduction kernel's name diagnoses it on its operation's suite (no GEMM case), and
    # a mutant of it (registered on first use) is named by its fault
    d = fpcert.diagnose("model_sum_f32_pairwise", suite="quick")
    assert d["kind"] == "declared", d.text()
    m = fpcert.diagnose("model_sum_f32_pairwise~red_drop", suite="quick")
    assert m["kind"] == "consistent" and m.top_is("fault=red_drop"), m.text()


def test_an_own_declaration_that_fails_its_checks_is_no_declared_verdict():
    # sum_sequential declared blocked:64: no CPU model declares that order, so the hypotheses are the callable's own; the
    # runner's bitwise tier refuses the order (a sequential sum is not blocked by 64 on 1000 terms): a logic error
    d = fpcert.diagnose_reduction(sum_sequential, order="blocked:64", cases=["uniform_n1000"], name="own_bad")
    assert d["kind"] == "logic_error", d.text()
