"""tests/python/test_torch_eltwise_gpu.py — PyTorch's CUDA elementwise functions certified through
fpcert.certify_elementwise (issue 42; docs/elementwise.md, "From Python"): the inputs are moved to the device, torch's
function runs there, the results come back and are judged on the host against the correctly rounded value.
  - torch.exp on float16 and bfloat16, every one of the 65,536 inputs: PyTorch computes half and bfloat16 math in float
    (its opmath type) with CUDA's expf (2 ulp: PyTorch is not built with fast math) and rounds once to the 16-bit format:
    within 1 ulp (2 float32 ulps move the 16-bit result at most past one midpoint). Correctly rounded or not is measured
    and printed, not asserted.
  - torch.sqrt on bfloat16, every input: float32 sqrt (CUDA's sqrtf is IEEE without fast math) then one rounding:
    correctly rounded (double rounding is innocuous for sqrt when 24 >= 2 * 8 + 2).
  - the same exp scaled by 1.002 before the rounding: refused at 1 ulp, an input named.
Run by gpu_main.py (label gpu; exit 77 without torch or a device)."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_torch_exp_every_16bit_input_within_one_ulp(dtype):
    r = fpcert.certify_elementwise(torch.exp, "exp", dtype, ulps=1, device="cuda")
    assert r.passed, [c["reason"] for c in r.cases]
    assert r.cases[0]["elementwise"]["inputs"] == 65536
    cr = fpcert.certify_elementwise(torch.exp, "exp", dtype, device="cuda")
    e = cr.cases[0]["elementwise"]
    print(f"torch.exp {dtype} on {torch.cuda.get_device_name()}: correctly rounded: {cr.passed}; {e['above_claim']} of 65536 "
          f"inputs 1 ulp away, first {e['listed'][:1]}")


def test_torch_sqrt_bf16_correctly_rounded_on_the_device():
    r = fpcert.certify_elementwise(torch.sqrt, "sqrt", "bf16", device="cuda")
    assert r.passed, r.cases[0]["reason"]


def test_a_wrong_device_exp_is_refused_naming_an_input():
    def wrong(x):
        return (torch.exp(x.float()) * 1.002).to(x.dtype)
    r = fpcert.certify_elementwise(wrong, "exp", "f16", ulps=1, device="cuda", name="wrong_cuda_exp")
    assert not r.passed and "at x = 0x" in r.cases[0]["reason"]
