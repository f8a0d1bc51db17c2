"""fpcert.certify_attention_backward: a Python attention backward (PyTorch's SDPA backward with a backend pinned, autograd
of the math backend, a NumPy function) certified through fpcert's runner on an attention backward suite, against the
correctly rounded gradient and the per-element bound of the arithmetic the caller declares (docs/python.md, "Attention";
docs/backward.md, "Attention backward")."""
import numpy as np

from . import _fpcert
from .rows import _finish, _kname, _pkg

_MMA = "in={t},acc=f32,acc_rounding=rz,out=f32"
_F32 = "in=f32,acc=f32,out=f32"

#: PyTorch's SDPA backward kernels as fpcert declares them (docs/backward.md, "Attention backward"). Each entry: the
#: keyword arguments of certify_attention_backward, "{t}" the dtype's tag.
SDPA_BWD_DECLARATIONS = {
    # FlashAttention-2's backward as vendored by PyTorch (flash_bwd_kernel.h): mma.sync with fp32 accumulators (declared as
    # the forward's: truncated accumulation, any order), P recomputed as exp2f(fma(x, s log2 e, -LSE log2 e)) with
    # --use_fast_math (2 ulp, subnormals flushed), D = rowsum(dO o O) in fp32, P and dS rounded to the dtype before their
    # GEMMs, dQ's partials added with fp32 atomicAdd (run to run), outputs in the dtype. is_causal (top-left) only; grouped
    # heads not declared (the adapter expands K and V, and the sum of the expanded heads' dK, dV would be a rounding more).
    "flash": dict(gemms=(_MMA,) * 5, exp_form="base2", exp="ulps:2", exp_abs=2.0 ** -126, d_acc="f32", compute="f32", dq_atomics=True,
                  dq_acc="f32", masks=("top_left",), grouped_heads=False, masked_lse="+inf", reads_saved=True),
    # The memory-efficient (CUTLASS) backward: the same GEMM declaration, P = exp(s x + bias - LSE) declared natural with
    # fast-math expf (2 ulp), dQ accumulated across key splits with atomics (declared run to run: any order). Takes the
    # additive mask (attn_bias) and is_causal.
    "efficient": dict(gemms=(_MMA,) * 5, exp_form="natural", exp="ulps:2", exp_abs=2.0 ** -126, d_acc="f32", compute="f32",
                      dq_atomics=True, dq_acc="f32", masks=("top_left", "additive"), grouped_heads=False, masked_lse="+inf",
                      reads_saved=True),
    # cuDNN's fused attention backward (cudnn-frontend's SDPA backward, "the FlashAttention-2 algorithm" by its documentation;
    # its arithmetic is not documented further): declared as FlashAttention-2's backward above, with the additive mask
    # (attn_bias) it takes, in the natural form: cudnn-frontend's graph multiplies the scores by attn_scale, then adds the
    # bias (a bf16 finfo.min mask stays finite there, as measured); dQ declared run to run. Measured on the H100
    # (docs/backward.md, "PyTorch SDPA backward"): every case it takes passes under this declaration.
    "cudnn": dict(gemms=(_MMA,) * 5, exp_form="natural", exp="ulps:2", exp_abs=2.0 ** -126, d_acc="f32", compute="f32", dq_atomics=True,
                  dq_acc="f32", masks=("top_left", "additive"), grouped_heads=False, masked_lse="+inf", reads_saved=True),
    # The math backend through autograd: f16/bf16 upcast to fp32, the forward recomputed (the saved O and LSE are not read:
    # graded at the exact forward), softmax backward and three fp32 cuBLAS GEMMs, the gradients rounded once to the dtype.
    "math": dict(gemms=(_F32,) * 5, exp_form="natural", exp="expf", exp_abs=0.0, d_acc="f32", compute="f32", dq_atomics=False,
                 dq_acc="f32", masks=("top_left", "additive"), grouped_heads=False, masked_lse="-inf", reads_saved=False),
}


