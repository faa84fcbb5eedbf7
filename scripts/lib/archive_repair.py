#!/usr/bin/env python3
"""Unsticks WAL archiving after a rewound node became primary.

pg_rewind copies WAL segments from its source without their archive status. Once the rewound
node is primary, PostgreSQL marks every segment without a status `.ready`, and its archiver
pushes segments of older timelines again. For the segment in which an older timeline ended,
the copy in pg_wal holds the new timeline's branch (the `.partial` of the promotion) while the
archive already holds the old primary's whole segment: the two are the same WAL up to the
switch point and differ after it, pgBackRest refuses the push (error 45, "already exists in the
repo1 archive with a different checksum"), and archiving stops there for good.

Recovery never reads a segment of timeline T past T's end (the history file sends it to the
next timeline there), so the archived copy serves as well as the local one when both agree up
to that point. This marks exactly those segments `.done`: of an older timeline, already in the
archive, and byte for byte the same up to where their timeline ended. Anything else is left
`.ready` and reported for an operator.

Usage: archive_repair.py DATA_DIR REPOSITORY STANZA [--dry-run]
       archive_repair.py --segment PATH DATA_DIR REPOSITORY STANZA   (exit 0: superseded)
(a posix repository, as scripts/cluster sets up; gz, zst, lz4 or no compression)
"""

import glob
import gzip
import os
import re
import subprocess
import sys

SEGMENT_BYTES = 16 * 1024 * 1024
SEGMENT_NAME = re.compile(r"^([0-9A-F]{8})([0-9A-F]{8})([0-9A-F]{8})$")


def timeline_ends(pg_wal):
    """Each finished timeline's end LSN, from the newest history file (it lists them all)."""
    histories = sorted(glob.glob(os.path.join(pg_wal, "*.history")))
    if not histories:
        return 1, {}
    newest = histories[-1]
    current = int(os.path.basename(newest)[:8], 16)
    ends = {}
    with open(newest) as history:
        for line in history:
            fields = line.split()
            if len(fields) >= 2 and fields[0].isdigit():
                high, low = fields[1].split("/")
                ends[int(fields[0])] = (int(high, 16) << 32) | int(low, 16)
    return current, ends


def archived_copy(repository, stanza, segment):
    """The bytes of the archived segment, or None when the archive has no whole copy."""
    pattern = os.path.join(repository, "archive", stanza, "*", segment[:16], segment + "-*")
    for path in sorted(glob.glob(pattern)):
        name = os.path.basename(path)
        if ".partial" in name:
            continue
        if name.endswith(".gz"):
            return gzip.open(path).read()
        if name.endswith(".zst"):
            return subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
        if name.endswith(".lz4"):
            return subprocess.run(["lz4", "-dc", path], check=True, capture_output=True).stdout
        with open(path, "rb") as whole:
            return whole.read()
    return None


def superseded(segment, pg_wal, repository, stanza, current, ends):
    """(True, why) when the archive's copy may stand for the local segment, else (False, why)."""
    match = SEGMENT_NAME.match(segment)
    if not match:
        return False, "not a WAL segment"
    timeline = int(match.group(1), 16)
    if timeline >= current:
        return False, "of the current timeline"
    start = (int(match.group(2), 16) << 32) | (int(match.group(3), 16) * SEGMENT_BYTES)
    end = ends.get(timeline)
    archived = archived_copy(repository, stanza, segment)
    if archived is None:
        return False, "not in the archive"
    if end is None or end <= start:
        return False, "timeline %d ended before this segment" % timeline
    with open(os.path.join(pg_wal, segment), "rb") as local_file:
        local = local_file.read()
    same_up_to = min(end - start, SEGMENT_BYTES)
    if local[:same_up_to] != archived[:same_up_to]:
        return False, "differs from the archived copy before timeline %d ended" % timeline
    return True, "the archived copy holds the same WAL up to the end of timeline %d" % timeline


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    dry_run = "--dry-run" in sys.argv
    one = "--segment" in sys.argv
    if len(args) != (4 if one else 3):
        sys.exit("\n".join(line for line in __doc__.splitlines() if "archive_repair.py " in line))
    if one:
        # From the archive command, after pgBackRest refused a push (error 45): exit 0 tells
        # PostgreSQL the segment is archived, which is true of the WAL that recovery reads.
        segment, data, repository, stanza = args
        pg_wal = os.path.join(data, "pg_wal")
        ok, why = superseded(os.path.basename(segment), pg_wal, repository, stanza, *timeline_ends(pg_wal))
        print("archive repair: %s: %s" % (os.path.basename(segment), why), file=sys.stderr)
        sys.exit(0 if ok else 45)
    data, repository, stanza = args
    pg_wal = os.path.join(data, "pg_wal")
    current, ends = timeline_ends(pg_wal)
    marked = left = 0
    for ready in sorted(glob.glob(os.path.join(pg_wal, "archive_status", "*.ready"))):
        segment = os.path.basename(ready)[: -len(".ready")]
        if not SEGMENT_NAME.match(segment) or int(segment[:8], 16) >= current:
            continue  # history files and the current timeline: the archiver's ordinary work
        if archived_copy(repository, stanza, segment) is None:
            continue  # not in the archive yet: the push will simply succeed
        ok, why = superseded(segment, pg_wal, repository, stanza, current, ends)
        if not ok:
            print("%s: %s; left .ready for an operator" % (segment, why))
            left += 1
            continue
        if not dry_run:
            os.rename(ready, ready[: -len(".ready")] + ".done")
        print("%s: %s; marked done%s" % (segment, why, " (dry run)" if dry_run else ""))
        marked += 1
    print("archive repair: %d segment(s) marked done, %d left for an operator" % (marked, left))
    sys.exit(1 if left else 0)


if __name__ == "__main__":
    main()
