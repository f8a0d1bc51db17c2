"""fpcert's fused GEMM epilogues from Python (docs/python.md, "Fused epilogues"; docs/epilogue.md): the keyword
arguments a certified callable receives (bias, activation, FP8 scale factors, amax), and PyTorch's epilogue subjects
as callables with their declarations: torch._addmm_activation (cuBLASLt's fused bias + ReLU/GELU epilogue), an
unfused F.linear then the activation (Z rounded to the dtype first), and torch._scaled_mm (FP8 with scale factors)."""
import sys

import numpy as np

#: numpy dtypes of the accumulator formats an amax can be handed back in
_AMAX_DTYPE = {"f64": np.float64, "f32": np.float32, "f16": np.float16}


def _pkg():
    return sys.modules[__package__]


def call_kwargs(t, native, device):
    """(keyword arguments for the callable, the amax array handed to it or None) from the native part's keywords
    (python/gemm_epilogue.cpp): bias as an array in the bias format shaped to broadcast against D ((n,) per column,
    (m, 1) per row; torch on `device` when given) or None, activation; scale_a, scale_b, scale_d with FP8 scaling; amax
    (a 1-element array of the accumulator format, NaN until the callable writes max |act(Z)| into it, or None when the
    case does not ask) when the traits declare it."""
    p, e = _pkg(), t.epilogue
    bias = native.get("bias")
    if bias is not None:
        tag = e["bias_format"] or t.out
        bias = p._from_codes(np.asarray(bias).reshape(-1), tag)
        if native.get("bias_kind") == "row":
            bias = bias.reshape(-1, 1)
        if device is not None:
            bias = p._to_device(np.ascontiguousarray(bias), tag, device)
    kw = {"bias": bias, "activation": native.get("activation", "none")}
    if e["fp8_scaling"]:
        kw.update(scale_a=native["scale_a"], scale_b=native["scale_b"], scale_d=native["scale_d"])
    amax = None
    if e["amax"]:
        if native.get("_amax_out") is not None:
            if t.acc not in _AMAX_DTYPE:
                raise p.InputError(f"fpcert: amax in the accumulator format {t.acc} cannot be handed to Python (f64, f32, f16)")
            amax = np.full(1, np.nan, dtype=_AMAX_DTYPE[t.acc])
            if device is not None:
                amax = p._to_device(amax, t.acc, device)
        kw["amax"] = amax
    return kw, amax


def store_amax(native, amax):
    """The callable's amax back into the native part's array (a value of the accumulator format: its own dtype's)."""
    if amax is not None:
        native["_amax_out"][0] = float(amax.reshape(-1)[0].item())  # NumPy and torch alike


# ---- PyTorch's epilogue subjects -------------------------------------------------------------------------------------
def _torch():
    import torch  # a torch subject was asked for: torch is required

    return torch


def _column_bias(bias, like, who):
    """A bias per column as the 1-D vector torch's epilogues take (zeros of like's last dimension, n, when the case has none:
    adding +0 is exact)."""
    torch = _torch()
    if bias is None:
        return torch.zeros(like.shape[-1], dtype=like.dtype, device=like.device)
    if bias.dim() != 1:
        raise NotImplementedError(f"{who} adds a bias per column only (a 1-D vector of length n)")
    return bias


def torch_addmm_activation():
    """torch._addmm_activation(bias, A, B, use_gelu=...) as a callable: PyTorch's fused GEMM + bias + ReLU or GELU, which
    on CUDA calls cuBLASLt with CUBLASLT_EPILOGUE_RELU_BIAS or _GELU_BIAS when the bias is a contiguous 1-D vector of
    length n (aten/src/ATen/native/cuda/Blas.cpp, addmm_out_cuda_impl; its fallback applies gelu(approximate="tanh") after
    the GEMM). use_gelu is GELU's tanh form; activation "none" calls torch.addmm (cuBLASLt's bias epilogue). Other
    activations and a bias per row: NotImplementedError ("not supported")."""
    def fn(A, B, bias=None, activation="none", **_):
        torch = _torch()
        b = _column_bias(bias, B, "torch._addmm_activation")  # its length is D's columns: B's n
        if activation == "none":
            return torch.addmm(b, A, B)
        if activation not in ("relu", "gelu_tanh"):
            raise NotImplementedError(f"torch._addmm_activation has ReLU and GELU (tanh form) only, not {activation}")
        op = getattr(torch, "_addmm_activation", None) or getattr(torch.ops.aten, "_addmm_activation", None)
        if op is None:
            raise NotImplementedError("this torch has no _addmm_activation")
        return op(b, A, B, use_gelu=activation == "gelu_tanh")
    return fn


def torch_linear_then_activation():
    """F.linear(A, B^T, bias) then the activation as eager PyTorch runs them: two kernels, D = act(RN(Z)), the linear's
    result rounded to the dtype before the activation (declared round_before_act=1). ReLU, GELU (erf: approximate="none";
    tanh), SiLU. A bias per row: NotImplementedError (F.linear's bias is per column)."""
    def fn(A, B, bias=None, activation="none", **_):
        torch = _torch()
        F = torch.nn.functional
        if bias is not None and bias.dim() != 1:
            raise NotImplementedError("F.linear adds a bias per column only")
        z = F.linear(A, B.t(), bias)
        acts = {"none": lambda x: x, "relu": F.relu, "gelu_erf": F.gelu, "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
                "silu": F.silu}
        return acts[activation](z)
    return fn


