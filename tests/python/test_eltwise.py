"""tests/python/test_eltwise.py — fpcert.certify_elementwise (issue 42; docs/elementwise.md, "From Python"): a NumPy
callable swept over every input of a 16-bit format, an fp32 callable on the special and sampled inputs, a binary one on the
CLI's pairs, each result judged against the correctly rounded value (MPFR-backed) and the claim; a wrong callable refused,
naming its input."""
import numpy as np
import pytest

import fpcert


def _f16(bits):
    return np.array([int(bits, 16)], dtype=np.uint16).view(np.float16)[0]


def test_numpy_float16_exp_every_input_within_one_ulp_and_each_miss_confirmed_by_float64():
    # NumPy's float16 exp, called on all 65,536 float16 inputs. How it computes depends on the build: a float32 exp and a
    # second rounding (two roundings), or, on AVX512_SKX, SVML's half-precision exp (NumPy >= 1.24). Either stays within
    # one float16 code of e^x rounded (a float32 result within a few float32 ulps moves the float16 result at most past
    # one midpoint), so "1 ulp" must hold on every input. Correctly rounded it is not, in general. Found here (NumPy
    # 1.24.2, AVX512_SKX: SVML): 4 of 65,536 inputs, e.g. x = 0x25cf (e^x = 1.0229492 just below the float16 midpoint
    # 1.02294921875: 0x3c17 correctly rounded, NumPy 0x3c18) and x = 0x264c (0x3c1a where 0x3c19 is right; float32 exp
    # then one rounding would give 0x3c19 there, so this is not that route). Each miss the check lists is confirmed apart
    # from it: float64's e^x (error below 2^-52 relative) rounded once to float16 is the listed correctly rounded code
    # wherever it lies farther than 2^-40 from a midpoint, and NumPy's result is its neighbour.
    with np.errstate(all="ignore"):
        r = fpcert.certify_elementwise(np.exp, "exp", "f16", ulps=1)
        assert r.passed, [c["reason"] for c in r.cases]
        (case,) = r.cases
        assert case["case"] == "all_f16" and case["elementwise"]["inputs"] == 65536 and case["elementwise"]["max_ulps"] <= 1
        cr = fpcert.certify_elementwise(np.exp, "exp", "f16")
    e = cr.cases[0]["elementwise"]
    if cr.passed:
        assert e["max_ulps"] == 0
        return
    assert e["max_ulps"] == 1 and e["above_claim"] >= len(e["listed"]) > 0
    for item in e["listed"]:
        x = _f16(item["input_bits"])
        with np.errstate(all="ignore"):
            assert np.exp(np.array([x], dtype=np.float16)).view(np.uint16)[0] == int(item["got_bits"], 16)
        got, ref = float(_f16(item["got_bits"])), float(_f16(item["ref_bits"]))
        assert got != ref and abs(int(item["got_bits"], 16) - int(item["ref_bits"], 16)) == 1  # neighbours (positive results)
        exact, mid = np.exp(np.float64(x)), (got + ref) / 2
        if abs(exact - mid) > abs(mid) * 2.0 ** -40:
            assert np.float16(exact).view(np.uint16) == int(item["ref_bits"], 16)


def test_a_wrong_float16_exp_is_refused_naming_an_input():
    # e^x computed in float32 and scaled by 1.002 before the rounding to float16: 0.2 % is about 2 float16 ulps (2^-10
    # relative at most), so a claim of 1 ulp is refused, the counterexample named by its bits.
    def wrong(x):
        return (np.exp(x.astype(np.float32)) * np.float32(1.002)).astype(np.float16)
    with np.errstate(all="ignore"):
        r = fpcert.certify_elementwise(wrong, "exp", "f16", ulps=1, name="wrong_exp")
    assert not r.passed
    (case,) = r.cases
    assert case["status"] == "fail" and "at x = 0x" in case["reason"]
    e = case["elementwise"]
    assert e["above_claim"] > 1000 and e["max_ulps"] >= 2
    x = _f16(e["listed"][0]["input_bits"])
    assert wrong(np.array([x], dtype=np.float16)).view(np.uint16)[0] == int(e["listed"][0]["got_bits"], 16)


