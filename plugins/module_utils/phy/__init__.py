# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 3, the physical layer of each cable: mlxlink/mstlink parsers, JSON and text, every MFT label spelling
(mlxlink), ibdiagnet's per-port BER table (ibdiag), the values they print, the "no errors" BER sentinel
among them (values), the gates that turn two snapshots into pre-failure findings naming the cable
(gates, cables, findings), the per-cable BER history (history), the node health check's PHY part (health)
and the Prometheus textfile (textfile). Imports host/ and below.
"""