def torch_scaled_mm(out_dtype=None):
    """torch._scaled_mm(A, B, scale_a=, scale_b=, bias=, out_dtype=) as a callable: an FP8 GEMM with per-tensor scale
    factors (fp32 scalar tensors on A's device), B passed column-major as it requires, D = RN_out(scale_a scale_b A B +
    bias). What it does not expose is declined ("not supported"): an activation, scale_d other than 1 with a non-FP8
    output (scale_result applies to FP8 outputs only), a bias per row, and amax (torch >= 2.4 returns D alone; an older
    torch returning (D, amax) hands its amax back)."""
    def fn(A, B, bias=None, activation="none", scale_a=1.0, scale_b=1.0, scale_d=1.0, amax=None, **_):
        torch = _torch()
        if activation != "none":
            raise NotImplementedError("torch._scaled_mm has no activation epilogue")
        dt = getattr(torch, out_dtype) if isinstance(out_dtype, str) else out_dtype or torch.bfloat16
        if scale_d != 1.0:
            raise NotImplementedError(f"torch._scaled_mm's scale_result applies to FP8 outputs only, not {dt}")
        if bias is not None and bias.dim() != 1:
            raise NotImplementedError("torch._scaled_mm adds a bias per column only")
        why = scaled_mm_shape(A.shape[0], B.shape[1], A.shape[1])
        if why:
            raise NotImplementedError(why)
        sa = torch.tensor(scale_a, dtype=torch.float32, device=A.device)
        sb = torch.tensor(scale_b, dtype=torch.float32, device=A.device)
        kw = dict(scale_a=sa, scale_b=sb, out_dtype=dt)
        if bias is not None:
            kw["bias"] = bias
        try:
            out = torch._scaled_mm(A, B.t().contiguous().t(), **kw)  # B column-major, as cuBLASLt's FP8 path requires
        except TypeError as e:  # a torch whose _scaled_mm takes other arguments
            raise NotImplementedError(f"torch._scaled_mm(A, B, scale_a=, scale_b=, bias=, out_dtype=) is refused here: {e}") from e
        if isinstance(out, tuple):  # torch < 2.4: (D, amax)
            out, got_amax = out
            if amax is not None:
                amax.copy_(got_amax.reshape(-1)[:1].to(amax.dtype))
        elif amax is not None:
            raise NotImplementedError("torch._scaled_mm returns no amax in this torch (>= 2.4)")
        return out
    fn.can_implement = scaled_mm_shape  # declined before the data: "not supported", not a failure
    return fn


def scaled_mm_shape(m, n, k):
    """Why torch._scaled_mm cannot take an m x k by k x n product, or None: every dimension a multiple of 16 (cuBLASLt's
    FP8 GEMM; measured on the H200: a RuntimeError otherwise). torch_scaled_mm's callable carries it as its
    ``can_implement``, which fpcert.certify asks before handing over any data."""
    if m % 16 or n % 16 or k % 16:
        return f"torch._scaled_mm takes M, N and K multiples of 16, not {m} x {n} x {k} (M x N x K)"
    return None


#: What each subject declares, by dtype tag ("{t}": the dtype). torch.matmul's tensor-core accumulation is modelled as
#: truncation (fpcert.TORCH_MATMUL_TRAITS); the epilogue: cuBLASLt's as measured on the H200 (docs/epilogue.md, "What
#: cuBLASLt's GELU computes": Z rounded to the dtype before the GELU, its fp32 GELU within 2^-17.98 |z| of the tanh form,
#: declared 2^-16; with C and a bias, alpha AB + beta C rounded to the dtype before the bias), the unfused one's (PyTorch's CUDA gelu and silu in fp32 with erff,
#: tanhf, expf: 2 ulp, 2^-22, after the linear's result is rounded to the dtype), and _scaled_mm's FP8 (e4m3 operands,
#: use_fast_accum=False: the MMA's partial sums promoted into fp32 by cuBLASLt, declared as fp32 accumulation, truncated).
TORCH_EPILOGUE_TRAITS = {
    "addmm_activation": "in={t},acc=f32,acc_rounding=rz,out={t},bias=column,activation=relu|gelu_tanh,func_rel_err=2^-16,"
                        "round_before_act=1,round_before_bias=1",
    "linear_then_activation": "in={t},acc=f32,acc_rounding=rz,out={t},bias=column,activation=relu|gelu_erf|gelu_tanh|silu,"
                              "func_rel_err=2^-22,round_before_act=1",
    "scaled_mm": "in=e4m3,acc=f32,acc_rounding=rz,out={t},bias=column,bias_format={t},fp8_scaling=1",
}


def torch_epilogue(subject, dtype="bf16"):
    """(callable, Traits) of a PyTorch epilogue subject: "addmm_activation", "linear_then_activation" or "scaled_mm"
    (dtype: the output's, and the operands' but for scaled_mm's e4m3). E.g.
    ``fpcert.certify(*fpcert.torch_epilogue("addmm_activation", "bf16"), device="cuda")``."""
    p = _pkg()
    if subject not in TORCH_EPILOGUE_TRAITS:
        raise p.InputError(f"fpcert.torch_epilogue: unknown subject {subject!r} (one of {', '.join(TORCH_EPILOGUE_TRAITS)})")
    tag = p._TORCH_FORMAT.get(str(dtype).replace("torch.", ""), str(dtype))
    if tag not in ("f16", "bf16", "f32"):
        raise p.InputError(f"fpcert.torch_epilogue: dtype {dtype} (f16, bf16, f32)")
    if subject == "scaled_mm":
        fn = torch_scaled_mm({"f16": "float16", "bf16": "bfloat16", "f32": "float32"}[tag])
    else:
        fn = {"addmm_activation": torch_addmm_activation, "linear_then_activation": torch_linear_then_activation}[subject]()
    return fn, p.traits(TORCH_EPILOGUE_TRAITS[subject].format(t=tag))
