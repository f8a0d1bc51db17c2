"""tests/python/gpu_main.py — runs test_torch_gpu.py, test_torch_rows_gpu.py, test_torch_attention_gpu.py, test_torch_attention_bwd_gpu.py, test_torch_epilogue_gpu.py, test_torch_eltwise_gpu.py and test_torch_diagnose_rows_gpu.py under pytest; exit 77 (ctest: skipped, never
passed) when torch or a CUDA device is missing."""
import os
import sys

try:
    import torch
except ImportError:
    print("torch is not installed: the GPU tests of the Python entry are skipped")
    sys.exit(77)
if not torch.cuda.is_available():
    print("no CUDA device: the GPU tests of the Python entry are skipped")
    sys.exit(77)
import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main(["-q", "-rA", "-p", "fpcert.pytest_plugin", os.path.join(here, "test_torch_gpu.py"),
                      os.path.join(here, "test_torch_rows_gpu.py"), os.path.join(here, "test_torch_attention_gpu.py"),
                      os.path.join(here, "test_torch_softmax_bwd_gpu.py"),
                      os.path.join(here, "test_torch_norm_bwd_gpu.py"),
                      os.path.join(here, "test_torch_attention_bwd_gpu.py"),
                      os.path.join(here, "test_torch_epilogue_gpu.py"),
                      os.path.join(here, "test_torch_eltwise_gpu.py"),
                      os.path.join(here, "test_torch_diagnose_rows_gpu.py")] + sys.argv[1:]))
