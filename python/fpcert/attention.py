"""fpcert.certify_attention: a Python scaled-dot-product attention (torch.nn.functional.scaled_dot_product_attention with
a backend pinned, a NumPy function) certified through fpcert's runner on an attention suite, against the correctly
rounded reference and the per-element bound of the arithmetic the caller declares (docs/python.md, "Attention";
docs/attention.md)."""
import numpy as np

from . import _fpcert
from .rows import _finish, _kname, _pkg

#: unit roundoff of fp32
_U32 = 2.0 ** -24

#: PyTorch's SDPA backends as fpcert declares them (docs/attention.md, "PyTorch SDPA"). Each entry: the keyword
#: arguments of certify_attention, where "{t}" stands for the dtype's tag (f16, bf16).
SDPA_DECLARATIONS = {
    # torch's math backend (aten/src/ATen/native/transformers/attention.cpp, _scaled_dot_product_attention_math, torch
    # >= 2.5 on CUDA): f16/bf16 inputs upcast to fp32 (exact), q and k each multiplied by RN(sqrt(s)) in fp32 (score_rel,
    # below), the scores by
    # an fp32 cuBLAS GEMM (FMA, any order; allow_tf32 off), the mask added in fp32, a shifted softmax with expf
    # (CUDA: 2 ulp) whose probabilities are each rounded to fp32 (a division, or on its long-row path a product by the
    # reciprocal: normalize="probabilities" counts two roundings per probability) before P V in fp32, fully masked rows
    # zero (_safe_softmax), the result rounded once into the dtype. RN(sqrt s) is RN_32(RN_64(sqrt s)) = sqrt(s) (1 + d),
    # |d| <= (1 + 2^-53)(1 + u) - 1, so score_rel = ((1 + 2^-53)(1 + u))^2 (1 + u)^2 - 1 with the two products' roundings.
    "math": dict(qk="in=f32,acc=f32,out=f32", pv="in=f32,acc=f32,out=f32", shift="shifted", key_block=0, exp_form="natural",
                 exp="expf", normalize="probabilities", masked_rows="zero", masks=("top_left", "additive"),
                 score_rel=((1 + 2.0 ** -53) * (1 + _U32)) ** 2 * (1 + _U32) ** 2 - 1),
    # FlashAttention-2 as vendored by PyTorch (aten/src/ATen/native/transformers/cuda/flash_attn): mma.sync f16/bf16 with
    # fp32 accumulators (declared as torch.matmul's: accumulation truncated, acc_rounding=rz, any order), an online
    # softmax over key blocks (kBlockN 32, 64 or 128 by head dim and GPU; 32 declared: fewer rescalings only lower it), the
    # scale folded in base 2 (exp2f(fma(x, s log2 e, -m2))), exp2f built with --use_fast_math (ex2.approx.ftz.f32: 2 ulp,
    # subnormal results flushed: 2^-126 absolute), the rescaling factor exp2f(RN(RN(m_prev - m_cur) s log2 e)) from the raw
    # maxima (softmax.h: shift="online_fa2"), P rounded into the dtype before P V, O~ times 1.f / l (fast-math: within
    # 2 ulp, normalize="reciprocal_approx"), fully masked rows zero. Takes is_causal (top-left) only: no additive mask.
    "flash": dict(qk="in={t},acc=f32,acc_rounding=rz,out=f32", pv="in={t},acc=f32,acc_rounding=rz,out=f32", shift="online_fa2",
                  key_block=32, exp_form="base2", exp="ulps:2", exp_abs=2.0 ** -126, normalize="reciprocal_approx", masked_rows="zero",
                  masks=("top_left",), score_rel=0.0),
    # The memory-efficient (xFormers / CUTLASS) kernel (aten/src/ATen/native/transformers/cuda/mem_eff_attention/
    # kernel_forward.h): the flash row's GEMMs and online softmax, but its own exp2 form: the scores multiplied by
    # RN(s RN(log2 e)) (with attn_bias: fma(x, s, bias) first, then times RN(log2 e)), the running max of those, then
    # exp2f(RN(z2 - m2)) (exp_form="base2_scaled": up to three relative roundings on s x + mask before the shift; the mask
    # in the scaled domain, no RN(mask / s)); fast-math exp2f (2 ulp, subnormals flushed); O~ times 1 / l. Measured on
    # the H100 (docs/attention.md, "PyTorch SDPA"): every case it takes passes under this declaration.
    "efficient": dict(qk="in={t},acc=f32,acc_rounding=rz,out=f32", pv="in={t},acc=f32,acc_rounding=rz,out=f32", shift="online",
                      key_block=32, exp_form="base2_scaled", exp="ulps:2", exp_abs=2.0 ** -126, normalize="reciprocal_approx",
                      masked_rows="zero", masks=("top_left", "additive"), score_rel=0.0),
    # cuDNN's fused attention (cudnn-frontend's SDPA: "the FlashAttention-2 algorithm" by its documentation, the arithmetic
    # not documented further): declared as the flash backend above, with the additive mask (attn_bias) it takes, and in
    # the natural form: cudnn-frontend's graph multiplies the scores by attn_scale, then adds the bias (a bf16 finfo.min
    # mask stays finite: the base-2 folded form's RN(mask / s) would overflow, and cuDNN's output shows no such thing).
    # Measured on the H100 (docs/attention.md, "PyTorch SDPA"): every case it takes passes under this declaration.
    "cudnn": dict(qk="in={t},acc=f32,acc_rounding=rz,out=f32", pv="in={t},acc=f32,acc_rounding=rz,out=f32", shift="online",
                  key_block=32, exp_form="natural", exp="ulps:2", exp_abs=2.0 ** -126, normalize="reciprocal_approx", masked_rows="zero",
                  masks=("top_left", "additive"), score_rel=0.0),
}


