# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Layer 0, shared by every package: role-variable checking (argument_specs, did-you-mean), the atomic
file writer, and the words of a Slurm allocation (slurm_args: sbatch and srun alike). Imports nothing of the
collection.
"""
