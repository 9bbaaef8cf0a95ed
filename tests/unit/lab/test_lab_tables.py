"""The lab's copies of the collection's kernel tables stay equal to them.

The perftest simulator, the sysfs tree builder and the fabric agent run alone in the lab image (python3, stdlib, no
collection), so they carry their own copies of host/counters.py's tables; a copy that drifts would make the lab
saturate a counter at another width than the kernel (and the collection) does, or build a tree the collection
does not read."""

import sys

from ansible_collections.ibtune.fabric.plugins.module_utils.host import counters
from ansible_collections.ibtune.fabric.plugins.module_utils.subnet.switch_counters import PMA_TO_SYSFS
from tests.conftest import ROOT

sys.path.insert(0, str(ROOT / "tests" / "lab"))
sys.path.insert(0, str(ROOT / "tests" / "lab" / "subnet"))
import fabric_agent  # noqa: E402
import perftest_sim  # noqa: E402
import sysfs_tree  # noqa: E402


def test_the_perftest_simulator_saturates_counters_at_the_kernels_widths():
    assert perftest_sim.COUNTER_WIDTHS == counters.COUNTER_WIDTHS


def test_the_fabric_agent_saturates_switch_counters_at_the_same_widths_under_their_iba_names():
    assert dict((PMA_TO_SYSFS[name], width) for name, width in fabric_agent.COUNTER_WIDTHS.items()) == (
        counters.COUNTER_WIDTHS
    )


def test_the_tree_builder_writes_the_counter_files_the_collection_reads():
    assert sorted(sysfs_tree.STANDARD_COUNTERS) == sorted(counters.STANDARD_COUNTERS)
