"""tests/python/test_torch_attention_gpu.py — PyTorch's scaled_dot_product_attention with a backend pinned (math, flash)
certified through fpcert.certify_attention (issue 41; docs/attention.md, "PyTorch SDPA") in f16 and bf16 on the suite
attention (13 cases; those a backend does not take are not supported), against the correctly rounded reference and the bound of the declaration fpcert.sdpa_declaration gives;
the same SDPA with its output scaled by (1 + 2^-6) afterwards (a wrong epilogue constant) is refused under the flash
declaration. Per backend the largest error / allowed and where it lies are printed (the report's figures). Run by
gpu_main.py (label gpu; exit 77 without torch or a device)."""
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
        print(f"sdpa {backend} {dtype} {c['case']:<24} {c['status']:<14} {c.get('tier', ''):<10} "
              f"err/bound {c.get('metrics', {}).get('err_frac_max', 0):.3g} {c['reason'][:140]}")


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
@pytest.mark.parametrize("backend", ["math", "flash", "efficient", "cudnn"])
def test_sdpa_backend_passes_under_its_declaration(backend, dtype):
    r = fpcert.certify_attention(fpcert.sdpa(backend), **fpcert.sdpa_declaration(backend, dtype), device="cuda", suite="attention",
                                 name=f"torch_sdpa_{backend}_{dtype}", **outputs(f"sdpa_{backend}_{dtype}"))
    summary(backend, dtype, r)
    ran = [c for c in r.cases if c["status"] not in ("not supported", "not_supported")]
    if backend == "cudnn" and not ran:
        pytest.skip(f"torch {torch.__version__}: the cuDNN backend took no case ({r.cases[0]['reason'][:200]})")
    assert ran, "no case ran"
    assert r.passed, r


def test_sdpa_with_a_wrong_constant_is_refused():
    base = fpcert.sdpa("flash")

    def wrong(Q, K, V, mask=None, causal=None, scale=None):
        return base(Q, K, V, mask=mask, causal=causal, scale=scale) * (1 + 2.0 ** -6)
    wrong.__qualname__ = "torch_sdpa_flash_times_1_plus_2^-6"
    r = fpcert.certify_attention(wrong, **fpcert.sdpa_declaration("flash", "f16"), device="cuda")
    summary("flash x (1 + 2^-6)", "f16", r)
    assert not r.passed


@pytest.mark.parametrize("backend", ["math", "flash", "efficient", "cudnn"])
def test_sdpa_mutation_score(backend):
    # The faults fpcert makes around a closed kernel (docs/mutation.md): each backend's mutation score on the suite
    # attention, f16; the measure is >= 95 % of the applicable faults killed for their own fault.
    m = fpcert.mutate(fpcert.certify_attention, fpcert.sdpa(backend), **fpcert.sdpa_declaration(backend, "f16"), device="cuda",
                      suite="attention", name=f"torch_sdpa_{backend}_f16", **outputs(f"sdpa_mutation_{backend}_f16"))
    print(m.text())
    print(f"sdpa mutation {backend} f16: {m!r}")
    assert m.applicable, m.text()
    assert m.score >= 0.95, m.text()