def _adapter(fn, x_fmt, out_fmt, device, lse):
    """adapter(q, k, v, mask, causal, scale, shape, descale) -> (o codes, lse codes or None) as the native part calls it;
    descale: (dq, dk, dv) for a declaration with descales (passed to fn as descale=...), else None."""
    p = _pkg()

    def arr(codes, fmt):
        a = p._from_codes(codes, fmt)
        return p._to_device(a, fmt, device) if device is not None else a

    def adapter(q, k, v, mask, causal, scale, shape, descale=None):
        B, Hq, Hkv, Lq, Lk, d = (int(x) for x in shape)
        Q = arr(q, x_fmt).reshape(B, Hq, Lq, d)
        K = arr(k, x_fmt).reshape(B, Hkv, Lk, d)
        V = arr(v, x_fmt).reshape(B, Hkv, Lk, d)
        M = None if mask is None else arr(mask, "f32")
        kw = {} if descale is None else {"descale": tuple(float(x) for x in descale)}
        r = fn(Q, K, V, mask=M, causal=None if causal == "none" else causal, scale=float(scale), **kw)
        O, L = r if isinstance(r, tuple) else (r, None)
        if device is not None and str(device).startswith("cuda"):
            p._torch().cuda.synchronize()  # a failure inside the kernel surfaces here, in this case
        o, to = p._to_numpy(O.reshape(B * Hq * Lq, d), out_fmt)
        codes = p._codes(o, to, out_fmt).astype(p._CONTAINER[p._CONTAINER_BITS[out_fmt]])
        if not lse or L is None:
            return codes, None
        l, tl = p._to_numpy(L.reshape(B * Hq * Lq, 1), "f32")
        return codes, p._codes(l, tl, "f32").astype(np.uint32)
    return adapter


def certify_attention(fn, *, dtype: str = "f16", out: str | None = None, qk: str = "in={t},acc=f32,out=f32",
                      pv: str = "in={t},acc=f32,out=f32", shift: str = "online", key_block: int = 64, exp_form: str = "natural",
                      exp: str = "expf", exp_abs: float = 0.0, normalize: str = "divide", lse: bool = False, log: str = "logf",
                      masked_rows: str = "zero", masked_lse: str = "+inf", masks=("top_left", "bottom_right", "additive"),
                      head_dims=(), grouped_heads: bool = True, score_rel: float = 0.0, note: str = "", descales: bool = False,
                      descale_roundings: int = 0, p_offset: int = 0, device=None,
                      suite: str = "attention_quick", name: str | None = None, json=None, junit=None, html=None):
    """Certify a scaled-dot-product attention forward, O = softmax(s Q K^T + mask) V per batch and head.

    ``fn(Q, K, V, mask=None, causal=None, scale=s)`` receives Q (batch, heads_q, len_q, head_dim), K and V (batch,
    heads_kv, len_k, head_dim) in format ``dtype`` (NumPy; torch tensors on ``device`` when it is given), ``mask`` a
    float32 (len_q, len_k) additive mask or None, ``causal`` None, "top_left" (query i sees keys j <= i, PyTorch's
    is_causal) or "bottom_right" (j <= i + len_k - len_q, FlashAttention's); it returns O (same layout as Q) in format
    ``out`` (default ``dtype``), or (O, LSE) with LSE (batch, heads_q, len_q) in float32 when ``lse=True``. Grouped
    heads: query head h reads key/value head h // (heads_q // heads_kv). Cases whose masks, head dims or grouped heads
    the declaration does not take are reported not supported.

    The declaration is what the bound reads (docs/attention.md): the two GEMMs as traits specs ``qk`` and ``pv``
    ("{t}" is ``dtype``; pv's ``in`` is the format P is rounded into before P V), ``shift`` (online with ``key_block``
    keys a block, online_fa2 with FlashAttention-2's rescaling factor exp2(RN(RN(m_old - m_new) c)), or shifted), ``exp_form`` (natural: exp(RN(s x) + mask - max); base2: exp2(fma(x, RN(s log2 e),
    -m2)); base2_scaled: exp2(RN(RN(x RN(s log2 e)) - m2)), the memory-efficient kernel's), ``exp`` (expf, __expf, libm, cr, ulps:N) with ``exp_abs`` (an absolute error for flushed results),
    ``normalize`` (divide, reciprocal, reciprocal_approx: 1 / l within 2 ulp as a fast-math build computes it, probabilities: each P_j = RN(e_j / l) before P V), ``masked_rows`` (zero, nan) and ``masked_lse`` (+inf, -inf) for fully masked
    rows, ``score_rel`` (a relative perturbation of each q k product beyond qk's, derived in ``note``).
    FP8 (docs/attention.md, "FP8 and descale factors"): ``descales=True`` declares per-tensor descale factors; fn then
    gets ``descale=(dq, dk, dv)`` and computes attention of dq Q, dk K, dv V (the suites' e4m3 cases are quantised per
    tensor by their amax), folding them with ``descale_roundings`` relative fp32 roundings into the scale (FlashAttention-3:
    2); ``p_offset`` = k declares P formed as 2^k times the probability (FlashAttention-3's FP8 Max_offset 8; exp_form
    base2 only).
    ``fpcert.sdpa_declaration(backend, dtype)`` gives PyTorch's SDPA backends' declarations."""
    out = out or dtype
    qk, pv = qk.replace("{t}", dtype), pv.replace("{t}", dtype)
    kname = _kname(fn, name)
    run = _fpcert.certify_attention(_adapter(fn, dtype, out, device, bool(lse)), dtype, out, qk, pv, shift, int(key_block),
                                    exp_form, exp, float(exp_abs), normalize, bool(lse), log, masked_rows, masked_lse,
                                    list(masks), [int(h) for h in head_dims], bool(grouped_heads), float(score_rel), note,
                                    bool(descales), int(descale_roundings), int(p_offset), kname,
                                    f"Python attention {kname}", suite,
                                    "python: fpcert.certify_attention(" + kname + ", suite=" + repr(suite) + ")")
    return _finish(run, json, junit, html)


