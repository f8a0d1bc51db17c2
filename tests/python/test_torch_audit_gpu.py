"""tests/python/test_torch_audit_gpu.py — fpcert.audit on torch tensors as a test holds them (docs/audit.md, "The test's
own tensors"): bfloat16 and float16 tensors, on the CPU and on CUDA when present; run by scripts/device_run.sh (part audit)."""
import pytest

torch = pytest.importorskip("torch")
import fpcert  # noqa: E402

DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device", DEVICES)
def test_audit_on_torch_bf16_tensors_stored_in_bf16(device):
    # C = 16 + 2^-4 + 2^-9 = 16.064453125 (every value a bf16 value): the nearest bf16 outputs are 16 and 16.125, so
    # atol = 0.06 is unsatisfiable and 0.061 is not; the tensors' values are read exactly (stored in bf16, no rounding).
    A = torch.tensor([[16.0, 0.0625, 2.0 ** -9]], dtype=torch.bfloat16, device=device)
    B = torch.ones((3, 1), dtype=torch.bfloat16, device=device)
    a = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rtol=0, atol=0.06, mutants=False)
    assert a.unsatisfiable
    assert "stored in bf16, no rounding" in " ".join(a["static"]["findings"])
    assert not fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rtol=0, atol=0.061, mutants=False).unsatisfiable


@pytest.mark.parametrize("device", DEVICES)
def test_audit_on_torch_f16_tensors_into_bf16_inputs_says_what_was_rounded(device):
    # 1 + 2^-10 is a float16 value (11 significant bits) and not a bf16 one (8): rounded into the bf16 inputs, counted.
    A = torch.tensor([[16.0, 0.0625, 2.0 ** -9, 1 + 2.0 ** -10]], dtype=torch.float16, device=device)
    B = torch.ones((4, 1), dtype=torch.float16, device=device)
    a = fpcert.audit(None, "in=bf16,acc=f32,out=bf16", A=A, B=B, rule="maxabs:tol=1", mutants=False)
    assert "1 of A's 4 values and 0 of B's 4 were rounded" in " ".join(a["static"]["findings"])


@pytest.mark.skipif(not torch.cuda.is_available(), reason="torch.softmax on CUDA is audited on the H200 (scripts/device_run.sh part audit)")
def test_audit_of_torch_softmax_on_cuda_at_kernelbench_rule():
    # KernelBench's softmax rule (allclose 1e-2) on torch.softmax in bf16 on CUDA, declared as tests/python/
    # test_torch_rows_gpu.py certifies it (CUDA expf, 2 ulp; e_j * (1/S); row-sum order unknown): 8 rows of 4096 logits
    # in [-4, 4] give outputs below ~2e-3 < atol, so the rule passes all zeros (made around the callable) and 1/n, which
    # fpcert refuses; torch's own kernel passes fpcert (docs/audit.md, "Softmax").
    a = fpcert.audit(lambda x: torch.softmax(x, dim=-1), "in=bf16,exp=expf,reciprocal=1", op="softmax", shape=(8, 4096), seeds=(1, 2),
                     rtol=1e-2, atol=1e-2, device="cuda")
    print(a)
    assert a["false_alarms"]["variants"][0]["fpcert"] == "pass 2/2" and a.flake_rate == 0
    assert a["static"]["admit_zero"] == a["static"]["elements"]
    for m in ("smx_zeros", "constant"):
        assert a.mutant(m)["rule_passed"] == 2 and a.mutant(m)["fpcert_refused"] == 2, m
