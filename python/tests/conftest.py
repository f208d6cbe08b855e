"""Shared fixtures: a private cache folder per test, and the GPU (or the reason there is none)."""

import os
import shutil
import tempfile

import pytest

import kreg


def _gpu_reason():
    try:
        kreg.Stream(0)
    except kreg.NoDevice as e:
        return "no GPU: " + str(e)
    except kreg.Error as e:
        return "no usable GPU: " + str(e)
    return None


GPU_REASON = _gpu_reason()

requires_gpu = pytest.mark.skipif(GPU_REASON is not None, reason=GPU_REASON or "")
requires_no_gpu = pytest.mark.skipif(GPU_REASON is None, reason="a GPU is present")


@pytest.fixture
def cache_dir():
    path = tempfile.mkdtemp(prefix="kreg-py-")
    yield path
    shutil.rmtree(path, ignore_errors=True)


def framework(name):
    """The module `name`, or a skip that says it is not installed."""
    return pytest.importorskip(name, reason=name + " is not installed")


@pytest.fixture(autouse=True, scope="session")
def _private_cache():
    # Tests must not read or fill the user's cache.
    path = tempfile.mkdtemp(prefix="kreg-py-session-")
    old = os.environ.get("KREG_CACHE_DIR")
    os.environ["KREG_CACHE_DIR"] = path
    yield
    if old is None:
        os.environ.pop("KREG_CACHE_DIR", None)
    else:
        os.environ["KREG_CACHE_DIR"] = old
    shutil.rmtree(path, ignore_errors=True)
