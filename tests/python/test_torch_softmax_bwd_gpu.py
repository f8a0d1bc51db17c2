"""tests/python/test_torch_softmax_bwd_gpu.py — PyTorch's own softmax and log-softmax backward kernels
(torch.ops.aten._softmax_backward_data, _log_softmax_backward_data: what autograd runs) on CUDA certified through
fpcert.certify_softmax_backward (issue 45; docs/backward.md), against the correctly rounded gradient and the bound of the
arithmetic declared for them: fp32 compute (PyTorch's acc_type), D in fp32 in an order it does not document (unknown),
CUDA's expf, dx_j = dy_j y_j - y_j D (expanded=True: the form of PyTorch's softmax_warp_backward) with dy_j y_j a tensor of the storage
dtype (prod=dtype: softmax_backward_cuda's grad * output, measured on the H200: declared in f32 the f16 and bf16 cases
exceed the bound up to 76x). PyTorch has no scale: the cases with s != 1 are declined (not supported). A gradient computed naively in
the storage format (every step rounded to f16) is refused under the same declaration. Exit 77 / skipped without torch
or a device (gpu_main.py runs it)."""
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402

OUT = os.environ.get("FPCERT_TEST_OUT")


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_torch_backward_kernels_certified(kind, dtype):
    fn = fpcert.torch_softmax_backward(kind)
    extra = {} if not OUT else {"json": os.path.join(OUT, f"torch_{kind}_bwd_{dtype}.json".replace("torch.", ""))}
    r = fpcert.certify_softmax_backward(fn, dtype, kind=kind, exp="expf", expanded=True,
                                        prod=dtype if kind == "softmax" else None, device="cuda", suite="softmax_backward",
                                        **extra)
    for c in r.cases:
        print(kind, dtype, c["case"] if "case" in c else c.get("case_id"), c["status"])
    assert r.passed, repr(r)


def test_half_gradient_in_half_refused():
    def naive(y, dy):  # D and y (dy - D) rounded to f16 at every step
        d = (dy * y).sum(dim=-1, keepdim=True, dtype=torch.float16)
        return y * (dy - d)
    assert not fpcert.certify_softmax_backward(naive, torch.float16, expanded=True, device="cuda", suite="softmax_backward").passed


@pytest.mark.parametrize("kind", ["softmax", "log_softmax"])
def test_torch_backward_kernels_mutation_score(kind):
    # The faults made around a closed kernel (docs/mutation.md): every output +0 (PyTorch takes no scale: the scale's faults
    # are not applicable); the measure is >= 95 % of the applicable faults.
    m = fpcert.mutate(fpcert.certify_softmax_backward, fpcert.torch_softmax_backward(kind), torch.float16, kind=kind, exp="expf",
                      expanded=True, prod=torch.float16 if kind == "softmax" else None, device="cuda", suite="softmax_backward")
    print(m.text())
    assert m.applicable and m.score >= 0.95, m.text()
