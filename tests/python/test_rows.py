"""fpcert.certify_softmax and fpcert.certify_norm (python/fpcert/rows.py; docs/python.md, "Softmax and normalisation").

The correct subjects compute in float64 and round once into the output format: more accurate than the f32 arithmetic
they declare, so every case must pass. The wrong ones are the faults the issue lists, each expected to be refused by
the derived bound (not by a tolerance written here)."""
import numpy as np
import pytest

import fpcert

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN and Inf rows of the specials cases


def softmax64(x, mask=None, scale=None):
    z = x.astype(np.float64)
    if scale is not None:
        z = (np.float32(scale) * x.astype(np.float32)).astype(np.float64)  # RN(s x) in fp32, as the operation defines
    if mask is not None:
        z = z + mask.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(x.dtype)


def test_softmax_float64_rounded_once_passes_every_case_and_zeros_fail():
    ok = fpcert.certify_softmax(softmax64, x="f32", exp="libm", accepts_mask=True, accepts_scale=True, name="softmax64")
    assert ok.passed, repr(ok)
    assert not any(c["status"] == "not_supported" for c in ok.cases), repr(ok)
    zeros = fpcert.certify_softmax(lambda x: np.zeros_like(x), x="f32", name="zeros")
    assert not zeros.passed


def test_softmax_unshifted_declared_shifted_fails_near_overflow():
    def unshifted(x):  # exp(z) in float32 without the max subtraction: inf / inf = NaN once z passes ~88.7
        with np.errstate(over="ignore", invalid="ignore"):
            e = np.exp(x.astype(np.float64)).astype(np.float32)
            return (e / e.sum(axis=1, keepdims=True, dtype=np.float32)).astype(np.float32)
    r = fpcert.certify_softmax(unshifted, x="f32", exp="libm", name="unshifted")
    assert not r.passed


def test_half_softmax_computed_in_half_declared_f32_fails():
    def half(x):  # every step rounded to fp16 (NumPy float16 arithmetic), declared as fp32 compute
        z = x.astype(np.float16)
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True, dtype=np.float16)).astype(np.float16)
    r = fpcert.certify_softmax(half, x="f16", exp="libm", name="half")
    assert not r.passed
    ok = fpcert.certify_softmax(softmax64, x="f16", exp="libm", name="half_ok")
    assert ok.passed, repr(ok)


def test_log_softmax_float64_passes():
    def log_softmax64(x):
        z = x.astype(np.float64)
        m = z.max(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            return (z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))).astype(x.dtype)
    r = fpcert.certify_softmax(log_softmax64, log=True, x="f32", exp="libm", log_impl="libm", name="log_softmax64")
    assert r.passed, repr(r)


def layernorm64(x, w, b, eps):
    z = x.astype(np.float64)
    mu = z.mean(axis=1, keepdims=True)
    var = ((z - mu) ** 2).mean(axis=1, keepdims=True)
    y = (z - mu) / np.sqrt(var + np.float64(np.float32(eps)))
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y.astype(x.dtype)


def rmsnorm64(x, w, b, eps):
    z = x.astype(np.float64)
    y = z / np.sqrt((z * z).mean(axis=1, keepdims=True) + np.float64(np.float32(eps)))
    if w is not None:
        y = y * w.astype(np.float64)
    if b is not None:
        y = y + b.astype(np.float64)
    return y.astype(x.dtype)


def test_layernorm_and_rmsnorm_float64_pass_and_one_pass_variance_fails():
    ok = fpcert.certify_norm(layernorm64, "layernorm", x="f32", rsqrt="cr", name="layernorm64")
    assert ok.passed, repr(ok)
    rms = fpcert.certify_norm(rmsnorm64, "rmsnorm", x="f32", rsqrt="cr", name="rmsnorm64")
    assert rms.passed, repr(rms)

    def one_pass(x, w, b, eps):  # E[x^2] - E[x]^2 in float32: cancels when the mean dominates the deviation
        z = x.astype(np.float32)
        mu = z.mean(axis=1, keepdims=True, dtype=np.float32)
        var = (z * z).mean(axis=1, keepdims=True, dtype=np.float32) - mu * mu
        y = (z - mu) / np.sqrt(np.maximum(var, 0) + np.float32(eps))
        if w is not None:
            y = y * w
        if b is not None:
            y = y + b
        return y.astype(np.float32)
    bad = fpcert.certify_norm(one_pass, "layernorm", x="f32", name="one_pass", suite="norm")
    assert not bad.passed

    def eps_outside(x, w, b, eps):  # 1 / (sqrt(var) + eps): the constant-row case (var = 0) shows it at once
        z = x.astype(np.float64)
        mu = z.mean(axis=1, keepdims=True)
        y = (z - mu) / (np.sqrt(((z - mu) ** 2).mean(axis=1, keepdims=True)) + np.float32(eps))
        y = y * (w if w is not None else 1) + (b if b is not None else 0)
        return y.astype(np.float32)
    assert not fpcert.certify_norm(eps_outside, "layernorm", x="f32", rsqrt="cr", name="eps_outside", suite="norm").passed


