"""fpcert.mutate (docs/python.md, "Mutation score"; docs/mutation.md, "Faults made around a closed kernel"): the mutation
score of NumPy attention callables, forward and backward, from the faults fpcert makes around a closed kernel. A float64
evaluation rounded once kills every applicable fault; the faults a closed kernel cannot carry are not applicable, with the
reason; a backward that declares it reads the saved O but recomputes it lets the faults on O survive (what the score is
for: a declaration the kernel does not keep); bad requests raise InputError."""
import numpy as np
import pytest

import fpcert
from test_attention import exact_f16
from test_attention_bwd import _backward
from test_norm_bwd import backward64
from test_softmax_bwd import softmax_bwd64


def forward_declaration():
    d = fpcert.sdpa_declaration("flash", "f16")  # online, key blocks of 32: DropLastKeyBlock applies
    d["masks"] = ("top_left", "bottom_right", "additive")
    return d


def backward_declaration():
    d = fpcert.sdpa_backward_declaration("math", "f16")
    d.update(masks=("top_left", "bottom_right", "additive"), grouped_heads=True, reads_saved=True, masked_lse="+inf")
    return d


def exact_backward(Q, K, V, O, G, L, mask=None, causal=None, scale=1.0):
    return _backward(Q, K, V, O, G, L, mask, causal, scale)


def outcomes(m):
    return {x["fault"]: x["outcome"] for x in m.mutants}


def test_forward_every_fault_made_around_it_killed():
    m = fpcert.mutate(fpcert.certify_attention, exact_f16, **forward_declaration())
    o = outcomes(m)
    assert {f for f, x in o.items() if x != "not_applicable"} == {"attn_zeros", "attn_scale_after_softmax", "attn_causal_off_by_one",
                                                                   "attn_drop_last_key_block"}, m.text()
    assert m.score == 1.0, m.text()
    assert o["attn_no_rescale"] == "not_applicable"  # inside the kernel: a closed one cannot carry it
    assert "mutation score of" in m.text()


def test_backward_every_fault_made_around_it_killed():
    m = fpcert.mutate(fpcert.certify_attention_backward, exact_backward, **backward_declaration())
    o = outcomes(m)
    assert len(m.applicable) == 7, m.text()
    assert m.score == 1.0, m.text()
    for f in ("abwd_d_from_wrong_o", "abwd_no_d_subtract", "abwd_lse_wrong_base", "abwd_causal_off_by_one"):
        assert o[f] == "killed", m.text()
    assert o["abwd_gqa_not_summed"] == "not_applicable"


def test_a_backward_that_does_not_read_the_saved_o_lets_its_faults_survive():
    def recomputes_o(Q, K, V, O, G, L, mask=None, causal=None, scale=1.0):
        # O recomputed in float64 from Q, K, V (exact), though the declaration says the saved O is read.
        Qd, Kd, Vd = (np.asarray(x, np.float64) for x in (Q, K, V))
        g = Qd.shape[1] // Kd.shape[1]
        Kd, Vd = np.repeat(Kd, g, axis=1), np.repeat(Vd, g, axis=1)
        s = Qd @ Kd.transpose(0, 1, 3, 2) * scale
        if mask is not None:
            s = s + np.asarray(mask, np.float64)
        if causal is not None:
            Lq, Lk = s.shape[-2:]
            off = Lk - Lq if causal == "bottom_right" else 0
            s = np.where(np.arange(Lk)[None, :] <= np.arange(Lq)[:, None] + off, s, -np.inf)
        with np.errstate(invalid="ignore"):
            m = s.max(axis=-1, keepdims=True)
            e = np.where(np.isfinite(s), np.exp(s - np.where(np.isfinite(m), m, 0)), 0.0)
            l = e.sum(axis=-1, keepdims=True)
            Oe = np.where(l > 0, (e / np.where(l > 0, l, 1)) @ Vd, 0.0)
        return _backward(Q, K, V, Oe, G, L, mask, causal, scale)
    m = fpcert.mutate(fpcert.certify_attention_backward, recomputes_o, faults=["abwd_d_from_wrong_o", "abwd_no_d_subtract", "abwd_zeros"],
                      **backward_declaration())
    o = outcomes(m)
    assert o == {"abwd_d_from_wrong_o": "survived", "abwd_no_d_subtract": "survived", "abwd_zeros": "killed"}, m.text()
    assert abs(m.score - 1 / 3) < 1e-12


def test_softmax_backward_without_a_scale_has_no_scale_faults():
    # A callable that takes no scale declines the cases with s != 1: the scale's faults, made through the scale it is called
    # with, cannot reach it (not applicable, not survivors); with a scale they are killed.
    m = fpcert.mutate(fpcert.certify_softmax_backward, softmax_bwd64, "f16", accepts_scale=False, name="sbwd64_noscale")
    o = outcomes(m)
    assert o["sbwd_scale_missing"] == o["sbwd_scale_twice"] == "not_applicable", m.text()
    assert o["sbwd_zeros"] == "killed" and m.score == 1.0, m.text()
    m = fpcert.mutate(fpcert.certify_softmax_backward, softmax_bwd64, "f16", accepts_scale=True, name="sbwd64")
    assert {f for f, x in outcomes(m).items() if x == "killed"} == {"sbwd_scale_missing", "sbwd_scale_twice", "sbwd_zeros"}, m.text()


def test_norm_backward_rstd_squared_made_through_the_saved_rstd():
    m = fpcert.mutate(fpcert.certify_norm_backward, backward64, "f32", "layernorm", name="lnbwd64")
    o = outcomes(m)
    assert o["nbwd_rstd_squared"] == "killed" and m.score == 1.0 and len(m.applicable) == 3, m.text()
    m = fpcert.mutate(fpcert.certify_norm_backward, backward64, "f16", "rmsnorm", reads_saved=False, name="rms64_recomputes")
    assert outcomes(m)["nbwd_rstd_squared"] == "not_applicable", m.text()


def test_bad_requests_raise():
    with pytest.raises(fpcert.InputError):
        fpcert.mutate(fpcert.certify_attention, exact_f16, faults=["attn_no_such_fault"], **forward_declaration())
    with pytest.raises(fpcert.InputError, match="unknown shift"):
        fpcert.mutate(fpcert.certify_attention, exact_f16, shift="sideways")
    with pytest.raises(fpcert.InputError, match="GEMM entry"):
        fpcert.mutate(fpcert.certify, lambda A, B: A @ B, traits_="in=f32,acc=f32,out=f32")
    # The switch is off again after an error: the next certify certifies.
    r = fpcert.certify_attention(exact_f16, **forward_declaration())
    assert r.json["kind"] != "mutation" and r.passed
