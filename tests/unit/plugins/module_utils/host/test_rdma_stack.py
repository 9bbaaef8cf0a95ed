"""rdma_stack's decisions (module_utils/host/rdma_stack.py), on the outputs the tools print."""

from ansible_collections.ibtune.fabric.plugins.module_utils.host import rdma_stack


def test_ofed_info_names_the_stack_and_drops_the_trailing_colon():
    assert rdma_stack.ofed_info("MLNX_OFED_LINUX-24.10-1.1.4.0:\n", 0) == {
        "raw": "MLNX_OFED_LINUX-24.10-1.1.4.0",
        "flavor": "mlnx_ofed",
    }
    assert rdma_stack.ofed_info("OFED-internal-25.10-1.7.1:\n", 0)["flavor"] == "doca"
    assert rdma_stack.ofed_info("rdma-core 44.0\n", 0) == {"raw": "rdma-core 44.0", "flavor": "other"}
    # Not installed: "No such file or directory" with rc 2, or nothing at all.
    assert rdma_stack.ofed_info("", 2) == {"raw": "", "flavor": "none"}
    assert rdma_stack.ofed_info("MLNX_OFED_LINUX-24.10-1.1.4.0:", 127) == {"raw": "", "flavor": "none"}


def test_devinfo_devices_leave_the_count_line_out():
    lines = ["2 HCAs found:", "\tmlx5_0", "\tmlx5_1", ""]
    assert rdma_stack.devinfo_devices(lines) == ["mlx5_0", "mlx5_1"]
    assert rdma_stack.devinfo_devices(["1 HCA found:", "    mlx5_bond_0"]) == ["mlx5_bond_0"]
    assert rdma_stack.devinfo_devices([]) == []


def test_newer_kernels_compare_numbers_whatever_the_suffix():
    paths = [
        "/boot/vmlinuz-6.1.0-27-amd64",
        "/boot/vmlinuz-6.1.0-28-amd64",
        "/boot/vmlinuz-6.1.0-9-amd64",
        "/boot/vmlinuz-0-rescue-1234abcd",
    ]
    assert rdma_stack.newer_kernels(paths, "6.1.0-27-amd64") == ["6.1.0-28-amd64"]
    # 28 after 9 numerically (a string compare would put 9 last), EL suffixes ignored.
    assert rdma_stack.newer_kernels(paths, "6.1.0-9-amd64") == ["6.1.0-27-amd64", "6.1.0-28-amd64"]
    el = ["/boot/vmlinuz-5.14.0-427.13.1.el9_4.x86_64", "/boot/vmlinuz-5.14.0-362.8.1.el9_3.x86_64"]
    assert rdma_stack.newer_kernels(el, "5.14.0-362.8.1.el9_3.x86_64") == ["5.14.0-427.13.1.el9_4.x86_64"]
    assert rdma_stack.newer_kernels([], "6.1.0-27-amd64") == []


def test_package_state_upgrades_only_an_unpinned_stack_that_is_not_the_wanted_one():
    assert rdma_stack.package_state("", "OFED-internal-25.10-1.7.1", "OFED-internal-24.10-1.1.4") == "latest"
    assert rdma_stack.package_state("", "OFED-internal-25.10-1.7.1", "OFED-internal-25.10-1.7.1") == "present"
    assert rdma_stack.package_state("3.2.1-1", "OFED-internal-25.10-1.7.1", "") == "present"
    assert rdma_stack.package_state("", "", "anything") == "present"


def test_no_reboot_when_nothing_says_so():
    assert rdma_stack.reboot_reasons() == []
    # The same mlx5_core loaded and installed; a reboot flag without a change of the stack is not ours.
    assert rdma_stack.reboot_reasons(loaded_mlx5="24.10-1.1.4\n", installed_mlx5="24.10-1.1.4", reboot_flag=True) == []


