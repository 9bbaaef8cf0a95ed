"""The rdma_stack filters hand registered results to module_utils/host/rdma_stack.py as the role's tasks do."""

import base64

from ansible_collections.ibtune.fabric.plugins.filter.rdma_stack import FilterModule

FILTERS = FilterModule().filters()


def _slurp(text):
    return {"content": base64.b64encode(text.encode()).decode(), "encoding": "base64"}


def test_reboot_reasons_from_registered_results():
    spec = {
        "pending": {"failed": True, "msg": "file not found: /run/ibtune/rdma_stack.reboot-required"},
        "changed": True,
        "vendor": True,
        "restart_services": True,
        "openibd_active": {"rc": 0, "stdout": "active"},
        "openibd_restart": {"changed": True},
        "mlx5_loaded": _slurp("5.8-1.0.1\n"),
        "mlx5_installed": {"rc": 0, "stdout": "24.10-1.1.4"},
        "reboot_flag": {"stat": {"exists": False}},
    }
    assert FILTERS["rdma_stack_reboot_reasons"](spec) == [
        "loaded mlx5_core 5.8-1.0.1 differs from the installed 24.10-1.1.4"
    ]
    # Skipped reads (an inbox stack: no openibd, no mlx5 version read) give no reason.
    skipped = {"skipped": True, "changed": False}
    spec.update(mlx5_loaded=skipped, mlx5_installed=skipped, openibd_active=skipped, pending=_slurp("earlier reason\n"))
    assert FILTERS["rdma_stack_reboot_reasons"](spec) == ["earlier reason"]


def test_ofed_info_devices_and_kernels_from_registered_results():
    assert (
        FILTERS["rdma_stack_ofed_info"]({"rc": 0, "stdout": "MLNX_OFED_LINUX-24.10-1.1.4.0:"})["flavor"] == "mlnx_ofed"
    )
    assert FILTERS["rdma_stack_ofed_info"]({"skipped": True}) == {"raw": "", "flavor": "none"}
    assert FILTERS["rdma_stack_devices"]({"stdout_lines": ["1 HCA found:", "\tmlx5_0"]}) == ["mlx5_0"]
    found = {"files": [{"path": "/boot/vmlinuz-6.1.0-28-amd64"}, {"path": "/boot/vmlinuz-6.1.0-27-amd64"}]}
    assert FILTERS["rdma_stack_newer_kernels"](found, "6.1.0-27-amd64") == ["6.1.0-28-amd64"]
