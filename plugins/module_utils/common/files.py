# -*- coding: utf-8 -*-
# Copyright: ibtune.fabric contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The one atomic file writer: a reader (the join, the controller's progress poll, node_exporter, a CI job) sees the
old file or the new one, never half of one.

``write_text(path, text)`` (or ``write_chunks(path, pieces)``, for a file too large to hold whole) writes a
temporary file in the same directory and renames it over ``path`` (a rename
within a file system is atomic); ``write_json(path, data, **dump_options)`` is the same for JSON. The directory is
created (with ``dir_mode``) when missing, or, with ``dir_mode=None``, must exist; the file gets ``mode``, or, with
``mode=None``, what open() would give it (0666 less the umask); the temporary file is removed when anything fails.
No fsync unless ``fsync=True`` (the report's files): the others are re-written from scratch by the next run after a
crash, and the progress file is written every poll. Every writer of the collection goes through here, the host-side
programs too (node_health, the sweep, the schedule runner, the PHY textfile and the training exporter: their roles
install this module with them), except opensm_conf (Ansible's atomic_move, which keeps the file's owner and SELinux
context) and roles/fabric_monitoring/files/ibtune-hw-counters.py (a single file installed alone: it has its own).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import json
import os
import tempfile


def _temporary(directory, prefix, suffix, mode):
    """(fd, path) of a new temporary file; with mode None created 0666 less the umask, as open() creates a file."""
    if mode is not None:
        return tempfile.mkstemp(dir=directory, prefix=prefix, suffix=suffix)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        tmp = os.path.join(directory, "%s%s%s" % (prefix, binascii.hexlify(os.urandom(6)).decode("ascii"), suffix))
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue


def write_text(path, text, mode=0o644, dir_mode=0o755, fsync=False):
    """Replace ``path`` with ``text`` atomically; returns path."""
    return write_chunks(path, (text,), mode, dir_mode, fsync)


def write_chunks(path, chunks, mode=0o644, dir_mode=0o755, fsync=False):
    """Replace ``path`` atomically with the strings ``chunks`` yields, written as they come: a file of GiB (a
    pass's results at 1024 hosts x 8 rails) never exists whole in memory. Returns path."""
    directory = os.path.dirname(path) or "."
    if dir_mode is not None and not os.path.isdir(directory):
        os.makedirs(directory, dir_mode)
    fd, tmp = _temporary(directory, ".%s." % os.path.basename(path), ".tmp", mode)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            for chunk in chunks:
                handle.write(chunk)
            if fsync:
                handle.flush()
                os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def batches(items, size):
    """Lists of ``size`` consecutive items of ``items`` (any iterable, read once; the last list may be shorter): the
    one batching of the writers that stream a file of millions of items (json_list_chunks, report/render.py)."""
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch


def json_list_chunks(items, chunk=4096, **dump_options):
    """The text of ``json.dumps(list(items), **dump_options)`` in pieces of ``chunk`` items, byte for byte the
    same, without the list or its whole text in memory (``items`` may be a generator). Not with ``indent``."""
    if dump_options.get("indent") is not None:
        raise ValueError("json_list_chunks writes compact JSON: indent is not supported")
    encode = json.JSONEncoder(**dump_options).encode
    sep = dump_options.get("separators", (", ", ": "))[0]
    yield "["
    for number, batch in enumerate(batches(items, chunk)):
        yield ("" if number == 0 else sep) + encode(batch)[1:-1]
    yield "]"


def write_json(path, data, mode=0o644, dir_mode=0o755, newline=False, fsync=False, **dump_options):
    """Replace ``path`` with ``data`` as JSON atomically (``dump_options`` as json.dumps takes them).

    json.dumps, never json.dump(obj, handle): dump streams through the pure-Python encoder, several times slower
    on a pass's results (issue 23's profile: most of the join's write)."""
    text = json.dumps(data, **dump_options) + ("\n" if newline else "")
    return write_text(path, text, mode, dir_mode, fsync)
