# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible.errors import AnsibleFilterError
from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import (
    archive_url,
    devices_without_counters,
    expected_rates,
    exporter_args,
    infiniband_verdict,
    rate_problems,
    rdma_devices,
    scrape_url,
)


def node_exporter_ib_verdict(metrics_text, class_root, dirs=None, host="this host"):
    dirs = dirs or []
    return infiniband_verdict(
        metrics_text, devices_without_counters(class_root, dirs), host, rdma_devices(class_root, dirs)
    )


def node_exporter_url(listen_address):
    return scrape_url(listen_address)


def node_exporter_archive_url(url, version="", architecture="x86_64"):
    return archive_url(url, version, architecture)


def node_exporter_args(listen_address, sysfs_root, textfile_dir, extra_args=None):
    return exporter_args(listen_address, sysfs_root, textfile_dir, extra_args)


def node_exporter_expected_rates(device_paths, rate_gbps, overrides=None):
    problems = rate_problems(rate_gbps, overrides)
    if problems:
        raise AnsibleFilterError(
            "%s: use link rates such as 400 (4X NDR) or 200 (4X HDR); 0 publishes no expectation." % "; ".join(problems)
        )
    return expected_rates(device_paths, rate_gbps, overrides)


def node_exporter_rate_problems(rate_gbps, overrides=None):
    return rate_problems(rate_gbps, overrides)


class FilterModule(object):
    def filters(self):
        return {
            "node_exporter_ib_verdict": node_exporter_ib_verdict,
            "node_exporter_url": node_exporter_url,
            "node_exporter_archive_url": node_exporter_archive_url,
            "node_exporter_args": node_exporter_args,
            "node_exporter_expected_rates": node_exporter_expected_rates,
            "node_exporter_rate_problems": node_exporter_rate_problems,
        }