def _adapter(fn, x_fmt, outs, device):
    """adapter(q, k, v, o, do, lse, mask, causal, scale, shape) -> (dq, dk, dv codes) as the native part calls it."""
    p = _pkg()

    def arr(codes, fmt):
        a = p._from_codes(codes, fmt)
        return p._to_device(a, fmt, device) if device is not None else a

    def codes(t, rows, d, fmt):
        a, ta = p._to_numpy(t.reshape(rows, d), fmt)
        return p._codes(a, ta, fmt).astype(p._CONTAINER[p._CONTAINER_BITS[fmt]])

    def adapter(q, k, v, o, do, lse, mask, causal, scale, shape):
        B, Hq, Hkv, Lq, Lk, d = (int(x) for x in shape)
        Q, O, G = (arr(x, x_fmt).reshape(B, Hq, Lq, d) for x in (q, o, do))
        K, V = (arr(x, x_fmt).reshape(B, Hkv, Lk, d) for x in (k, v))
        L = arr(lse, "f32").reshape(B, Hq, Lq)
        M = None if mask is None else arr(mask, "f32")
        dQ, dK, dV = fn(Q, K, V, O, G, L, mask=M, causal=None if causal == "none" else causal, scale=float(scale))
        if device is not None and str(device).startswith("cuda"):
            p._torch().cuda.synchronize()
        return codes(dQ, B * Hq * Lq, d, outs[0]), codes(dK, B * Hkv * Lk, d, outs[1]), codes(dV, B * Hkv * Lk, d, outs[2])
    return adapter


def certify_attention_backward(fn, *, dtype: str = "f16", outs=None, gemms=("in={t},acc=f32,out=f32",) * 5, exp_form: str = "natural",
                               exp: str = "expf", exp_abs: float = 0.0, d_acc: str = "f32", compute: str = "f32",
                               dq_atomics: bool = False, dq_acc: str = "f32", masks=("top_left", "bottom_right", "additive"),
                               head_dims=(), grouped_heads: bool = True, masked_lse: str = "+inf", reads_saved: bool = True,
                               note: str = "", device=None, suite: str = "attention_backward_quick", name: str | None = None,
                               json=None, junit=None, html=None):
    """Certify an attention backward: dQ, dK, dV from Q, K, V, the forward's saved O and LSE and the incoming dO.

    ``fn(Q, K, V, O, dO, LSE, mask=None, causal=None, scale=s)`` receives Q, O, dO (batch, heads_q, len_q, head_dim), K
    and V (batch, heads_kv, len_k, head_dim) in format ``dtype`` (NumPy; torch tensors on ``device`` when given), LSE
    (batch, heads_q, len_q) float32 (natural log, the correctly rounded forward's; fully masked rows ``masked_lse``),
    ``mask`` a float32 (len_q, len_k) additive mask or None, ``causal`` None, "top_left" or "bottom_right"; it returns
    (dQ, dK, dV) in the formats ``outs`` (default: ``dtype`` each).

    The declaration is what the bound reads (docs/backward.md): the five GEMMs as traits specs ``gemms`` (Q K^T, dO V^T,
    P^T dO, dS K, dS^T Q; "{t}" is ``dtype``; the third's ``in`` is P's format, the last two's dS's), ``exp_form`` (natural
    or base2: exp2(fma(x, RN(s log2 e), -RN(LSE RN(log2 e))))), ``exp`` with ``exp_abs``, ``d_acc`` (D's accumulator),
    ``compute``, ``dq_atomics`` (dQ's partials added with atomics in ``dq_acc``: each run graded, the spread reported),
    ``reads_saved`` (False: the callable recomputes the forward and is graded at the exact forward).
    ``fpcert.sdpa_backward_declaration(backend, dtype)`` gives PyTorch's backward kernels' declarations."""
    outs = tuple(outs) if outs else (dtype,) * 3
    gemms = [g.replace("{t}", dtype) for g in gemms]
    kname = _kname(fn, name)
    run = _fpcert.certify_attention_backward(_adapter(fn, dtype, outs, device), dtype, gemms, exp_form, exp, float(exp_abs), d_acc,
                                             compute, bool(dq_atomics), dq_acc, list(outs), list(masks), [int(h) for h in head_dims],
                                             bool(grouped_heads), masked_lse, bool(reads_saved), note, kname,
                                             f"Python attention backward {kname}", suite,
                                             "python: fpcert.certify_attention_backward(" + kname + ", suite=" + repr(suite) + ")")
    return _finish(run, json, junit, html)


