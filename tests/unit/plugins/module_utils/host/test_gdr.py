"""gdr.plan: which GPUDirect RDMA method a host gets, and why; on real /proc/driver/nvidia/version banners."""

import pytest

from ansible_collections.ibtune.fabric.plugins.filter.gdr import gdr_plan
from ansible_collections.ibtune.fabric.plugins.module_utils.host.gdr import (
    kernel_version,
    nvidia_flavor,
    peermem_up,
    plan,
    rdma_core_major,
)
from tests.conftest import FIXTURES

OPEN = (FIXTURES / "gdr" / "proc-driver-nvidia-version-open-580.95.05.txt").read_text()
PROPRIETARY = (FIXTURES / "gdr" / "proc-driver-nvidia-version-proprietary-515.76.txt").read_text()
# Debian 12: kernel 6.1, rdma-core 44.0-2; Ubuntu 20.04: kernel 5.4, rdma-core 28.0-1ubuntu1.
DEBIAN12 = {"kernel": "6.1.0-18-amd64", "rdma_core": "44.0-2"}


def test_flavor_from_the_banner_and_from_modinfo():
    assert nvidia_flavor(OPEN) == "open"
    assert nvidia_flavor(PROPRIETARY) == "proprietary"
    assert nvidia_flavor("", "Dual MIT/GPL") == "open"
    assert nvidia_flavor(None, "NVIDIA") == "proprietary"
    assert nvidia_flavor("", "") is None


def test_versions_parse():
    assert kernel_version("6.1.0-18-amd64") == (6, 1)
    assert kernel_version("5.4.0-150-generic") == (5, 4)
    assert kernel_version("") is None
    assert rdma_core_major("44.0-2") == 44
    assert rdma_core_major("2501mlnx56-1.2501060") == 2501
    assert rdma_core_major("1:39.0-1") == 39
    assert rdma_core_major(None) is None


def test_auto_inbox_open_modules_gets_dmabuf():
    p = plan("auto", "inbox", flavor="open", **DEBIAN12)
    assert (p["mode"], p["load"], p["error"]) == ("dmabuf", False, None)
    assert "dma-buf" in p["reason"] and "6.1.0-18-amd64" in p["reason"]


def test_auto_inbox_never_loads_peermem_even_when_the_driver_ships_it():
    # The trap: a stock kernel with the proprietary driver (which ships nvidia_peermem).
    p = plan("auto", "inbox", flavor="proprietary", peermem_found=True, **DEBIAN12)
    assert (p["mode"], p["load"]) == ("none", False)
    assert "proprietary" in p["reason"] and "rdma_stack_source=doca" in p["reason"]


def test_auto_vendor_stack_with_proprietary_driver_loads_peermem():
    p = plan("auto", "doca", flavor="proprietary", peermem_found=True, **DEBIAN12)
    assert (p["mode"], p["load"]) == ("peermem", True)
    assert "peer-memory" in p["reason"] and "doca" in p["reason"]


def test_auto_vendor_stack_prefers_dmabuf_when_it_works():
    assert plan("auto", "mlnx_ofed", flavor="open", peermem_found=True, **DEBIAN12)["mode"] == "dmabuf"


def test_auto_old_kernel_vendor_stack_peermem():
    p = plan(
        "auto", "mlnx_ofed", kernel="5.4.0-150-generic", rdma_core="2307mlnx47-1", flavor="open", peermem_found=True
    )
    assert (p["mode"], p["load"]) == ("peermem", True)
    assert "older than 5.12" in p["reason"]


def test_auto_no_driver_yet_loads_and_persists_nothing():
    p = plan("auto", "doca", flavor=None, **DEBIAN12)
    assert (p["mode"], p["load"]) == ("none", False)
    assert "install the NVIDIA driver" in p["reason"]


def test_peermem_without_the_module_is_not_loaded():
    p = plan("peermem", "doca", flavor="proprietary", peermem_found=False, **DEBIAN12)
    assert (p["mode"], p["load"], p["error"]) == ("peermem", False, None)
    assert "nothing is loaded or persisted" in p["reason"]


def test_peermem_with_inbox_is_an_error_naming_the_fix():
    p = plan("peermem", "inbox", flavor="proprietary", peermem_found=True, **DEBIAN12)
    assert p["load"] is False
    assert "-EINVAL" in p["error"] and "rdma_stack_gdr=auto" in p["error"]


@pytest.mark.parametrize(
    "kernel,rdma_core,flavor,needle",
    [
        ("5.4.0-150-generic", "44.0-2", "open", "older than 5.12"),
        ("6.1.0-18-amd64", "28.0-1ubuntu1", "open", "rdma-core 28.0-1ubuntu1 is older than 34"),
        ("6.1.0-18-amd64", "44.0-2", "proprietary", "proprietary flavor"),
    ],
)
def test_dmabuf_refused_where_it_cannot_work(kernel, rdma_core, flavor, needle):
    p = plan("dmabuf", "inbox", kernel=kernel, rdma_core=rdma_core, flavor=flavor)
    assert p["error"] and needle in p["error"]


def test_none_is_none():
    assert plan("none", "doca", flavor="open", peermem_found=True, **DEBIAN12)["mode"] == "none"


def test_filter_reads_the_banner():
    p = gdr_plan("auto", "inbox", kernel="6.1.0-18-amd64", rdma_core="44.0-2", proc_version=OPEN)
    assert p["mode"] == "dmabuf"
    p = gdr_plan("auto", "inbox", kernel="6.1.0-18-amd64", rdma_core="44.0-2", modinfo_license="NVIDIA")
    assert p["mode"] == "none"


def test_dmabuf_before_the_driver_or_rdma_core_is_installed_is_said_not_refused():
    # e.g. check mode on a fresh host, or the NVIDIA driver installed after this role.
    p = plan("dmabuf", "inbox", kernel="6.1.0-18-amd64", rdma_core="", flavor=None)
    assert (p["mode"], p["error"]) == ("dmabuf", None)
    assert "rdma-core is not installed yet" in p["reason"] and "no NVIDIA kernel module" in p["reason"]


def test_auto_inbox_without_driver_says_what_to_install():
    p = plan("auto", "inbox", flavor=None, **DEBIAN12)
    assert p["mode"] == "none"
    assert p["reason"].endswith("install the NVIDIA open GPU kernel modules and run the role again")


def test_peermem_up_when_loaded_before_or_the_load_ran_without_an_error():
    assert peermem_up(True, False, 0) is True
    assert peermem_up(False, True, 0) is True
    # modprobe reports rc only when it failed; a skipped load loads nothing.
    assert peermem_up(False, True, 1) is False
    assert peermem_up(False, False, 0) is False