def welford_parts(parts, vec, torch_form):
    """A LayerNorm whose statistics are Welford in float32 over `parts` parts (part t: the `vec`-entry vectors t, t + parts,
    ..., each entry in order), the parts combined pairwise by a tree of depth log2(parts). torch_form=False: Chan, Golub
    and LeVeque's formulas (a division by the count; an empty side returned as is), as a CUDA warp butterfly runs them;
    True: PyTorch's vectorized layer_norm (cuWelfordOnlineSum: mean + delta * (1/count); cuWelfordCombine:
    (n_a fl(1/n)) m_a + (n_b fl(1/n)) m_b, M2_a + M2_b + delta^2 n_a (n_b fl(1/n)), no special case for an empty side)."""
    one = np.float32(1)

    def fn(x, w, b, eps):
        z = x.astype(np.float32)
        rows, n = z.shape
        cnt, m, q = (np.zeros((rows, parts), np.float32) for _ in range(3))
        for s0 in range(0, n, parts * vec):  # step s0: part t takes entries s0 + t vec + i, i < vec
            for i in range(vec):
                cols = np.arange(s0 + i, min(s0 + parts * vec, n), vec)
                if cols.size == 0:
                    continue
                v, k = z[:, cols], cols.size
                cnt[:, :k] += one
                d1 = v - m[:, :k]
                m[:, :k] = m[:, :k] + (d1 * (one / cnt[:, :k]) if torch_form else d1 / cnt[:, :k])
                q[:, :k] = q[:, :k] + d1 * (v - m[:, :k])
        o = parts // 2
        while o >= 1:
            na, nb, ma, mb, qa, qb = cnt[:, :o], cnt[:, o:2 * o], m[:, :o], m[:, o:2 * o], q[:, :o], q[:, o:2 * o]
            with np.errstate(invalid="ignore", divide="ignore"):
                nn = na + nb
                d = mb - ma
                if torch_form:
                    coef = one / nn
                    wa, wb = na * coef, nb * coef
                    mc, qc = wa * ma + wb * mb, (qa + qb) + (d * d) * na * wb
                    m[:, :o] = np.where(nn > 0, mc, 0)
                    q[:, :o] = np.where(nn > 0, qc, 0)
                else:
                    wb = nb / nn
                    mc, qc = ma + d * wb, (qa + qb) + (d * d) * (na * wb)
                    m[:, :o] = np.where(nb == 0, ma, np.where(na == 0, mb, mc))
                    q[:, :o] = np.where(nb == 0, qa, np.where(na == 0, qb, qc))
            cnt[:, :o] = nn
            o //= 2
        mu, var = m[:, :1], q[:, :1] / np.float32(n)
        y = (z - mu) * (one / np.sqrt(var + np.float32(eps)))  # 1/sqrt: sqrt_div, 2u/(1 - u)
        if w is not None:
            y = y * w
        if b is not None:
            y = y + b
        return y.astype(np.float32)
    return fn


def test_welford_combined_declaration():
    # Declared as they run (f32, 1/sqrt both correctly rounded): every case of the norm suite passes, for Chan's form over
    # 64 strided parts and PyTorch's vectorized form over 128 parts of 4-entry vectors.
    for parts, vec, torch_form, declared in ((64, 1, False, 64), (128, 4, True, "128x4")):
        name = f"welford_parts{parts}x{vec}"
        ok = fpcert.certify_norm(welford_parts(parts, vec, torch_form), "layernorm", variance="welford_combined", parts=declared,
                                 x="f32", rsqrt="sqrt_div", name=name, suite="norm")
        assert ok.passed, repr(ok)
        assert all(c["status"] == "pass" for c in ok.cases if c["case"] != "evidence"), repr(ok)
        assert f"welford_combined over parts {declared}" in ok.cases[0]["kernel_traits"]
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm(layernorm64, variance="welford_combined", parts="64x")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm(layernorm64, variance="welford_combined", parts=0)
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm(layernorm64, variance="two_pass", parts=32)  # parts belong to welford_combined


def test_bad_declarations_are_input_errors():
    with pytest.raises(fpcert.InputError):
        fpcert.certify_softmax(softmax64, shift="sideways")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_softmax(softmax64, shift="online")  # an online softmax needs its block
    with pytest.raises(fpcert.InputError):
        fpcert.certify_softmax(softmax64, exp="ulps:-1")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_softmax(softmax64, suite="certify")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm(layernorm64, "batchnorm")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm(layernorm64, rsqrt="fast")


def test_softmax_declared_expf_ops_is_graded_bit_for_bit():
    # exp declared as fpcert's expf_ops with a sequential fp32 row sum: the bitwise tier applies. A float64 softmax rounded
    # once is inside every bound but is not that arithmetic: refused by the bitwise check alone (docs/softmax.md).
    r = fpcert.certify_softmax(softmax64, x="f32", exp="expf_ops", order="sequential", suite="softmax_quick", name="f64_as_ops")
    assert not r.passed
    graded = [c for c in r.cases if c["case"] != "evidence" and c["status"] != "not_supported"]
    assert graded and all(c["tier"] == "bitwise" for c in graded), repr(r)
    checks = [ch for c in graded for ch in c["checks"]]
    assert any(ch["kind"] == "bitwise" and not ch["passed"] for ch in checks)
    assert all(ch["passed"] for ch in checks if ch["kind"] == "envelope")