def sdpa_backward_declaration(backend: str, dtype: str) -> dict:
    """The keyword arguments of certify_attention_backward declaring PyTorch's SDPA backward ``backend`` (flash,
    efficient, math) for a dtype (f16, bf16)."""
    if backend not in SDPA_BWD_DECLARATIONS:
        raise _pkg().InputError(f"fpcert.sdpa_backward_declaration: no declaration of backend {backend!r} (flash, efficient, math, cudnn)")
    d = dict(SDPA_BWD_DECLARATIONS[backend])
    d["gemms"] = tuple(g.replace("{t}", dtype) for g in d["gemms"])
    d["dtype"] = dtype
    d["note"] = f"PyTorch SDPA backward {backend} as docs/backward.md declares it"
    return d


def _aten_op(torch, name: str, args: tuple):
    """torch.ops.aten.<name> with the arguments this adapter passes, checked against the op's schema (torch 2.11's names);
    NotImplementedError naming what differs when the op or an argument is absent."""
    op = getattr(torch.ops.aten, name, None)
    if op is None:
        raise NotImplementedError(f"torch {torch.__version__} has no torch.ops.aten.{name}")
    schema = str(op.default._schema)
    missing = [a for a in args if f" {a}" not in schema and f"({a}" not in schema]
    if missing:
        raise NotImplementedError(f"torch.ops.aten.{name} ({schema}) lacks argument(s) {missing}: fpcert's adapter follows torch 2.11")
    return op


def _bias(torch, mask, Q):
    """The additive mask as the fused backward ops take it (attn_bias): in Q's dtype, broadcast over batch and heads, its rows
    stored at a stride that is a multiple of 16 elements (the memory-efficient op refuses "attn_bias is not correctly aligned
    (strideM)" otherwise, e.g. for 131 keys; the public SDPA pads the same way before calling it)."""
    if mask is None:
        return None
    lk = mask.shape[-1]
    m = torch.nn.functional.pad(mask.to(Q.dtype), (0, (-lk) % 16))[..., :lk]
    return m.expand(Q.shape[0], Q.shape[1], -1, -1)


