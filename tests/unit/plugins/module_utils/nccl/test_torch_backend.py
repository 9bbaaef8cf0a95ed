"""The torch benchmark script (nccl_torch.SCRIPT): how it combines the ranks' times.

The script needs torch and GPUs to run (the GPU proof runs it: tests/fixtures/nccl/); its pure parts are executed
here from the very text the module writes to the node.
"""

import inspect

import pytest

from ansible_collections.ibtune.fabric.plugins.module_utils.nccl import nccl_tests
from ansible_collections.ibtune.fabric.plugins.module_utils.nccl.torch_backend import SCRIPT


@pytest.fixture(scope="module")
def script():
    namespace = {"__name__": "ibtune_nccl_torch"}
    exec(compile(SCRIPT, "ibtune_nccl_torch.py", "exec"), namespace)
    return namespace


def test_default_is_nccl_tests_default_the_mean_over_ranks(script):
    """nccl-tests' common.cu: `static int average = 1;` (AVG); a 2-GPU run whose ranks took 100 and 120 us."""
    assert inspect.signature(script["bench"]).parameters["average"].default == "avg"
    assert script["combine_times"]([100.0, 120.0]) == 110.0
    assert nccl_tests.AVERAGE_CODES["avg"] == 1


@pytest.mark.parametrize(("how", "expected"), [("rank0", 120.0), ("min", 100.0), ("max", 130.0), ("avg", 116.0)])
def test_every_nccl_tests_average_mode(script, how, expected):
    assert script["combine_times"]([120.0, 100.0, 130.0, 114.0], how) == pytest.approx(expected)


def test_unknown_mode_is_refused(script):
    with pytest.raises(ValueError, match="not one of rank0, avg, min, max"):
        script["combine_times"]([1.0], "median")
