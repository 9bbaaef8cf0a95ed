# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one atomic file writer: a reader (the join, the controller's progress poll, node_exporter, a CI job) sees the
old file or the new one, never half of one.

``write_text(path, text)`` writes a temporary file in the same directory and renames it over ``path`` (a rename
within a file system is atomic); ``write_json(path, data, **dump_options)`` is the same for JSON. The directory is
created when missing, the file gets ``mode``, and the temporary file is removed when anything fails. No fsync: these
files are re-written from scratch by the next run after a crash, and the progress file is written every poll.
(report/render.py write_atomic writes the report's files this way too, several at once.)
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import json
import os
import tempfile


def write_text(path, text, mode=0o644, dir_mode=0o755):
    """Replace ``path`` with ``text`` atomically; returns path."""
    directory = os.path.dirname(path) or "."
    if not os.path.isdir(directory):
        os.makedirs(directory, dir_mode)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".%s." % os.path.basename(path), suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json(path, data, mode=0o644, dir_mode=0o755, newline=False, **dump_options):
    """Replace ``path`` with ``data`` as JSON atomically (``dump_options`` as json.dumps takes them).

    json.dumps, never json.dump(obj, handle): dump streams through the pure-Python encoder, several times slower
    on a pass's results (issue 23's profile: most of the join's write)."""
    return write_text(path, json.dumps(data, **dump_options) + ("\n" if newline else ""), mode, dir_mode)
