"""Shared test configuration."""

from __future__ import annotations

import os

import torch

# Determinism and speed on the 2-core CI machine: one intra-op thread per test process.
torch.set_num_threads(int(os.environ.get("EXPLORABLES_TEST_THREADS", "1")))
