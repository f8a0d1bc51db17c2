"""tests/python/test_torch_epilogue_gpu.py — PyTorch's fused GEMM epilogues on a CUDA GPU certified on the certify
suite's epilogue_* cases (docs/python.md, "Fused epilogues"): torch._addmm_activation (cuBLASLt's bias + ReLU/GELU
epilogue) and the unfused F.linear then activation in f16 and bf16, torch._scaled_mm (FP8 e4m3 with scale factors,
bf16 out), each case passing or declined ("not supported": what the subject does not expose); and an f32 linear that
computes GELU's erf form where the tanh form is asked, refused. Run by gpu_main.py and scripts/device_run.sh part
epilogue-torch; skipped without torch or a CUDA device."""
import os

import pytest

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

import fpcert  # noqa: E402
from test_torch_gpu import OUT, pinned  # noqa: E402,F401  (reduced-precision reductions off, restored after each test)


def run(fn, traits, name):
    torch.backends.cuda.matmul.allow_tf32 = False  # the f32 declarations are fp32 products and sums (pinned restores it)
    kw = {} if not OUT else {"json": os.path.join(OUT, name + ".json"), "html": os.path.join(OUT, name + ".html")}
    try:
        res = fpcert.certify(fn, traits, suite="certify", case="epilogue_*", device="cuda", name=name, **kw)
    except fpcert.InputError as e:
        if "has no case 'epilogue_*'" in str(e):
            pytest.skip("this fpcert's certify suite has no epilogue_* cases")
        raise
    cases = {c["case"]: c for c in res.cases if c["case"].startswith("epilogue_")}
    for k, c in sorted(cases.items()):  # the measured table (pytest -s, device_run.sh's log)
        print(f"{name:<36} {k:<28} {c['status']:<14} {c.get('tier', '')!s:<10} {(c.get('reason') or '')[:110]}")
    return cases


@pytest.mark.parametrize("subject", ["addmm_activation", "linear_then_activation"])
@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_torch_epilogue_subjects_certified(subject, dtype):
    fn, traits = fpcert.torch_epilogue(subject, dtype)
    cases = run(fn, traits, f"torch_{subject}_{dtype}")
    status = {k: c["status"] for k, c in cases.items()}
    assert all(s in ("pass", "not_supported") for s in status.values()), status
    assert status.get("epilogue_gelu_tanh") == "pass" and status.get("epilogue_relu_bias") == "pass", status


def test_torch_scaled_mm_fp8():
    if not hasattr(torch, "float8_e4m3fn") or not hasattr(torch, "_scaled_mm"):
        pytest.skip("this torch has no float8_e4m3fn or _scaled_mm")
    fn, traits = fpcert.torch_epilogue("scaled_mm", "bf16")
    cases = run(fn, traits, "torch_scaled_mm_bf16")
    status = {k: c["status"] for k, c in cases.items()}
    assert all(s in ("pass", "not_supported") for s in status.values()), status
    # Shapes that are not multiples of 16 are declined before the data by the callable's can_implement (not after it,
    # which fails the case): epilogue_bias_col is 259 x 251 x 67 on a device.
    c = cases["epilogue_bias_col"]
    assert c["status"] == "not_supported" and "multiples of 16" in (c.get("reason") or ""), c.get("reason")


def test_gelu_erf_form_where_tanh_is_asked_is_refused_in_f32():
    F = torch.nn.functional

    def swapped(A, B, bias=None, activation="none", **_):
        z = F.linear(A, B.t(), bias)
        if activation == "gelu_tanh":
            return F.gelu(z)  # the erf form
        if activation == "gelu_erf":
            return F.gelu(z, approximate="tanh")
        return {"none": z, "relu": F.relu(z), "silu": F.silu(z)}[activation]

    traits = fpcert.traits(fpcert.TORCH_EPILOGUE_TRAITS["linear_then_activation"].format(t="f32"))
    cases = run(swapped, traits, "torch_linear_gelu_swapped_f32")
    assert cases["epilogue_gelu_tanh"]["status"] == "fail" and cases["epilogue_gelu_erf"]["status"] == "fail"
