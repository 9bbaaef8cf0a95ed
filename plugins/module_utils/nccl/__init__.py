# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 2, NCCL as a library: its environment schema (schema), nccl.conf reading, linting and planning (env),
debug logs (log), nccl-tests output (nccl_tests) and the torch.distributed benchmark (torch_backend).
Imports host/ and common/.
"""
