# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rdma_stack role's decisions from what a host reports (pure): which OFED stack ofed_info names, which
RDMA devices ibv_devinfo lists, which installed kernels are newer than the running one, how a vendor package is
installed, how perftest is configured, whether a step changed the stack, and whether the new stack needs a reboot
(and why, in words the reboot message and the failure use).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import re

_NUMBERS_RE = re.compile(r"[0-9]+")


def ofed_info(stdout, rc):
    """{raw, flavor} from ``ofed_info -s``: raw is its first line without the trailing colon ('' when it failed);
    flavor is mlnx_ofed (MLNX_OFED_LINUX-...), doca (OFED-internal-... or DOCA...), other, or none."""
    line = ((stdout or "").splitlines() or [""])[0].strip()
    if rc != 0 or not line:
        return {"raw": "", "flavor": "none"}
    if line.startswith("MLNX_OFED_LINUX-"):
        flavor = "mlnx_ofed"
    elif line.startswith(("OFED-internal-", "DOCA")):
        flavor = "doca"
    else:
        flavor = "other"
    return {"raw": re.sub(r":$", "", line), "flavor": flavor}


def devinfo_devices(stdout_lines):
    """The device names of ``ibv_devinfo -l`` ("2 HCAs found:" then one indented name per line)."""
    return [line.strip() for line in stdout_lines or [] if line.strip() and not re.search(r"HCAs? found", line)]


def _release_key(release):
    """6.1.0-28-amd64 -> (6, 1, 0, 28, 64): releases compared by their numbers only, whatever the suffixes."""
    return tuple(int(n) for n in _NUMBERS_RE.findall(release))


def newer_kernels(vmlinuz_paths, running):
    """The installed kernel releases (from /boot/vmlinuz-* paths, rescue images left out) newer than ``running``."""
    running_key = _release_key(running)
    out = []
    for path in vmlinuz_paths or []:
        release = path.rsplit("/", 1)[-1]
        release = release[len("vmlinuz-") :] if release.startswith("vmlinuz-") else release
        if "rescue" not in release and _release_key(release) > running_key:
            out.append(release)
    return sorted(out, key=_release_key)


def newest_kernel_sentence(kernel_images, running):
    """What the kernel check says when no installed kernel is newer than ``running``, given how many
    /boot/vmlinuz-* images it found (none in a container)."""
    if not kernel_images:
        return "no kernel image in /boot (container?): nothing to compare"
    return "running kernel %s is the newest installed" % (running,)


def ofed_sentence(installed, wanted):
    """What the MLNX_OFED install says before it runs: what ``ofed_info -s`` reports (``installed``, '' for
    nothing), what is ``wanted``, and whether it is left alone (the same) or installed."""
    return "ofed_info -s reports '%s', wanted '%s': %s." % (
        installed or "nothing",
        wanted,
        "installed, left alone" if installed == wanted else "installing",
    )


def package_version(packages, name):
    """The version package_facts' ``packages`` gives for ``name`` (its first entry), '' when it is not there."""
    entries = (packages or {}).get(name) or [{}]
    return entries[0].get("version", "")


def package_state(pinned_version, wanted_ofed, installed_ofed):
    """'latest' when no exact package version is pinned and the installed stack is not the wanted one (the
    version-pinned repository then upgrades it), else 'present'."""
    if not pinned_version and wanted_ofed and installed_ofed != wanted_ofed:
        return "latest"
    return "present"


def perftest_configure_argv(prefix, cuda=False, cuda_home=""):
    """perftest's ./configure argv: installed under ``prefix``; with ``cuda`` (any true value) built against
    ``cuda_home``'s cuda.h (CUDA_H_PATH), which gives ib_*_bw their --use_cuda."""
    argv = ["./configure", "--prefix=%s" % (prefix,)]
    if cuda:
        argv.append("CUDA_H_PATH=%s/include/cuda.h" % (cuda_home,))
    return argv


def result_changed(result):
    """Ansible's ``changed`` test on a registered result (None and {} for a task that never registered): its
    'changed' key, or for a loop whether any item changed."""
    result = result or {}
    if "changed" in result:
        return bool(result["changed"])
    return any((item or {}).get("changed") for item in result.get("results") or [])


def stack_changed(results, pending=False, check_mode=False, predicted=False):
    """Whether the stack (or its repository) changed in this run: any of the registered ``results`` changed, a
    step could only be predicted (``pending``: check mode on a fresh host), or, in check mode, a change a real run
    would make is ``predicted`` (a repository not configured yet)."""
    return any(result_changed(result) for result in results or []) or bool(pending) or bool(check_mode and predicted)


def reboot_reasons(
    pending="",
    changed=False,
    vendor=False,
    restart_services=True,
    openibd_rc=0,
    openibd_msg="",
    loaded_mlx5="",
    installed_mlx5="",
    reboot_flag=False,
):
    """Why the new RDMA stack needs a reboot: [sentence], empty when it does not.

    ``pending``: the reasons an earlier run recorded since the last boot (one per line); ``changed``: the stack
    changed in this run; ``vendor``: a DOCA/MLNX_OFED stack (openibd, its own mlx5_core); ``openibd_rc``: the exit
    status of ``systemctl is-active openibd`` after its restart; ``loaded_mlx5`` / ``installed_mlx5``: the version
    of the mlx5_core in memory and on disk; ``reboot_flag``: the package manager's /var/run/reboot-required.
    """
    reasons = []
    if openibd_rc not in (0, None):
        reasons.append("openibd did not come back after its restart (%s)" % (openibd_msg or "inactive"))
    if changed and vendor and not restart_services:
        reasons.append("the stack changed and rdma_stack_restart_services=false left the old modules loaded")
    loaded, installed = (loaded_mlx5 or "").strip(), (installed_mlx5 or "").strip()
    if loaded and installed and loaded != installed:
        reasons.append("loaded mlx5_core %s differs from the installed %s" % (loaded, installed))
    if changed and reboot_flag:
        reasons.append("the package manager flagged /var/run/reboot-required after the stack changed")
    reasons.extend(line for line in (pending or "").splitlines() if line.strip())
    out = []
    for reason in reasons:
        if reason not in out:
            out.append(reason)
    return out
