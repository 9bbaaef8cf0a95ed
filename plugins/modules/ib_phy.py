#!/usr/bin/python
# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: ib_phy
short_description: Read the physical layer of RDMA ports and switch ports (BER, FEC histogram, module health, serial)
version_added: 0.2.0
description:
  - Runs C(mlxlink) (NVIDIA MFT) or C(mstlink) (mstflint's open build of it) once per port, as an argv list,
    with C(-m -c --rx_fec_histogram --show_histogram --json), and parses the JSON (the text form too, and
    saved C(ibdiagnet2.net_dump_ext) and C(ibdiagnet2.db_csv) files) into one reading per port - link, BER
    counters per lane, effective and symbol BER, link down and recovery counters, the FEC histogram, the
    module's temperature, voltage, bias and optical power with its own alarm ranges, and the cable's vendor,
    part and serial number.
  - Host ports are the RDMA devices of this host (O(devices), default every port under O(sysfs_root)); switch
    ports are read in-band from this host (the subnet manager host) with C(-d lid-<LID> -p <port>).
  - The no-errors BER C(15E-255) reads as 0; C(N/A) fields are listed in each reading's C(unknown) and stay
    null, never 0; a port the tool cannot read is returned with its C(error).
  - It never clears counters unless O(clear=true), because clearing destroys the history other tools rely
    on; then it clears after the read (the result still holds what was there) and says so in C(msg).
  - The gates (ibtune.fabric.phy_verdict filter, docs/phy.md) turn two of these results into findings.
extends_documentation_fragment:
  - ibtune.fabric.sysfs
  - ibtune.fabric.attributes
attributes:
  check_mode:
    support: full
    details: Reads run in check mode; O(clear) is not carried out (C(changed) predicts it).
  diff_mode:
    support: none
options:
  devices:
    description: Host ports to read, C(mlx5_0) (port 1) or C(mlx5_0:2). Default every port under O(sysfs_root).
    type: list
    elements: str
  host_ports:
    description: Read this host's ports (false to read only O(switch_ports), O(net_dump_ext) or O(db_csv)).
    type: bool
    default: true
  host:
    description: The name this host's ports are reported under (fabric_validate passes inventory_hostname).
    type: str
  switch_ports:
    description:
      - Switch ports read in-band from this host, each C({lid, port}) plus optional C(switch) (name) and C(guid).
    type: list
    elements: dict
    default: []
  net_dump_ext:
    description: A saved C(ibdiagnet2.net_dump_ext) (C(ibdiagnet --get_phy_info)) whose ports are returned too.
    type: path
  db_csv:
    description:
      - A saved C(ibdiagnet2.db_csv) whose ports are returned too - C(PM_INFO) (link down and recovery counters),
        C(CABLE_INFO) (C(--get_cable_info) - vendor, part number, serial, temperature) and C(PHY_DB<n>) tables
        whose columns carry the PPCNT field names (C(--get_phy_info) - raw, effective and symbol BER, raw errors
        per lane). A PHY table of C(field<i>) columns is not guessed at; it is listed in RV(db_csv_unread).
      - Unproven against a real file (no public capture was found; docs/phy.md).
    type: path
    version_added: 0.3.0
  ibdiagnet_log:
    description:
      - A saved C(ibdiagnet2.log) whose BER check lines (C(... BER Check finished ...) and the per-port C(-E-)/C(-W-)
        lines naming a BER) are returned in RV(ber_check). Unproven against a real file (docs/phy.md).
    type: path
    version_added: 0.3.0
  executable:
    description: The tool, a name on PATH or a path. Default C(mlxlink), else C(mstlink).
    type: str
  histogram:
    description: Ask for the FEC histogram (a port whose tool refuses it is read again without).
    type: bool
    default: true
  clear:
    description:
      - Clear the PHY counters (C(--pc)) and the FEC histogram after reading them. Other tools (UFM, an exporter,
        a colleague's ibdiagnet) lose their history - only when you mean it.
    type: bool
    default: false
  timeout:
    description: Seconds one query may take before it is killed.
    type: int
    default: 30
  parallel:
    description: Queries run at once.
    type: int
    default: 8
author:
  - ibtune.fabric contributors (@ibtune)
"""

EXAMPLES = r"""
- name: Read every RDMA port's PHY before the validation
  ibtune.fabric.ib_phy:
  register: phy_before

- name: Read the switch end of a host cable from the subnet manager host
  ibtune.fabric.ib_phy:
    host_ports: false
    switch_ports:
      - {lid: 5, port: 2, switch: leaf4}

- name: Every port of a saved ibdiagnet --get_phy_info --get_cable_info run, with its BER check verdicts
  ibtune.fabric.ib_phy:
    host_ports: false
    db_csv: /var/tmp/ibdiagnet2/ibdiagnet2.db_csv
    ibdiagnet_log: /var/tmp/ibdiagnet2/ibdiagnet2.log

- name: NVIDIA's method - clear, load the fabric 5-10 minutes, read again
  ibtune.fabric.ib_phy:
    clear: true
"""

RETURN = r"""
ports:
  description: One entry per port - C(end) (kind host with host/device/port, or switch with lid/port/switch/guid),
    C(reading) (null when unreadable), C(error), C(read_at) (epoch seconds), C(cmd) (the argv).
  returned: always
  type: list
  elements: dict
  sample:
    - end: {kind: host, host: gpu01, device: mlx5_0, port: 1}
      reading:
        format: json
        mft_version: 4.34.1-10
        link: {state: Active, speed: 400G, width: 4x, speed_gbps: 400.0, lanes: 4, fec: "Standard_RS-FEC - (544,514)"}
        counters: {time_since_clear_min: 2718.1, effective_ber: 0.0, effective_errors: 0, raw_ber: 5.0e-10,
                   raw_ber_lanes: [1.0e-10, 1.0e-09, 4.0e-10, 5.0e-10],
                   raw_errors_lanes: [3017647, 15132549, 7368641, 9233545],
                   link_down: 0, link_recovery: 0, symbol_ber: null, symbol_errors: null}
        module: {vendor: Nvidia, part_number: MMA4Z00-NS, serial: MT2250FT00012, temperature_c: 61.0,
                 temperature_range: [-10.0, 80.0]}
        unknown: []
      error: null
      read_at: 1764547200.0
      cmd: [mlxlink, -d, mlx5_0, -m, -c, --rx_fec_histogram, --show_histogram, --json]
cleared:
  description: True when the counters were cleared after the read (O(clear), not in check mode).
  returned: always
  type: bool
clear_errors:
  description: The clear commands that failed.
  returned: always
  type: list
  elements: str
executable:
  description: The tool that ran (null when only O(net_dump_ext) or O(db_csv) was read).
  returned: always
  type: str
db_csv_unread:
  description: The C(PHY_DB<n>) tables of O(db_csv) not read (no named columns); null without O(db_csv).
  returned: always
  type: list
  elements: str
ber_check:
  description:
    - ibdiagnet's own BER verdicts from O(ibdiagnet_log) - C(checks) (C(check), C(severity), C(result), C(line))
      and C(findings) (C(guid) or C(name), C(port), C(severity), C(what), C(value), C(threshold), C(line), C(text));
      BERs as numbers (C(15E-255) is 0, C(N/A) null). Null without O(ibdiagnet_log).
  returned: always
  type: dict
msg:
  description: Ports read and unreadable, and whether anything was cleared.
  returned: always
  type: str
"""

from ansible.module_utils.basic import AnsibleModule
from ansible.module_utils.common.text.converters import to_native
from ansible_collections.ibtune.fabric.plugins.module_utils.phy.module import PhyModuleError, run

ARGUMENT_SPEC = dict(
    sysfs_root=dict(type="path", default="/sys"),
    devices=dict(type="list", elements="str"),
    host_ports=dict(type="bool", default=True),
    host=dict(type="str"),
    switch_ports=dict(type="list", elements="dict", default=[]),
    net_dump_ext=dict(type="path"),
    db_csv=dict(type="path"),
    ibdiagnet_log=dict(type="path"),
    executable=dict(type="str"),
    histogram=dict(type="bool", default=True),
    clear=dict(type="bool", default=False),
    timeout=dict(type="int", default=30),
    parallel=dict(type="int", default=8),
)


def main():
    module = AnsibleModule(argument_spec=ARGUMENT_SPEC, supports_check_mode=True)
    try:
        module.exit_json(**run(module.params, module.check_mode))
    except PhyModuleError as exc:
        module.fail_json(msg=to_native(exc))


if __name__ == "__main__":
    main()
