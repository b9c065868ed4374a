"""python/gpusim/record_rules.py: the CUDA build's allocations that a CPU recording adds,
each with its arithmetic (no PyTorch needed: the rules are plain functions)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from gpusim import record_rules as rules  # noqa: E402

A100 = (8, 0)
H100 = (9, 0)


class CublasWorkspace(unittest.TestCase):
    def test_the_default_outside_hopper_is_two_4_mib_and_eight_16_kib_pieces(self) -> None:
        # 4096 KiB x 2 + 16 KiB x 8 = 8388608 + 131072
        self.assertEqual(rules.cublas_workspace_bytes(A100, {}), 8519680)
        self.assertEqual(rules.cublas_workspace_bytes((8, 9), {}), 8519680)
        self.assertEqual(rules.cublas_workspace_bytes((10, 0), {}), 8519680)

    def test_hopper_9_0_takes_eight_4_mib_pieces(self) -> None:
        # 4096 KiB x 8 = 33554432
        self.assertEqual(rules.cublas_workspace_bytes(H100, {}), 33554432)

    def test_cublas_workspace_config_sums_size_times_count(self) -> None:
        # :4096:8 = 4096 KiB x 8; :16:8 = 16 KiB x 8 = 131072; :4096:2:16:8 = the default
        self.assertEqual(rules.cublas_workspace_bytes(A100, {"CUBLAS_WORKSPACE_CONFIG": ":4096:8"}), 33554432)
        self.assertEqual(rules.cublas_workspace_bytes(H100, {"CUBLAS_WORKSPACE_CONFIG": ":16:8"}), 131072)
        self.assertEqual(rules.cublas_workspace_bytes(A100, {"CUBLAS_WORKSPACE_CONFIG": ":4096:2:16:8"}), 8519680)

    def test_an_unparsable_config_keeps_the_default(self) -> None:
        self.assertEqual(rules.cublas_workspace_bytes(H100, {"CUBLAS_WORKSPACE_CONFIG": "lots"}), 33554432)


class CublasLtWorkspace(unittest.TestCase):
    def test_the_default_is_1024_kib(self) -> None:
        self.assertEqual(rules.cublaslt_workspace_bytes(A100, {}), 1048576)

    def test_its_size_is_capped_at_the_cublas_workspace(self) -> None:
        # 65536 KiB asked, the cuBLAS workspace is 8519680 B
        self.assertEqual(rules.cublaslt_workspace_bytes(A100, {"CUBLASLT_WORKSPACE_SIZE": "65536"}), 8519680)
        # 16 KiB x 8 = 131072 < 1024 KiB
        self.assertEqual(rules.cublaslt_workspace_bytes(A100, {"CUBLAS_WORKSPACE_CONFIG": ":16:8"}), 131072)

    def test_unified_shares_the_cublas_workspace(self) -> None:
        self.assertEqual(rules.cublaslt_workspace_bytes(A100, {"TORCH_CUBLASLT_UNIFIED_WORKSPACE": "1"}), 0)

    def test_only_addmm_with_a_vector_bias_uses_cublaslt(self) -> None:
        class T:
            def __init__(self, d: int) -> None:
                self.d = d

            def dim(self) -> int:
                return self.d

        self.assertTrue(rules.uses_cublaslt("addmm", (T(1), T(2), T(2))))
        self.assertFalse(rules.uses_cublaslt("addmm", (T(2), T(2), T(2))))
        self.assertFalse(rules.uses_cublaslt("mm", (T(1), T(2))))


class AttentionBackend(unittest.TestCase):
    def test_flash_on_ampere_and_later_in_half_precision_without_a_mask(self) -> None:
        self.assertEqual(rules.sdpa_backend(A100, "bfloat16", 128, False), "flash")
        self.assertEqual(rules.sdpa_backend(H100, "float16", 256, False), "flash")

    def test_memory_efficient_for_float32_masks_large_heads_and_older_cards(self) -> None:
        self.assertEqual(rules.sdpa_backend(A100, "float32", 64, False), "efficient")
        self.assertEqual(rules.sdpa_backend(A100, "bfloat16", 64, True), "efficient")
        self.assertEqual(rules.sdpa_backend(A100, "float16", 512, False), "efficient")
        self.assertEqual(rules.sdpa_backend((7, 0), "float16", 64, False), "efficient")

    def test_math_where_neither_kernel_runs(self) -> None:
        self.assertEqual(rules.sdpa_backend((7, 5), "bfloat16", 64, False), "math")
        self.assertEqual(rules.sdpa_backend(A100, "float64", 64, False), "math")
        self.assertEqual(rules.sdpa_backend((3, 7), "float32", 64, False), "math")


class Capability(unittest.TestCase):
    def test_parses_major_dot_minor_and_refuses_the_rest(self) -> None:
        self.assertEqual(rules.parse_capability("9.0"), (9, 0))
        self.assertEqual(rules.parse_capability("12.0"), (12, 0))
        with self.assertRaises(ValueError):
            rules.parse_capability("sm90")


if __name__ == "__main__":
    unittest.main()
