"""The rdma_stack filters hand registered results to module_utils/host/rdma_stack.py as the role's tasks do."""

import base64
import itertools

from ansible_collections.ibtune.fabric.plugins.filter.gdr import FilterModule as GdrFilterModule
from ansible_collections.ibtune.fabric.plugins.filter.rdma_stack import FilterModule
from tests.unit.jinja_harness import UNSET, defined, render, task_vars

FILTERS = FilterModule().filters()
GDR_FILTERS = GdrFilterModule().filters()


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


# Issue 26 part 5: the expressions the role's tasks held before a filter took their decision, each rendered by
# ansible-core over the same inputs as the filter with the task's own vars (tests/unit/jinja_harness.py).

REGISTERED = [
    UNSET,
    {},
    {"skipped": True, "changed": False},
    {"changed": False, "rc": 0},
    {"changed": True, "rc": 0},
    {"changed": False, "results": [{"changed": False}, {"changed": True}], "msg": "All items completed"},
    {"results": [{"changed": False}, {"changed": True}]},
    {"results": [{"changed": False}]},
]


def test_doca_stack_changed_is_the_old_expression():
    old = (
        "{{ (__rdma_stack_stack_install | default({}) is changed) or (__rdma_stack_stack_install_dnf | default({}) "
        "is changed) or (ansible_check_mode and __rdma_stack_repo_changed) }}"
    )
    for apt, dnf, check_mode, repo in itertools.product(REGISTERED, REGISTERED, (False, True), (False, True)):
        variables = defined(
            __rdma_stack_stack_install=apt,
            __rdma_stack_stack_install_dnf=dnf,
            ansible_check_mode=check_mode,
            __rdma_stack_repo_changed=repo,
        )
        wired = task_vars("rdma_stack", "doca.yml", "Record whether the stack changed", **variables)
        new = FILTERS["rdma_stack_changed"](wired["__rdma_stack_installs"], check_mode=check_mode, predicted=repo)
        assert new is render(old, **variables), variables


def test_mlnx_ofed_stack_changed_is_the_old_expression():
    old = (
        "{{ (__rdma_stack_stack_install | default({}) is changed) or (__rdma_stack_stack_install_dnf | default({}) "
        "is changed) or (__rdma_stack_stack_install_archive | default({}) is changed) or (__rdma_stack_archive_pending"
        " | default(false)) or (ansible_check_mode and (__rdma_stack_repo_changed | default(false))) }}"
    )
    # One install result at a time over every shape (the others never registered), then all three unchanged.
    installs = [(r, UNSET, UNSET) for r in REGISTERED] + [(UNSET, r, UNSET) for r in REGISTERED]
    installs += [(UNSET, UNSET, r) for r in REGISTERED] + [({"changed": False},) * 3]
    cases = itertools.product(installs, (UNSET, False, True), (False, True), (UNSET, False, True))
    for (apt, dnf, archive), pending, check_mode, repo in cases:
        variables = defined(
            __rdma_stack_stack_install=apt,
            __rdma_stack_stack_install_dnf=dnf,
            __rdma_stack_stack_install_archive=archive,
            __rdma_stack_archive_pending=pending,
            ansible_check_mode=check_mode,
            __rdma_stack_repo_changed=repo,
        )
        wired = task_vars("rdma_stack", "mlnx_ofed.yml", "Record whether the stack changed", **variables)
        new = FILTERS["rdma_stack_changed"](
            wired["__rdma_stack_installs"],
            pending=wired["__pending"],
            check_mode=check_mode,
            predicted=wired["__predicted"],
        )
        assert new is render(old, **variables), variables


def test_vendor_repo_changed_is_the_old_expression():
    old = (
        "{{ __rdma_stack_key_pending or (__rdma_stack_key_dl | default({}) is changed) or (__rdma_stack_key_installed"
        " | default({}) is changed) or (__rdma_stack_repo_def | default({}) is changed) or (__rdma_stack_repo_def_yum"
        " | default({}) is changed) or (__rdma_stack_repo_old_list | default({}) is changed) or (ansible_check_mode"
        " and (__rdma_stack_python_debian_state | default({})).stdout | default('installed') != 'installed') }}"
    )
    dpkg = [UNSET, {"skipped": True, "changed": False}, {"rc": 0, "stdout": "installed"}, {"rc": 1, "stdout": ""}]
    dpkg.append({"rc": 0, "stdout": "config-files"})
    steps = [UNSET, {"changed": False}, {"changed": True}]
    names = ["__rdma_stack_key_dl", "__rdma_stack_key_installed", "__rdma_stack_repo_def"]
    names += ["__rdma_stack_repo_def_yum", "__rdma_stack_repo_old_list"]
    for key_pending, check_mode, python_debian in itertools.product((False, True), (False, True), dpkg):
        for changed_at in [None] + names:
            for register in steps:
                variables = {name: ({"changed": False} if name != changed_at else register) for name in names}
                variables = defined(
                    __rdma_stack_key_pending=key_pending,
                    ansible_check_mode=check_mode,
                    __rdma_stack_python_debian_state=python_debian,
                    **variables,
                )
                wired = task_vars("rdma_stack", "vendor_repo.yml", "Record whether the repository changed", **variables)
                new = FILTERS["rdma_stack_changed"](
                    wired["__steps"],
                    pending=key_pending,
                    check_mode=check_mode,
                    predicted=wired["__python_debian_missing"],
                )
                assert new is render(old, **variables), variables


