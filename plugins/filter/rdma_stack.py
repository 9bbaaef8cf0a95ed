# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Filters wiring the rdma_stack role to module_utils/host/rdma_stack.py (docs in the matching .yml files)."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import base64

from ansible_collections.ibtune.fabric.plugins.module_utils.host import gdr, rdma_stack


def _slurped(result):
    """The text of a slurp result ('' when the file was not read)."""
    content = (result or {}).get("content")
    return base64.b64decode(content).decode("utf-8", "replace") if content else ""


def rdma_stack_reboot_reasons(spec):
    """The reboot decision from the registered results services.yml gathers (keys as in its task)."""
    openibd = spec.get("openibd_active") or {}
    restart = spec.get("openibd_restart") or {}
    return rdma_stack.reboot_reasons(
        pending=_slurped(spec.get("pending")),
        changed=bool(spec.get("changed")),
        vendor=bool(spec.get("vendor")),
        restart_services=bool(spec.get("restart_services")),
        openibd_rc=openibd.get("rc", 0),
        openibd_msg=restart.get("msg") or "",
        loaded_mlx5=_slurped(spec.get("mlx5_loaded")),
        installed_mlx5=(spec.get("mlx5_installed") or {}).get("stdout") or "",
        reboot_flag=bool(((spec.get("reboot_flag") or {}).get("stat") or {}).get("exists")),
    )


def rdma_stack_ofed_info(result):
    """{raw, flavor} from a registered ``ofed_info -s``."""
    result = result or {}
    return rdma_stack.ofed_info(result.get("stdout"), result.get("rc", 1))


def rdma_stack_devices(result):
    """The devices a registered ``ibv_devinfo -l`` lists."""
    return rdma_stack.devinfo_devices((result or {}).get("stdout_lines"))


def rdma_stack_newer_kernels(find_result, running):
    """The installed kernels (a registered find of /boot/vmlinuz-*) newer than the running one."""
    files = (find_result or {}).get("files") or []
    return rdma_stack.newer_kernels([f.get("path", "") for f in files], running)


def rdma_stack_kernel_sentence(find_result, running):
    """The kernel check's success message from a registered find of /boot/vmlinuz-*."""
    return rdma_stack.newest_kernel_sentence(len((find_result or {}).get("files") or []), running)


def rdma_stack_ofed_sentence(installed, wanted):
    return rdma_stack.ofed_sentence(installed, wanted)


def rdma_stack_package_state(pinned_version, wanted_ofed, installed_ofed):
    return rdma_stack.package_state(pinned_version, wanted_ofed, installed_ofed)


def rdma_stack_changed(results, pending=False, check_mode=False, predicted=False):
    """Whether the registered ``results`` (or a pending or, in check mode, predicted change) changed the stack."""
    return rdma_stack.stack_changed(results, pending=pending, check_mode=check_mode, predicted=predicted)


def rdma_stack_perftest_configure(prefix, cuda=False, cuda_home=""):
    return rdma_stack.perftest_configure_argv(prefix, cuda, cuda_home)


def _stdout_if_ok(result):
    """A registered command's stdout when it exited 0, else ''."""
    result = result or {}
    return result.get("stdout", "") if result.get("rc", 1) == 0 else ""


def rdma_stack_gdr_plan(spec):
    """The GPUDirect RDMA plan (module_utils/host/gdr.py plan) from what gdr.yml gathers (keys as in its task)."""
    return gdr.plan(
        spec.get("requested"),
        spec.get("source"),
        kernel=spec.get("kernel"),
        rdma_core=rdma_stack.package_version(spec.get("packages"), "rdma-core"),
        flavor=gdr.nvidia_flavor(_slurped(spec.get("nvidia_proc")), _stdout_if_ok(spec.get("nvidia_license"))),
        peermem_found=(spec.get("peermem_modinfo") or {}).get("rc", 1) == 0,
    )


def rdma_stack_peermem_up(loaded_stat, load):
    """Whether nvidia_peermem is loaded now, from the registered stat of /sys/module/nvidia_peermem and modprobe."""
    load = load or {}
    return gdr.peermem_up(
        (loaded_stat or {}).get("stat", {}).get("exists"), not load.get("skipped", False), load.get("rc", 0)
    )


class FilterModule(object):
    def filters(self):
        return {
            "rdma_stack_reboot_reasons": rdma_stack_reboot_reasons,
            "rdma_stack_ofed_info": rdma_stack_ofed_info,
            "rdma_stack_devices": rdma_stack_devices,
            "rdma_stack_newer_kernels": rdma_stack_newer_kernels,
            "rdma_stack_package_state": rdma_stack_package_state,
            "rdma_stack_changed": rdma_stack_changed,
            "rdma_stack_gdr_plan": rdma_stack_gdr_plan,
            "rdma_stack_peermem_up": rdma_stack_peermem_up,
            "rdma_stack_perftest_configure": rdma_stack_perftest_configure,
            "rdma_stack_kernel_sentence": rdma_stack_kernel_sentence,
            "rdma_stack_ofed_sentence": rdma_stack_ofed_sentence,
        }
