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