GDR_OLD_ARGS = (
    "{{ {'kernel': ansible_facts['kernel'],"
    " 'rdma_core': ((ansible_facts['packages'] | default({}))['rdma-core'] | default([{}]))[0]['version']"
    " | default(''),"
    " 'proc_version': (__rdma_stack_nvidia_proc.content | default('') | b64decode),"
    " 'modinfo_license': (__rdma_stack_nvidia_license.stdout | default('')"
    "  if (__rdma_stack_nvidia_license.rc | default(1)) == 0 else ''),"
    " 'peermem_found': ((__rdma_stack_peermem_modinfo.rc | default(1)) == 0)} }}"
)
SKIPPED = {"skipped": True, "changed": False, "false_condition": "rdma_stack_gdr != 'none'"}


def test_gdr_plan_is_the_old_gdr_plan_call():
    packages = [UNSET, {}, {"rdma-core": [{"version": "44.0-2", "name": "rdma-core"}]}]
    packages.append({"rdma-core": [{"version": "2501mlnx56-1.2501060"}], "perftest": [{"version": "4.5"}]})
    procs = [SKIPPED, {"failed": True, "msg": "file not found: /proc/driver/nvidia/version"}]
    procs += [_slurp("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15\n")]
    procs += [_slurp("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01\n")]
    licenses = [SKIPPED, {"rc": 0, "stdout": "Dual MIT/GPL"}, {"rc": 0, "stdout": "NVIDIA"}]
    licenses.append({"rc": 1, "stdout": "", "stderr": "modinfo: ERROR: Module nvidia not found."})
    peermems = [SKIPPED, {"rc": 0, "stdout": "/lib/modules/x/nvidia-peermem.ko"}, {"rc": 1, "stdout": ""}]
    requests = itertools.cycle(itertools.product(("auto", "dmabuf", "peermem", "none"), ("inbox", "doca")))
    kernels = itertools.cycle(("6.1.0-28-amd64", "5.4.0-200-generic"))
    gdr_plan = GDR_FILTERS["gdr_plan"]
    for pkgs, proc, lic, peermem in itertools.product(packages, procs, licenses, peermems):
        (requested, source), kernel = next(requests), next(kernels)
        facts = defined(kernel=kernel, packages=pkgs)
        variables = dict(
            ansible_facts=facts,
            rdma_stack_gdr=requested,
            rdma_stack_source=source,
            __rdma_stack_nvidia_proc=proc,
            __rdma_stack_nvidia_license=lic,
            __rdma_stack_peermem_modinfo=peermem,
        )
        old = gdr_plan(requested, source, **render(GDR_OLD_ARGS, **variables))
        wired = task_vars("rdma_stack", "gdr.yml", "Choose the GPUDirect RDMA method", **variables)
        assert FILTERS["rdma_stack_gdr_plan"](wired["__rdma_stack_gdr_inputs"]) == old, variables


def test_peermem_up_is_the_old_expression():
    old = (
        "{{ __rdma_stack_peermem_loaded.stat.exists or (__rdma_stack_peermem_load is not skipped"
        " and (__rdma_stack_peermem_load.rc | default(0)) == 0) }}"
    )
    loads = [SKIPPED, {"changed": True, "name": "nvidia_peermem"}, {"changed": False, "name": "nvidia_peermem"}]
    loads += [{"failed": True, "rc": 1, "msg": "modprobe: ERROR: could not insert 'nvidia_peermem': Invalid argument"}]
    for exists, load in itertools.product((False, True), loads):
        stat = {"changed": False, "stat": {"exists": exists}}
        variables = dict(__rdma_stack_peermem_loaded=stat, __rdma_stack_peermem_load=load)
        assert FILTERS["rdma_stack_peermem_up"](stat, load) is render(old, **variables), variables


