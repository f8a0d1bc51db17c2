"""tests/python/test_torch_norm_bwd_gpu.py — PyTorch's CUDA LayerNorm / RMSNorm backward certified through
fpcert.certify_norm_backward (issue 45; docs/backward.md, "LayerNorm and RMSNorm backward"):
  - torch.ops.aten.native_layer_norm_backward with the saved mean and rstd fpcert gives it (shape (rows, 1), fp32), in
    f16 and bf16 (and f32): declared compute f32, row sums f32 in an undocumented order (any order), dweight/dbias
    reduced in fp32 (PyTorch's column reduction kernels) and returned in the input dtype (param_out = the input format),
    deterministic;
  - RMSNorm: torch.ops.aten._fused_rms_norm_backward where the installed torch has it (reads the saved rstd), else
    autograd of torch.nn.functional.rms_norm, which recomputes rstd (declared reads_saved=False).
Run by hand or by scripts/device_run.sh part norm-backward (exit 77 / skipped without torch or a device)."""
import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402


@pytest.mark.parametrize("dtype", ["f32", "f16", "bf16"])
def test_native_layer_norm_backward(dtype):
    r = fpcert.certify_norm_backward(fpcert.torch_layer_norm_backward(), dtype, "layernorm", param_out=dtype, device="cuda",
                                     suite="norm_backward", name=f"native_layer_norm_backward_{dtype}")
    print(repr(r))
    assert r.passed, repr(r)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_rms_norm_backward(dtype):
    fn, reads_saved = fpcert.torch_rms_norm_backward()
    r = fpcert.certify_norm_backward(fn, dtype, "rmsnorm", param_out=dtype, reads_saved=reads_saved, device="cuda",
                                     suite="norm_backward", name=f"{fn.__qualname__}_{dtype}")
    print(repr(r))
    assert r.passed, repr(r)


def test_norm_backward_mutation_scores():
    # The faults made around a closed kernel (docs/mutation.md): zeros, gamma ignored, and rstd squared where the kernel
    # reads the saved rstd; the measure is >= 95 % of the applicable faults.
    fn, reads_saved = fpcert.torch_rms_norm_backward()
    for f, kind, rs in ((fpcert.torch_layer_norm_backward(), "layernorm", True), (fn, "rmsnorm", reads_saved)):
        m = fpcert.mutate(fpcert.certify_norm_backward, f, "bf16", kind, param_out="bf16", reads_saved=rs, device="cuda",
                          suite="norm_backward")
        print(m.text())
        assert m.applicable and m.score >= 0.95, m.text()
