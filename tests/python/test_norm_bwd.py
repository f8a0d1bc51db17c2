"""fpcert.certify_norm_backward (python/fpcert/norm_bwd.py; docs/backward.md, "LayerNorm and RMSNorm backward").

The correct subject computes dx, dgamma and dbeta in float64 from the codes it gets and rounds once: more accurate than
the f32 arithmetic it declares, so every case must pass. The wrong ones are faults of issue 45 (the projection term
left out; dgamma without xh; all zeros), each expected to be refused by the derived bound, not by a tolerance here."""
import numpy as np
import pytest

import fpcert

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the NaN rows of the specials case


def backward64(x, dy, w, mean, rstd, proj=True, xhat_in_dgamma=True):
    x64, dy64, w64 = x.astype(np.float64), dy.astype(np.float64), w.astype(np.float64)
    m = 0.0 if mean is None else mean.astype(np.float64)[:, None]
    r = rstd.astype(np.float64)[:, None]
    xh = (x64 - m) * r
    g = dy64 * w64
    n = x.shape[1]
    a = 0.0 if mean is None else g.sum(axis=1, keepdims=True) / n
    b = (g * xh).sum(axis=1, keepdims=True) / n if proj else 0.0
    dx = r * (g - a - xh * b)
    dg = (dy64 * xh if xhat_in_dgamma else dy64).sum(axis=0)
    db = None if mean is None else dy64.sum(axis=0).astype(np.float32)
    return dx.astype(x.dtype), dg.astype(np.float32), db


def test_layernorm_backward_float64_rounded_once_passes_and_faults_fail():
    ok = fpcert.certify_norm_backward(backward64, "f32", "layernorm", name="lnbwd64")
    assert ok.passed, repr(ok)
    no_proj = fpcert.certify_norm_backward(lambda *a: backward64(*a, proj=False), "f32", "layernorm", name="no_proj")
    assert not no_proj.passed
    no_xhat = fpcert.certify_norm_backward(lambda *a: backward64(*a, xhat_in_dgamma=False), "f32", "layernorm", name="no_xhat")
    assert not no_xhat.passed
    zeros = fpcert.certify_norm_backward(lambda x, dy, w, m, r: (np.zeros_like(x), np.zeros(x.shape[1], np.float32),
                                                                 np.zeros(x.shape[1], np.float32)), "f32", "layernorm", name="zeros")
    assert not zeros.passed


def test_rmsnorm_backward_f16_passes():
    ok = fpcert.certify_norm_backward(backward64, "f16", "rmsnorm", name="rmsbwd64")
    assert ok.passed, repr(ok)


def test_bad_declaration_is_an_input_error():
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm_backward(backward64, "f32", "batchnorm")
    with pytest.raises(fpcert.InputError):
        fpcert.certify_norm_backward(backward64, "f32", "layernorm", determinism="sometimes")
