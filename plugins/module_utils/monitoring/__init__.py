# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 6, keeping the fabric proven between validations: judging node_exporter scrapes (node_exporter).
Imports every layer below that it needs.
"""
