"""Write a command's output files as one set: a kill leaves the old set or the new one.

A command stages every file in ``FOLDER/.twinbench-stage-PID-RAND/``, then commits: it writes a
journal (``FOLDER/.twinbench-commit.json``, atomically) naming the staged files, renames each
into place and removes the journal. :func:`recover` (run before any command reads or writes a
folder) finishes a commit whose journal survived a kill, so the set is the new one, and
sweeps staging folders and temp files left by dead processes, so the set stays the old one when
the kill came before the journal. No library does this for a set of files; rename is atomic
for one file only, so the journal is what makes the set roll forward.

``TWINBENCH_FAULT=staged|journal|renamed`` makes the process kill itself (SIGKILL) at that point
of a commit: the kill tests use it to stop at exact points instead of racing a timer.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from twinbench.jsonl import InputError

JOURNAL = ".twinbench-commit.json"
STAGE_PREFIX = ".twinbench-stage-"
FAULT_ENV = "TWINBENCH_FAULT"


def _fault(point: str) -> None:
    if os.environ.get(FAULT_ENV) == point:
        os.kill(os.getpid(), signal.SIGKILL)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _owner(name: str, prefix: str) -> int | None:
    """The pid encoded in a staging-folder or temp-file name (`PREFIX-PID-...`), if any."""
    rest = name[len(prefix) :]
    head = rest.split("-", 1)[0].split(".", 1)[0]
    return int(head) if head.isdigit() else None


def fsync_path(path: Path) -> None:
    """fsync a file or a folder (a folder: so the names in it are on disk)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _apply(folder: Path, journal: dict[str, str]) -> None:
    """Rename every staged file the journal names into place (skipping ones already moved)."""
    for name, staged in journal.items():
        source, target = folder / staged, folder / name
        if source.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(source, target)
            _fault("renamed")
    fsync_path(folder)


def recover(folder: Path) -> None:
    """Finish an interrupted commit in `folder`, then sweep what dead processes left behind."""
    if not folder.is_dir():
        return
    journal_path = folder / JOURNAL
    if journal_path.exists():
        try:
            journal = orjson.loads(journal_path.read_bytes())
        except orjson.JSONDecodeError:
            journal = None  # torn before its own rename: the commit never started
        if isinstance(journal, dict):
            _apply(folder, {str(k): str(v) for k, v in journal.items()})
        journal_path.unlink(missing_ok=True)
    for entry in folder.iterdir():
        name = entry.name
        if name.startswith(STAGE_PREFIX) and entry.is_dir():
            pid = _owner(name, STAGE_PREFIX)
            if pid is None or not _alive(pid):
                shutil.rmtree(entry, ignore_errors=True)
        elif name.startswith(".") and name.endswith(".tmp") and entry.is_file():
            pid = temp_owner(name)
            if pid is not None and not _alive(pid):
                entry.unlink(missing_ok=True)


def temp_owner(name: str) -> int | None:
    """The pid in an atomic_write temp name `.TARGET.twb-PID-RAND.tmp`, if it is one."""
    marker = ".twb-"
    at = name.rfind(marker)
    if at < 0:
        return None
    head = name[at + len(marker) :].split("-", 1)[0]
    return int(head) if head.isdigit() else None


@contextlib.contextmanager
def output_set(folder: Path) -> Iterator[Callable[[str], Path]]:
    """Stage files under `folder`; on success move them all into place as one set.

    Yields `stage(name) -> Path`: where to write the file that will become `folder/name`
    (`name` may hold a subfolder, e.g. `holdout/items.jsonl`). On an exception nothing staged
    reaches `folder`, and the folders this call created (an `--out` that was not there) are
    removed again.
    """
    created = [p for p in (folder, *folder.parents) if not p.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    recover(folder)
    stage_dir = folder / f"{STAGE_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"
    stage_dir.mkdir()
    names: dict[str, str] = {}

    def stage(name: str) -> Path:
        path = stage_dir / name
        path.parent.mkdir(parents=True, exist_ok=True)
        names[name] = str(path.relative_to(folder))
        return path

    try:
        yield stage
        _fault("staged")
        journal = {name: staged for name, staged in names.items() if (folder / staged).exists()}
        for name in journal:  # refuse before the journal: a half-applied set helps nobody
            target = folder / name
            if target.is_dir() and not target.is_symlink():
                raise InputError(f"{target}: is a folder, expected a file it can replace")
        tmp = folder / f"{JOURNAL}.twb-{os.getpid()}-{secrets.token_hex(4)}.tmp"
        with tmp.open("wb") as handle:
            handle.write(orjson.dumps(journal))
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, folder / JOURNAL)
        fsync_path(folder)
        _fault("journal")
        _apply(folder, journal)
        (folder / JOURNAL).unlink()
    except BaseException:
        shutil.rmtree(stage_dir, ignore_errors=True)
        for made in created:  # a refused set leaves no folder it made (deepest first)
            with contextlib.suppress(OSError):
                made.rmdir()
        raise
    finally:
        shutil.rmtree(stage_dir, ignore_errors=True)


def write_set(folder: Path, files: dict[str, str]) -> None:
    """Write text files (name -> content, UTF-8) into `folder` as one set."""
    with output_set(folder) as stage:
        for name, text in files.items():
            with stage(name).open("w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
