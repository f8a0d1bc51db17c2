"""tests/python/test_diagnose.py — fpcert.diagnose (docs/python.md, "Diagnosing a kernel"; docs/diagnose.md) on NumPy
callables whose arithmetic is written out here, independently of the hypotheses that should name it: a sequential fp32
FMA loop (each step the exact a*b + acc rounded once to fp32), fed fp32 operands as they are, or rounded first to fp16
(NumPy's astype, round to nearest even), or to bf16 (round to nearest even on the bits)."""
import numpy as np
import pytest

import fpcert

CASE = "uniform:m=12,n=13,k=64,seed=5"  # uniform [-1, 1) fp32: nearly every input has bits below fp16's and bf16's


def fma_loop(A, B):
    """Sequential fp32 FMA over k: acc = fl32(acc + a*b). a*b of fp32 operands is exact in float64 (24 + 24 = 48 bits);
    acc + a*b is computed in float64 and rounded to fp32: one rounding whenever that float64 sum is exact (acc has 24
    bits, so it is whenever a*b is not more than ~29 binades below acc's leading bit), else a double rounding, which
    differs from one rounding only when the float64 sum lands exactly on an fp32 midpoint. Not assumed: the first test
    checks that on this case the plain loop is the declared arithmetic (fpcert's sequential fp32 FMA) bit for bit."""
    A = A.astype(np.float64)
    B = B.astype(np.float64)
    acc = np.zeros((A.shape[0], B.shape[1]), dtype=np.float32)
    for k in range(A.shape[1]):
        acc = (acc.astype(np.float64) + np.outer(A[:, k], B[k, :])).astype(np.float32)
    return acc


def to_bf16(x):
    """fp32 -> bf16 (round to nearest, ties to even, on the bits; finite inputs), back as fp32 values."""
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    u = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    return u.view(np.float32)


def test_the_declared_arithmetic_is_named_for_a_plain_fma_loop():
    d = fpcert.diagnose(fma_loop, CASE, declared="in=f32,acc=f32,out=f32", separate=False)
    assert d["kind"] == "declared", d.text()
    assert d.top == "declared"
    assert d["ranked"][0]["matched"] == d["ranked"][0]["elements"] == 12 * 13


def test_fp16_rounded_operands_are_diagnosed_as_such():
    def f16_inputs(A, B):
        return fma_loop(A.astype(np.float16).astype(np.float32), B.astype(np.float16).astype(np.float32))

    d = fpcert.diagnose(f16_inputs, CASE, separate=False)
    assert d["kind"] == "consistent", d.text()
    assert d.top_is("operands=f16/rn"), d.text()
    assert d["ranked"][0]["matched"] == d["ranked"][0]["elements"]
    assert "f16" in d["verdict"]
    assert "diagnosis of python:" in str(d)


def test_bf16_rounded_operands_are_diagnosed_as_such():
    def bf16_inputs(A, B):
        return fma_loop(to_bf16(A), to_bf16(B))

    d = fpcert.diagnose(bf16_inputs, CASE, separate=False)
    assert d["kind"] == "consistent", d.text()
    assert d.top_is("operands=bf16/rn"), d.text()


def test_a_registered_kernel_by_name_and_against_another_declaration():
    d = fpcert.diagnose("model_gemm_f32", CASE, separate=False)
    assert d["kind"] == "declared"
    assert "hint" not in d  # it declares exactly what it computes
    # judged against the tf32 model's declaration (operands narrowed to tf32 first), the fp32 model multiplies its
    # inputs as given: a more precise arithmetic than declared, bit for bit on every element -> the hint
    h = fpcert.diagnose("model_gemm_f32", CASE, declared="model_gemm_tf32_f32acc", separate=False)
    assert h["kind"] == "hint", h.text()
    assert h["hint"]["id"] == "operands=inputs"
    with pytest.raises(ValueError):
        fpcert.diagnose("model_gemm_f32", "no_such_case")
