"""The server's malloc arena cap (``serve.malloc``): read from ``PURR_MALLOC_ARENAS``, refused
with a clear error when it is not a number, applied through glibc's ``mallopt``."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from serve.malloc import arenas_setting, limit_arenas


def test_the_setting_is_read_and_a_bad_one_is_refused_with_what_to_write():
    assert arenas_setting({"PURR_MALLOC_ARENAS": "4"}) == 4
    with pytest.raises(ValueError, match="whole number of arenas"):
        arenas_setting({"PURR_MALLOC_ARENAS": "two"})
    with pytest.raises(ValueError, match=">= 0"):
        arenas_setting({"PURR_MALLOC_ARENAS": "-1"})
    assert limit_arenas(0) is False  # 0 leaves glibc alone


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_the_cap_is_applied_in_a_fresh_process():
    code = "from serve.malloc import limit_arenas; print(limit_arenas(2))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"
