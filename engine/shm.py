"""Shared memory blocks of 64-bit words that one process creates and deletes and others only
attach to: files in a RAM-backed directory (``/dev/shm``), mapped by every process.

* **Where.** :class:`ShmPlace`: the directory (``$BRUDNO_SHM_DIR``, default ``/dev/shm``)
  and an optional cap on what Brudno keeps there (``$BRUDNO_SHM_MAX_MB``).
* **Fits, or is refused.** A block is created only if it fits the directory's free space
  (``os.statvfs``) less :data:`MARGIN_BYTES`, and the cap: else :class:`SharedMemoryFullError`,
  before anything is allocated.  It is then fully backed (``posix_fallocate``), so a block
  that does not fit after all fails here too, never later with a SIGBUS on first touch.
* **Owned.** A block's name is ``brudno-<pid namespace>-<pid>-<start time>-<random>``: its
  creator, also across pid reuse.  The creator unlinks it when it is done (or at exit); a
  creator killed before that leaves it behind, and :meth:`ShmPlace.sweep` (run before every
  creation, and by servers when a worker died) unlinks the blocks whose creator is gone.
  Processes still mapping an unlinked block keep using it; its memory is freed with the last.

Views into a block must be released before it is unmapped, so :class:`SharedWords` hands out
views it keeps track of, and releases them, unmaps and (for the creator) unlinks exactly once:
at :meth:`SharedWords.close` or, if nobody called it, when the interpreter exits.
"""

from __future__ import annotations

import contextlib
import errno
import mmap
import os
import re
import secrets
import tempfile
import weakref
from dataclasses import dataclass
from pathlib import Path

SHM_DIR_ENV = "BRUDNO_SHM_DIR"
"""Environment variable: the directory blocks live in."""
SHM_MAX_ENV = "BRUDNO_SHM_MAX_MB"
"""Environment variable: the most MiB of blocks Brudno keeps in that directory (all its
processes together); unset, only the free space limits them."""
DEFAULT_DIR = Path("/dev/shm")
MARGIN_BYTES = 4 << 20
"""Free space a new block leaves in the directory (other programs' semaphores and blocks)."""
PREFIX = "brudno-"
_NAME = re.compile(r"brudno-(\d+)-(\d+)-(\d+)-[0-9a-f]+")
_MIB = 1 << 20


@dataclass(frozen=True, slots=True)
class ShmShortage:
    """Why a block was refused: its size and what was free (bytes)."""

    needed: int
    available: int

    def describe(self) -> str:
        return (
            f"a shared table of {_mib(self.needed)} MiB does not fit in shared memory "
            f"({_mib(max(0, self.available))} MiB free)"
        )


class SharedMemoryFullError(MemoryError):
    """A block that does not fit (checked before allocating, or ``ENOSPC`` while backing)."""

    def __init__(self, shortage: ShmShortage) -> None:
        super().__init__(shortage.describe())
        self.shortage = shortage

    def __reduce__(self) -> tuple[type[SharedMemoryFullError], tuple[ShmShortage]]:
        return SharedMemoryFullError, (self.shortage,)