def test_bfloat16_sqrt_as_bits_every_input_correctly_rounded():
    # bfloat16 reaches a NumPy callable as its uint16 bits. sqrt in float32 (IEEE: correctly rounded) then one rounding to
    # bfloat16 (nearest even on the bits) is correctly rounded: double rounding is innocuous for sqrt when 24 >= 2 * 8 + 2
    # (Figueroa 1995), and bf16 sqrt results are never subnormal or overflow. A truncation instead is refused.
    def to_bf16(f, truncate=False):
        b = f.view(np.uint32)
        rounded = (b + 0x7FFF + ((b >> 16) & 1)) >> 16
        out = np.where(np.isnan(f), (b >> 16) | 0x40, b >> 16 if truncate else rounded)
        return out.astype(np.uint16)

    def bf16_sqrt(bits, truncate=False):
        with np.errstate(invalid="ignore"):
            return to_bf16(np.sqrt((bits.astype(np.uint32) << 16).view(np.float32)), truncate)
    r = fpcert.certify_elementwise(bf16_sqrt, "sqrt", "bf16")
    assert r.passed, r.cases[0]["reason"]
    assert r.cases[0]["case"] == "all_bf16" and r.cases[0]["elementwise"]["inputs"] == 65536
    bad = fpcert.certify_elementwise(lambda b: bf16_sqrt(b, True), "sqrt", "bf16", name="sqrt_truncated")
    assert not bad.passed and bad.cases[0]["elementwise"]["max_ulps"] == 1


def test_float32_on_the_special_and_sampled_inputs():
    # float32 sqrt is correctly rounded (IEEE); float64's e^x rounded once to float32 is within 1 ulp (the one rounding
    # moves it at most past one float32 midpoint). Both on the special/threshold inputs and the 2^19 Philox sample.
    with np.errstate(invalid="ignore"):
        r = fpcert.certify_elementwise(np.sqrt, "sqrt", "f32", inputs="sample")
    assert r.passed and {c["case"] for c in r.cases} == {"special", "sample"}
    assert sum(c["elementwise"]["inputs"] for c in r.cases) > 500000
    with np.errstate(all="ignore"):
        r = fpcert.certify_elementwise(lambda x: np.exp(x.astype(np.float64)).astype(np.float32), "exp", "f32", ulps=1,
                                       inputs="sample", name="exp64")
    assert r.passed, [c["reason"] for c in r.cases]


def test_binary_division_on_the_cli_pairs_and_no_exhaustive_pairs():
    # float32 division is IEEE: correctly rounded on every special pair (27 x 27) and the 2^18 designed pairs.
    with np.errstate(all="ignore"):
        r = fpcert.certify_elementwise(np.divide, "div", "f32")
    assert r.passed, [c["reason"] for c in r.cases]
    assert {c["case"]: c["elementwise"]["inputs"] for c in r.cases} == {"special_pairs": 729, "sample_pairs": 1 << 18}
    with pytest.raises(fpcert.InputError, match="2\\^64 pairs"):
        fpcert.certify_elementwise(np.divide, "div", "f32", inputs="all")
    with pytest.raises(fpcert.InputError, match="binary"):
        fpcert.certify_elementwise(np.divide, "div", "f16")


def test_a_result_in_another_format_is_an_error_not_a_rounding():
    # float16 inputs, float32 results that float16 cannot hold: fpcert never rounds a kernel's result for it.
    with np.errstate(all="ignore"):
        r = fpcert.certify_elementwise(lambda x: np.exp(x.astype(np.float32)), "exp", "f16", ulps=1, name="f32_out")
    assert not r.passed
    assert "is not a f16 value" in r.cases[0]["reason"]
