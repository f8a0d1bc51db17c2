"""tests/python/test_torch_gpu.py — torch.matmul on a CUDA GPU certified at pinned precisions
(float32 with TF32 off and on, float16, bfloat16), TF32 caught when the declaration says fp32, a
deliberately wrong torch kernel refused, and assert_close on CUDA tensors. Run by gpu_main.py
(ctest label gpu), which exits 77 (skipped) where torch or a CUDA device is missing."""
import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402

OUT = os.environ.get("FPCERT_TEST_OUT")


@pytest.fixture(autouse=True)
def pinned():
    m = torch.backends.cuda.matmul
    saved = (m.allow_tf32, m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction)
    m.allow_fp16_reduced_precision_reduction = False
    m.allow_bf16_reduced_precision_reduction = False
    yield
    m.allow_tf32, m.allow_fp16_reduced_precision_reduction, m.allow_bf16_reduced_precision_reduction = saved


def outputs(name):
    return {} if not OUT else {"json": os.path.join(OUT, name + ".json"), "html": os.path.join(OUT, name + ".html")}


def _refused_by_a_check(res):
    return any(c["status"] == "fail" and c["case"] != "evidence" for c in res.cases)


@pytest.mark.parametrize("dtype,tf32", [(torch.float32, False), (torch.float32, True), (torch.float16, False),
                                        (torch.bfloat16, False)])
def test_torch_matmul_certified(dtype, tf32):
    torch.backends.cuda.matmul.allow_tf32 = tf32
    name = f"torch_matmul_{str(dtype).split('.')[-1]}{'_tf32' if tf32 else ''}"
    res = fpcert.certify(lambda A, B: torch.matmul(A, B), fpcert.torch_traits(dtype, tf32), suite="certify",
                         device="cuda", name=name, mn=128, **outputs(name))
    print(repr(res))
    assert res.passed, repr(res)


def test_tf32_is_caught_when_fp32_is_declared():
    torch.backends.cuda.matmul.allow_tf32 = True
    res = fpcert.certify(lambda A, B: torch.matmul(A, B), fpcert.torch_traits(torch.float32, False), suite="certify",
                         device="cuda", name="torch_matmul_tf32_declared_f32", mn=128, **outputs("tf32_declared_f32"))
    print(repr(res))
    # Refused by a check of a case the kernel ran, not by an error or the evidence rule alone.
    assert not res.passed and _refused_by_a_check(res)
    assert not any(c["status"] == "error" for c in res.cases), repr(res)


def test_wrong_torch_kernel_is_refused():
    # Drops the last product of every dot product: a typical off-by-one in a hand-written K loop.
    torch.backends.cuda.matmul.allow_tf32 = False
    res = fpcert.certify(lambda A, B: torch.matmul(A[:, :-1], B[:-1, :]), fpcert.torch_traits(torch.float32, False),
                         suite="certify", device="cuda", name="torch_matmul_drops_last_k", mn=128, **outputs("wrong"))
    print(repr(res))
    assert not res.passed and _refused_by_a_check(res)
    assert not any(c["status"] == "error" for c in res.cases), repr(res)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_assert_close_on_cuda_tensors(dtype):
    g = torch.Generator(device="cuda").manual_seed(3)
    A = torch.randn(256, 1024, device="cuda", dtype=dtype, generator=g)
    B = torch.randn(1024, 128, device="cuda", dtype=dtype, generator=g)
    fpcert.assert_close(torch.matmul(A, B), A, B, fpcert.torch_traits(dtype))
    with pytest.raises(AssertionError, match="cancellation"):
        fpcert.assert_close(torch.matmul(A, B) * 1.05, A, B, fpcert.torch_traits(dtype))
    assert np.isfinite(fpcert.tolerance(fpcert.torch_traits(dtype), A, B).allowed).all()