def _mib(size: int) -> int:
    return -(-size // _MIB)


@dataclass(frozen=True, slots=True)
class ShmPlace:
    """The directory blocks are created in, and the cap on Brudno's blocks there."""

    directory: Path
    max_bytes: int | None = None

    @classmethod
    def from_environment(cls) -> ShmPlace:
        """``$BRUDNO_SHM_DIR`` (default ``/dev/shm``, or the temporary directory where there
        is none) and ``$BRUDNO_SHM_MAX_MB``.  :class:`ValueError` for a cap that is no
        number."""
        named = os.environ.get(SHM_DIR_ENV, "")
        if named:
            directory = Path(named)
        elif DEFAULT_DIR.is_dir():
            directory = DEFAULT_DIR
        else:
            directory = Path(tempfile.gettempdir())
        cap = os.environ.get(SHM_MAX_ENV, "").strip()
        if not cap:
            return cls(directory)
        if not cap.isdigit():
            raise ValueError(f"{SHM_MAX_ENV}={cap!r}: not a number of MiB")
        return cls(directory, int(cap) * _MIB)

    def blocks(self) -> list[Path]:
        """Brudno's blocks in the directory (any process's)."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        return [self.directory / n for n in names if _NAME.fullmatch(n)]

    def used_bytes(self) -> int:
        """The sizes of Brudno's blocks in the directory, added up."""
        total = 0
        for path in self.blocks():
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        return total

    def free_bytes(self) -> int:
        """How large a new block may be: the free space less :data:`MARGIN_BYTES`, and what
        the cap leaves."""
        try:
            stat = os.statvfs(self.directory)
            free = stat.f_bavail * stat.f_frsize - MARGIN_BYTES
        except OSError:
            free = 0
        if self.max_bytes is not None:
            free = min(free, self.max_bytes - self.used_bytes())
        return max(0, free)

    def sweep(self) -> list[str]:
        """Unlink this user's blocks of this pid namespace whose creator is gone; their
        names.  (Another user's processes may be hidden from ``/proc``: theirs stay.)"""
        namespace = _pid_namespace()
        uid = os.getuid() if hasattr(os, "getuid") else None  # None: Windows
        removed = []
        for path in self.blocks():
            match = _NAME.fullmatch(path.name)
            assert match is not None
            ns, pid, start = (int(g) for g in match.groups())
            if ns != namespace or _alive(pid, start):
                continue
            try:
                if uid is not None and path.stat().st_uid != uid:
                    continue
                path.unlink()
            except OSError:  # gone meanwhile, or not ours to delete
                continue
            removed.append(path.name)
        return removed


def _proc_stat(pid: int) -> tuple[str, int] | None:
    """``(state, start time in clock ticks)`` of ``pid`` from ``/proc``; ``None`` if there
    is no such entry."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0], int(fields[19])


def _has_proc() -> bool:
    return os.path.isdir("/proc/self")


def _pid_namespace() -> int:
    """This process's pid namespace (0 where it cannot be told): blocks of another namespace
    are never swept, as its pids mean other processes."""
    try:
        return os.stat("/proc/self/ns/pid").st_ino
    except OSError:
        return 0


def _start_time(pid: int) -> int:
    stat = _proc_stat(pid) if _has_proc() else None
    return 0 if stat is None else stat[1]


def _alive(pid: int, start: int) -> bool:
    """Whether the process that created a block still runs (not a zombie, not a newer process
    that got the same pid)."""
    if _has_proc():
        stat = _proc_stat(pid)
        return stat is not None and stat[0] not in "ZX" and (start in (0, stat[1]))
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def block_owner(name: str) -> int | None:
    """The pid of the process that created the block ``name`` (a path or a file name)."""
    match = _NAME.fullmatch(Path(name).name)
    return None if match is None else int(match[2])


def _new_name() -> str:
    pid = os.getpid()
    return f"{PREFIX}{_pid_namespace()}-{pid}-{_start_time(pid)}-{secrets.token_hex(4)}"


def _create(place: ShmPlace, size: int) -> tuple[str, mmap.mmap]:
    """A new block of ``size`` bytes, all of it backed: its path and mapping."""
    place.sweep()
    available = place.free_bytes()
    if size > available:
        raise SharedMemoryFullError(ShmShortage(size, available))
    path = place.directory / _new_name()
    flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if hasattr(os, "posix_fallocate"):
            os.posix_fallocate(fd, 0, size)
        else:  # macOS: no way to reserve the pages; they are found at first touch
            os.ftruncate(fd, size)
        return str(path), mmap.mmap(fd, size)
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(path)
        if exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.ENOMEM):
            raise SharedMemoryFullError(ShmShortage(size, place.free_bytes())) from exc
        raise
    finally:
        os.close(fd)


def _attach(path: str) -> mmap.mmap:
    fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
    try:
        return mmap.mmap(fd, os.fstat(fd).st_size)
    finally:
        os.close(fd)


def _release(block: mmap.mmap, views: list[memoryview], path: str | None, creator: int) -> None:
    for view in views:
        view.release()
    views.clear()
    block.close()
    if path is not None and os.getpid() == creator:  # not in a forked child
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)


class SharedWords:
    """A shared block of 64-bit words, created (``words``, in ``place`` or the environment's)
    or attached (``name``: the creator's :attr:`name`)."""

    __slots__ = ("__weakref__", "_block", "_finalizer", "_views", "name", "owner")

    def __init__(
        self, *, words: int | None = None, name: str | None = None, place: ShmPlace | None = None
    ) -> None:
        if (words is None) == (name is None):
            raise ValueError("give the number of words to create a block, or a block's name")
        self.owner = name is None
        if name is None:
            assert words is not None
            where = place or ShmPlace.from_environment()
            self.name, self._block = _create(where, 8 * max(1, words))
        else:
            self.name, self._block = name, _attach(name)
        self._views: list[memoryview] = []
        self._finalizer = weakref.finalize(
            self,
            _release,
            self._block,
            self._views,
            self.name if self.owner else None,
            os.getpid(),
        )

    def view(self, start: int = 0, stop: int | None = None, *, signed: bool = False) -> memoryview:
        """Words ``start:stop`` as a ``memoryview`` of format ``Q``, or ``q`` when ``signed``
        (valid until close)."""
        whole = memoryview(self._block)
        words = whole.cast("q" if signed else "Q")
        view = words[start:stop]
        words.release()
        whole.release()
        self._views.append(view)
        return view

    def close(self) -> None:
        """Release every view, unmap the block, and delete it if this process made it; later
        calls do nothing."""
        self._finalizer()
