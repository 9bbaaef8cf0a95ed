# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

from ansible_collections.ibtune.fabric.plugins.module_utils.monitoring.node_exporter import (
    devices_without_counters,
    rdma_devices,
    infiniband_verdict,
    scrape_url,
)


def node_exporter_ib_verdict(metrics_text, class_root, dirs=None, host="this host"):
    dirs = dirs or []
    return infiniband_verdict(
        metrics_text, devices_without_counters(class_root, dirs), host, rdma_devices(class_root, dirs)
    )


def node_exporter_url(listen_address):
    return scrape_url(listen_address)


class FilterModule(object):
    def filters(self):
        return {"node_exporter_ib_verdict": node_exporter_ib_verdict, "node_exporter_url": node_exporter_url}
