# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 0, shared by every package: role-variable checking (argument_specs, did-you-mean) and the atomic
file writer. Imports nothing of the collection.
"""