def sdpa_declaration(backend: str, dtype: str) -> dict:
    """The keyword arguments of certify_attention declaring PyTorch's SDPA backend ("math", "flash", "efficient", "cudnn") for a dtype
    (f16, bf16): SDPA_DECLARATIONS with the dtype filled in and a note naming the source."""
    if backend not in SDPA_DECLARATIONS:
        raise _pkg().InputError(f"fpcert.sdpa_declaration: no declaration of backend {backend!r} (math, flash, efficient, cudnn)")
    d = dict(SDPA_DECLARATIONS[backend])
    d["qk"], d["pv"] = d["qk"].replace("{t}", dtype), d["pv"].replace("{t}", dtype)
    d["dtype"] = dtype
    d["note"] = f"PyTorch SDPA backend {backend} as docs/attention.md declares it"
    return d


def sdpa(backend: str):
    """A callable for certify_attention running torch.nn.functional.scaled_dot_product_attention with `backend` pinned
    (math, flash, efficient, cudnn; torch.nn.attention.sdpa_kernel). Grouped heads are expanded by repeat_interleave
    (an exact copy) before the call; the mask is passed in the query's dtype (the suites' masks are values of the input
    format: exact). A call the pinned backend refuses ("No available kernel") is reported not supported."""
    torch = _pkg()._torch()
    if torch is None:
        import torch  # noqa: F811
    from torch.nn.attention import SDPBackend, sdpa_kernel
    be = {"math": SDPBackend.MATH, "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION,
          "cudnn": SDPBackend.CUDNN_ATTENTION}[backend]

    def run(Q, K, V, mask=None, causal=None, scale=None):
        if causal not in (None, "top_left"):
            raise NotImplementedError(f"torch SDPA takes is_causal (top-left) only, not {causal}")
        if K.shape[1] != Q.shape[1]:
            g = Q.shape[1] // K.shape[1]
            K, V = K.repeat_interleave(g, dim=1), V.repeat_interleave(g, dim=1)
        m = None
        if mask is not None:
            m = mask.to(Q.dtype)
            if not torch.equal(m.float(), mask):
                raise NotImplementedError(f"the mask is not exact in {Q.dtype}")
        try:
            with sdpa_kernel(be):
                return torch.nn.functional.scaled_dot_product_attention(Q, K, V, attn_mask=m, is_causal=causal == "top_left",
                                                                        scale=scale)
        except RuntimeError as e:  # the pinned backend refuses this call (e.g. flash: is_causal with len_q != len_k)
            if "No available kernel" in str(e) or "not supported" in str(e).lower():
                raise NotImplementedError(f"torch SDPA backend {backend}: {e}") from e
            raise
    run.__qualname__ = f"torch_sdpa_{backend}"
    return run