def test_each_reason_for_a_reboot_is_one_sentence():
    reasons = rdma_stack.reboot_reasons(
        changed=True,
        vendor=True,
        restart_services=False,
        openibd_rc=3,
        openibd_msg="",
        loaded_mlx5="5.8-1.0.1",
        installed_mlx5="24.10-1.1.4",
        reboot_flag=True,
    )
    assert reasons == [
        "openibd did not come back after its restart (inactive)",
        "the stack changed and rdma_stack_restart_services=false left the old modules loaded",
        "loaded mlx5_core 5.8-1.0.1 differs from the installed 24.10-1.1.4",
        "the package manager flagged /var/run/reboot-required after the stack changed",
    ]
    # A restart that did run on an inbox stack never needs one for the services' sake.
    assert rdma_stack.reboot_reasons(changed=True, vendor=False, restart_services=False) == []


def test_reasons_recorded_before_the_last_boot_come_back_once():
    pending = "loaded mlx5_core 5.8-1.0.1 differs from the installed 24.10-1.1.4\n\n"
    reasons = rdma_stack.reboot_reasons(pending=pending, loaded_mlx5="5.8-1.0.1", installed_mlx5="24.10-1.1.4")
    assert reasons == ["loaded mlx5_core 5.8-1.0.1 differs from the installed 24.10-1.1.4"]


def test_result_changed_reads_a_result_as_ansibles_changed_test():
    assert rdma_stack.result_changed(None) is False
    assert rdma_stack.result_changed({}) is False
    assert rdma_stack.result_changed({"skipped": True, "changed": False}) is False
    assert rdma_stack.result_changed({"changed": True}) is True
    # A loop: any item; its own 'changed' key, when there, wins (as in Ansible's test).
    assert rdma_stack.result_changed({"results": [{"changed": False}, {"changed": True}]}) is True
    assert rdma_stack.result_changed({"results": [{"changed": False}]}) is False
    assert rdma_stack.result_changed({"changed": False, "results": [{"changed": True}]}) is False


def test_stack_changed_by_a_result_a_pending_step_or_a_predicted_change_in_check_mode():
    assert rdma_stack.stack_changed([]) is False
    assert rdma_stack.stack_changed([{}, {"changed": False}]) is False
    assert rdma_stack.stack_changed([{}, {"changed": True}]) is True
    assert rdma_stack.stack_changed([], pending=True) is True
    assert rdma_stack.stack_changed([], check_mode=True, predicted=True) is True
    # A predicted change counts only in check mode (a real run reports it in its results).
    assert rdma_stack.stack_changed([], check_mode=False, predicted=True) is False
    assert rdma_stack.stack_changed(None, check_mode=True, predicted=False) is False


def test_package_version_is_the_first_entry_or_empty():
    packages = {"rdma-core": [{"version": "44.0-2"}, {"version": "43.0-1"}]}
    assert rdma_stack.package_version(packages, "rdma-core") == "44.0-2"
    assert rdma_stack.package_version(packages, "perftest") == ""
    assert rdma_stack.package_version({"rdma-core": []}, "rdma-core") == ""
    assert rdma_stack.package_version(None, "rdma-core") == ""


def test_perftest_configure_argv_adds_cuda_h_only_with_cuda():
    assert rdma_stack.perftest_configure_argv("/usr/local") == ["./configure", "--prefix=/usr/local"]
    assert rdma_stack.perftest_configure_argv("/usr/local", True, "/usr/local/cuda") == [
        "./configure",
        "--prefix=/usr/local",
        "CUDA_H_PATH=/usr/local/cuda/include/cuda.h",
    ]


def test_sentences_of_the_kernel_check_and_the_mlnx_ofed_install():
    assert rdma_stack.newest_kernel_sentence(0, "6.1.0-28-amd64").startswith("no kernel image in /boot")
    assert (
        rdma_stack.newest_kernel_sentence(2, "6.1.0-28-amd64")
        == "running kernel 6.1.0-28-amd64 is the newest installed"
    )
    assert rdma_stack.ofed_sentence("", "MLNX_OFED_LINUX-24.10-1.1.4.0") == (
        "ofed_info -s reports 'nothing', wanted 'MLNX_OFED_LINUX-24.10-1.1.4.0': installing."
    )
    assert rdma_stack.ofed_sentence("X", "X") == "ofed_info -s reports 'X', wanted 'X': installed, left alone."
