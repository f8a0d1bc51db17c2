"""fpcert.certify_softmax_backward (python/fpcert/softmax_bwd.py; docs/backward.md, "Softmax and log-softmax backward").

The correct subjects compute in float64 and round once into the output format: more accurate than the f32 arithmetic
they declare, so every case must pass. The wrong ones are faults of issue 45 (D never subtracted, the scale applied
twice, y_j for e^{y_j}), each expected to be refused by the derived bound (not by a tolerance written here)."""
import numpy as np
import pytest

import fpcert

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN and Inf rows of the specials cases


def softmax_bwd64(y, dy, scale=1.0):
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    d = (dy64 * y64).sum(axis=1, keepdims=True)
    return (np.float64(scale) * y64 * (dy64 - d)).astype(y.dtype)


def log_softmax_bwd64(y, dy, scale=1.0):
    y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
    live = y64 != -np.inf
    g = np.where(live, dy64, 0).sum(axis=1, keepdims=True)
    return np.where(live, np.float64(scale) * (dy64 - np.exp(y64) * g), 0).astype(y.dtype)


@pytest.mark.parametrize("dtype", ["f32", "f16"])
def test_softmax_backward_float64_passes_and_faults_fail(dtype):
    ok = fpcert.certify_softmax_backward(softmax_bwd64, dtype, accepts_scale=True, name="sbwd64")
    assert ok.passed, repr(ok)
    assert not any(c["status"] == "not_supported" for c in ok.cases), repr(ok)
    def no_d(y, dy, scale=1.0):  # D never subtracted: s y_j dy_j
        return (np.float64(scale) * y.astype(np.float64) * dy.astype(np.float64)).astype(y.dtype)
    no_d = fpcert.certify_softmax_backward(no_d, dtype, accepts_scale=True, name="no_d")
    assert not no_d.passed
    twice = fpcert.certify_softmax_backward(lambda y, dy, scale=1.0: softmax_bwd64(y, dy, scale * scale), dtype, accepts_scale=True,
                                            name="twice")
    assert not twice.passed


def test_log_softmax_backward_float64_passes_and_no_exp_fails():
    ok = fpcert.certify_softmax_backward(log_softmax_bwd64, "f16", kind="log_softmax", exp="libm", accepts_scale=True, name="lsbwd64")
    assert ok.passed, repr(ok)

    def no_exp(y, dy, scale=1.0):  # y_j where e^{y_j} is meant
        y64, dy64 = y.astype(np.float64), dy.astype(np.float64)
        live = y64 != -np.inf
        g = np.where(live, dy64, 0).sum(axis=1, keepdims=True)
        return np.where(live, np.float64(scale) * (dy64 - y64 * g), 0).astype(y.dtype)
    assert not fpcert.certify_softmax_backward(no_exp, "f16", kind="log_softmax", accepts_scale=True, name="no_exp").passed


def test_without_scale_the_scaled_cases_are_not_supported():
    r = fpcert.certify_softmax_backward(lambda y, dy: softmax_bwd64(y, dy), "f32", name="noscale")
    assert r.passed, repr(r)  # s = 1 cases pass; the others are declined, not failed
    assert any(c["status"] == "not_supported" for c in r.cases)
    with pytest.raises(ValueError):
        fpcert.certify_softmax_backward(softmax_bwd64, "f64")


def test_products_rounded_to_f16_need_the_prod_declaration():
    """PyTorch's softmax_backward_cuda forms grad * output as an f16 tensor first (docs/backward.md): a subject doing the
    same (dy_j y_j rounded to f16, then f32 arithmetic) is refused when declared with f32 products and passes with
    prod="f16"; its bound is derived, not a tolerance written here."""
    def torch_like(y, dy):
        g = (y.astype(np.float32) * dy.astype(np.float32)).astype(np.float16).astype(np.float32)  # tmp = grad * output (f16)
        d = g.sum(axis=1, keepdims=True, dtype=np.float32)
        return (g - y.astype(np.float32) * d).astype(np.float16)
    assert not fpcert.certify_softmax_backward(torch_like, "f16", expanded=True, suite="softmax_backward", name="f32prod").passed
    ok = fpcert.certify_softmax_backward(torch_like, "f16", expanded=True, prod="f16", suite="softmax_backward", name="f16prod")
    assert ok.passed, repr(ok)
