# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 2, NCCL as a library: its environment schema (schema), nccl.conf reading, linting and planning (env),
debug logs and the plan's transport expectations (log), nccl-tests output (nccl_tests), the torch.distributed
benchmark (torch_backend), the launchers srun/mpirun/torchrun (launch), multi-node plans and bisection (plan), the
curve and per-NIC gates with reference curves (gate), the multi-node verdict (verdict), nccl_test's run(params)
(run), nccl_log_check's and nccl_env_lint's (module) and the nccl_check role's result document (result).
Imports host/ and common/.
"""
