# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 3, the one QoS model (model) and what the host layers derive from it: RoCE QoS plans (roce) and
mlnx_qos output (mlnx). Imports nccl/ (NCCL_IB_TC/SL arithmetic) and below.
"""
