"""tests/python/test_torch_attention_bwd_gpu.py — PyTorch's SDPA backward with a backend pinned (flash and efficient:
torch.ops.aten's backward ops on the runner's O and LSE; math: autograd, the forward recomputed) certified through
fpcert.certify_attention_backward (issue 45; docs/backward.md, "Attention backward") in f16 and bf16 on the suite
attention_backward (cases a backend does not take are not supported), against the correctly rounded gradient and the
bound of the declaration fpcert.sdpa_backward_declaration gives; the flash backward with dQ scaled by (1 + 2^-5)
afterwards is refused. Run by gpu_main.py (label gpu; exit 77 without torch or a device)."""
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402

OUT = os.environ.get("FPCERT_TEST_OUT")


def outputs(name):
    return {} if not OUT else {"json": os.path.join(OUT, name + ".json")}


def summary(backend, dtype, r):
    for c in r.cases:
        print(f"sdpa backward {backend} {dtype} {c['case']:<26} {c['status']:<14} err/bound {c.get('metrics', {}).get('err_frac_max', 0):.3g} "
              f"{c['reason'][:140]}")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("backend", ["flash", "efficient", "math", "cudnn"])
def test_sdpa_backward_passes_under_its_declaration(backend, dtype):
    fn = fpcert.sdpa_backward(backend)
    r = fpcert.certify_attention_backward(fn, **fpcert.sdpa_backward_declaration(backend, dtype), device="cuda",
                                          suite="attention_backward", name=f"torch_sdpa_backward_{backend}_{dtype}",
                                          **outputs(f"sdpa_backward_{backend}_{dtype}"))
    summary(backend, dtype, r)
    ran = [c for c in r.cases if c["status"] not in ("not supported", "not_supported")]
    if not ran:
        pytest.skip(f"torch {torch.__version__}: the {backend} backward took no case ({r.cases[0]['reason'][:200]})")
    assert r.passed, r


def test_sdpa_backward_with_a_wrong_dq_is_refused():
    base = fpcert.sdpa_backward("flash")

    def wrong(*a, **k):
        dq, dk, dv = base(*a, **k)
        return dq * (1 + 2.0 ** -5), dk, dv
    wrong.__qualname__ = "torch_sdpa_backward_flash_dq_times_1_plus_2^-5"
    r = fpcert.certify_attention_backward(wrong, **fpcert.sdpa_backward_declaration("flash", "f16"), device="cuda")
    summary("flash dq x (1 + 2^-5)", "f16", r)
    if all(c["status"] in ("not supported", "not_supported") for c in r.cases):
        pytest.skip("the flash backward took no case")
    assert not r.passed


@pytest.mark.parametrize("backend", ["flash", "efficient", "math", "cudnn"])
def test_sdpa_backward_mutation_score(backend):
    # The faults fpcert makes around a closed kernel (docs/mutation.md): each backend's mutation score on the full suite,
    # f16; the measure is >= 95 % of the applicable faults killed for their own fault.
    m = fpcert.mutate(fpcert.certify_attention_backward, fpcert.sdpa_backward(backend), **fpcert.sdpa_backward_declaration(backend, "f16"),
                      device="cuda", suite="attention_backward", name=f"torch_sdpa_backward_{backend}_f16",
                      **outputs(f"sdpa_backward_mutation_{backend}_f16"))
    print(m.text())
    print(f"sdpa backward mutation {backend} f16: {m!r}")
    assert m.applicable, m.text()
    assert m.score >= 0.95, m.text()