def sdpa_backward(backend: str):
    """A callable for certify_attention_backward running PyTorch's SDPA backward with ``backend`` pinned: flash and
    efficient call torch.ops.aten._scaled_dot_product_{flash,efficient}_attention_backward on the runner's O and LSE (the
    forward op is called once for its bookkeeping tensors: sequence offsets, RNG state); cudnn the cuDNN backward op when
    present; math differentiates torch.nn.functional.scaled_dot_product_attention under sdpa_kernel(MATH) with autograd
    (the forward recomputed). Grouped heads and alignments the op does not take are reported not supported."""
    torch = _pkg()._torch()
    if torch is None:
        import torch  # noqa: F811
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run(Q, K, V, O, G, L, mask=None, causal=None, scale=None):
        if causal not in (None, "top_left"):
            raise NotImplementedError(f"torch SDPA takes is_causal (top-left) only, not {causal}")
        if K.shape[1] != Q.shape[1]:
            raise NotImplementedError("grouped-query heads are not declared for torch's SDPA backward (docs/backward.md)")
        is_causal = causal == "top_left"
        if backend == "math":
            q, k, v = (x.detach().clone().requires_grad_(True) for x in (Q, K, V))
            m = None if mask is None else mask.to(Q.dtype)
            with sdpa_kernel(SDPBackend.MATH):
                out = torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=is_causal, scale=scale)
            out.backward(G)
            return q.grad, k.grad, v.grad
        if backend == "flash":
            if mask is not None:
                raise NotImplementedError("the flash backward takes no additive mask")
            fwd = _aten_op(torch, "_scaled_dot_product_flash_attention", ("query", "key", "value", "dropout_p", "is_causal"))
            bwd = _aten_op(torch, "_scaled_dot_product_flash_attention_backward",
                           ("grad_out", "out", "logsumexp", "cum_seq_q", "cum_seq_k", "max_q", "max_k", "philox_seed", "philox_offset", "scale"))
            f = fwd(Q, K, V, 0.0, is_causal, False, scale=scale)
            _, _, cq, ck, mq, mk, seed, off = f[:8]
            r = bwd(G, Q, K, V, O, L.contiguous(), cq, ck, mq, mk, 0.0, is_causal, seed, off, scale=scale)
            return r[0], r[1], r[2]
        if backend == "efficient":
            fwd = _aten_op(torch, "_scaled_dot_product_efficient_attention", ("query", "key", "value", "attn_bias", "compute_log_sumexp"))
            bwd = _aten_op(torch, "_scaled_dot_product_efficient_attention_backward",
                           ("grad_out_", "attn_bias", "out", "logsumexp", "philox_seed", "philox_offset", "grad_input_mask"))
            bias = _bias(torch, mask, Q)
            out_f, lse_f, seed, off = fwd(Q, K, V, bias, True, 0.0, is_causal, scale=scale)
            lse = torch.full_like(lse_f, float("inf"))  # padded to a multiple of 32 queries: the runner's LSE in front
            lse[..., : L.shape[-1]] = L
            # The runner's O in the forward output's memory layout ((B, L, H, D) transposed): measured on the H200 (torch
            # 2.11), this backward op given an O contiguous in (B, H, L, D) returns wrong or NaN dQ and dK, silently
            # (docs/backward.md, "Results on the H200"); autograd always hands it the forward's own tensor.
            O = torch.empty_like(out_f).copy_(O)
            r = bwd(G, Q, K, V, bias, O, lse, seed, off, 0.0, [True, True, True, False], is_causal, scale=scale)
            return r[0], r[1], r[2]
        if backend == "cudnn":
            fwd = _aten_op(torch, "_scaled_dot_product_cudnn_attention", ("query", "key", "value", "attn_bias", "compute_log_sumexp"))
            bwd = _aten_op(torch, "_scaled_dot_product_cudnn_attention_backward",
                           ("grad_out", "out", "logsumexp", "philox_seed", "philox_offset", "attn_bias", "cum_seq_q", "max_q"))
            if Q.shape[2] == 1 and K.shape[2] == 1:
                # cuDNN Frontend: "s_q = s_kv = 1 is not supported" (torch 2.11, cuDNN 9.19: a RuntimeError from the backward
                # op, and a segmentation fault on the next such call in the same process): declined before any call.
                raise NotImplementedError("the cuDNN SDPA backward takes no single query with a single key")
            bias = _bias(torch, mask, Q)
            try:
                f = fwd(Q, K, V, bias, True, 0.0, is_causal, False, scale=scale)
                out_f, lse_f, cq, ck, mq, mk, seed, off = f[:8]
                if lse_f.numel() != L.numel():
                    raise NotImplementedError(f"the cuDNN forward's logsumexp has shape {tuple(lse_f.shape)}, not one of {tuple(L.shape)}")
                # The runner's O and LSE in the forward's own tensors' layouts (as for the efficient backward, above).
                O = torch.empty_like(out_f).copy_(O)
                lse = torch.empty_like(lse_f).copy_(L.reshape(lse_f.shape))
                r = bwd(G, Q, K, V, O, lse, seed, off, bias, cq, ck, mq, mk, 0.0, is_causal, scale=scale)
            except RuntimeError as e:  # cuDNN declines this shape, alignment or mask ("cuDNN Frontend error: ...")
                if "cuDNN" in str(e) or "not supported" in str(e).lower():
                    raise NotImplementedError(f"torch SDPA backend cudnn: {e}") from e
                raise
            return r[0], r[1], r[2]
        raise NotImplementedError(f"unknown backend {backend!r} (flash, efficient, cudnn, math)")
    run.__qualname__ = f"torch_sdpa_backward_{backend}"
    return run
