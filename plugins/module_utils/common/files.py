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
A JSON list of millions of items is written a batch at a time (``json_list_chunks``) and read back an item at a
time (``iter_json_list``).
"""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import binascii
import json
import os
import re
import tempfile

READ_BLOCK = 1 << 24  # characters iter_json_list reads at a time
_JSON_SPACE = re.compile(r"[ \t\n\r]*")  # the whitespace JSON allows between values (json.decoder's)
_DECODE = json.JSONDecoder().raw_decode
_AFTER_ITEM = frozenset(" \t\n\r,]")  # what may follow an item of a list


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


class NotStreamable(Exception):
    """What iter_json_list leaves to json.load: a text that is not a well-formed JSON list (json.load says why)."""


class _ListText:
    """The text of a JSON list, read a block at a time from ``handle``, and the position reached in it."""

    def __init__(self, handle, block):
        self.handle, self.block = handle, block
        self.text, self.pos, self.more = "", 0, True

    def _refill(self):
        chunk = self.handle.read(self.block)
        self.text = self.text[self.pos :] + chunk  # what is read is dropped: the text held is a block or two
        self.pos = 0
        self.more = bool(chunk)

    def char(self):
        """The next character that is not JSON whitespace ("" at the end of the text), not consumed."""
        while True:
            self.pos = _JSON_SPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self.more:
                return self.text[self.pos : self.pos + 1]
            self._refill()

    def value(self):
        """The next JSON value, decoded whole: while it does not decode, or is not followed by what may follow an item
        of a list (a number cut at a block's end decodes: 1 of 1.5, 0 of 0.), another block is read and it is decoded
        again."""
        self.char()
        while True:
            try:
                value, end = _DECODE(self.text, self.pos)
            except ValueError:
                if not self.more:
                    raise NotStreamable()
            else:
                if self.text[end : end + 1] in _AFTER_ITEM or not self.more:
                    self.pos = end
                    return value
            self._refill()


def iter_json_list(handle, block=READ_BLOCK):
    """The items of the JSON list in ``handle`` (a text file), decoded one at a time from ``block`` characters at a
    time: neither the file's whole text nor all of its items are held at once (a results file of 4.2 M pair results
    is 480 MiB of text, and 2 GiB more held while json.load decodes it whole). Raises NotStreamable, before or
    after items were yielded, where the text is not a well-formed JSON list: json.load of the text then raises
    what is wrong, in its words."""
    text = _ListText(handle, block)
    if text.char() != "[":
        raise NotStreamable()
    text.pos += 1
    if text.char() == "]":
        text.pos += 1
    else:
        while True:
            yield text.value()
            char = text.char()
            text.pos += 1
            if char == "]":
                break
            if char != ",":
                raise NotStreamable()
    if text.char() != "":
        raise NotStreamable()  # something after the list: json.load's "Extra data"


def write_json(path, data, mode=0o644, dir_mode=0o755, newline=False, fsync=False, **dump_options):
    """Replace ``path`` with ``data`` as JSON atomically (``dump_options`` as json.dumps takes them).

    json.dumps, never json.dump(obj, handle): dump streams through the pure-Python encoder, several times slower
    on a pass's results (issue 23's profile: most of the join's write)."""
    text = json.dumps(data, **dump_options) + ("\n" if newline else "")
    return write_text(path, text, mode, dir_mode, fsync)