def test_reboot_inputs_are_the_old_dict_literal():
    old = (
        "{{ {'pending': __rdma_stack_reboot_pending, 'changed': __rdma_stack_changed | default(false) | bool,"
        " 'vendor': __rdma_stack_vendor | bool, 'restart_services': rdma_stack_restart_services,"
        " 'openibd_active': __rdma_stack_openibd_active | default({}),"
        " 'openibd_restart': __rdma_stack_openibd_restart | default({}),"
        " 'mlx5_loaded': __rdma_stack_mlx5_loaded | default({}),"
        " 'mlx5_installed': __rdma_stack_mlx5_installed | default({}),"
        " 'reboot_flag': __rdma_stack_reboot_flag} }}"
    )
    inbox = dict(
        __rdma_stack_reboot_pending={"failed": True, "msg": "file not found"},
        __rdma_stack_vendor=False,
        rdma_stack_restart_services=True,
        __rdma_stack_mlx5_loaded=SKIPPED,
        __rdma_stack_mlx5_installed=SKIPPED,
        __rdma_stack_openibd_active=SKIPPED,
        __rdma_stack_reboot_flag={"changed": False, "stat": {"exists": False}},
    )
    vendor = dict(
        __rdma_stack_reboot_pending=_slurp("earlier reason\n"),
        __rdma_stack_changed=True,
        __rdma_stack_vendor="True",
        rdma_stack_restart_services=False,
        __rdma_stack_openibd_active={"rc": 3, "stdout": "failed"},
        __rdma_stack_openibd_restart={"changed": True, "msg": "Unable to start service openibd"},
        __rdma_stack_mlx5_loaded=_slurp("5.8-1.0.1\n"),
        __rdma_stack_mlx5_installed={"rc": 0, "stdout": "24.10-1.1.4"},
        __rdma_stack_reboot_flag={"changed": False, "stat": {"exists": True}},
    )
    for variables in (inbox, vendor, dict(vendor, __rdma_stack_changed="false")):
        wired = task_vars("rdma_stack", "services.yml", "Decide whether the new stack needs a reboot", **variables)
        assert wired["__rdma_stack_reboot_inputs"] == render(old, **variables), variables
    assert len(FILTERS["rdma_stack_reboot_reasons"](wired["__rdma_stack_reboot_inputs"])) == 3


def test_perftest_configure_is_the_old_loop_item():
    old = (
        "{{ ['./configure', '--prefix=' ~ rdma_stack_perftest_prefix]"
        " + (['CUDA_H_PATH=' ~ rdma_stack_cuda_home ~ '/include/cuda.h'] if rdma_stack_perftest_cuda else []) }}"
    )
    for prefix, cuda, home in itertools.product(
        ("/usr/local", "/opt/perftest", ""), (False, True, "", "yes"), ("/usr/local/cuda", "")
    ):
        variables = dict(rdma_stack_perftest_prefix=prefix, rdma_stack_perftest_cuda=cuda, rdma_stack_cuda_home=home)
        assert FILTERS["rdma_stack_perftest_configure"](prefix, cuda, home) == render(old, **variables), variables


def test_ofed_sentence_is_the_old_message():
    old = (
        "ofed_info -s reports '{{ __rdma_stack_ofed_before.raw | default('nothing', true) }}', wanted"
        " '{{ __rdma_stack_wanted_ofed }}': {{ 'installed, left alone' if __rdma_stack_ofed_before.raw =="
        " __rdma_stack_wanted_ofed else 'installing' }}."
    )
    versions = ("", "MLNX_OFED_LINUX-24.10-1.1.4.0", "MLNX_OFED_LINUX-5.8-1.0.1.1")
    for installed, wanted in itertools.product(versions, versions):
        variables = dict(__rdma_stack_ofed_before={"raw": installed, "flavor": "x"}, __rdma_stack_wanted_ofed=wanted)
        assert FILTERS["rdma_stack_ofed_sentence"](installed, wanted) == render(old, **variables), variables


def test_kernel_sentence_is_the_old_success_message():
    old = (
        "{{ 'no kernel image in /boot (container?): nothing to compare' if __rdma_stack_kernels.files | length == 0"
        " else 'running kernel ' ~ ansible_facts['kernel'] ~ ' is the newest installed' }}"
    )
    for files in ([], [{"path": "/boot/vmlinuz-6.1.0-28-amd64"}], [{"path": "/boot/vmlinuz-a"}, {"path": "/boot/b"}]):
        found = {"changed": False, "files": files, "matched": len(files)}
        variables = dict(__rdma_stack_kernels=found, ansible_facts={"kernel": "6.1.0-28-amd64"})
        assert FILTERS["rdma_stack_kernel_sentence"](found, "6.1.0-28-amd64") == render(old, **variables)
