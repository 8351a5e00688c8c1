"""Run a student's code in a sandbox: limited, isolated, and unable to see anything else.

Used two ways:

* as the grading **kernel** (``course_grader/kernels/attention-sandbox/kernel.json``
  runs ``python sandbox.py kernel {connection_file}``), so that nbgrader executes
  every submission inside it;
* from Python, :func:`command` wraps any command line (the clean re-run of the
  tests in :mod:`course_grader.recheck` uses it).

What the sandbox does, on Linux, run as root (how the grading runs here and in CI):

1. ``unshare`` puts the process in new **mount, network, PID, IPC and UTS
   namespaces**.  The new network namespace has only a loopback interface that
   is down: no network at all.  The new PID namespace means the student's code
   sees only its own processes, and all of them die with the sandbox.
2. A fresh **file-system view** is built on a tmpfs and ``chroot``-ed into:
   read-only ``/usr``, ``/etc`` and the Python installation, each at one path
   (the virtual environment only as ``/opt/python``; its base interpreter at its
   own path, which its binary names), a private, empty ``/tmp``, a minimal
   ``/dev`` and a private ``/proc``.  Python package folders the interpreter
   does not use (the base installation's, the operating system's) are shown
   empty, and each forbidden module is covered wherever the interpreter finds
   it.  The working directory is a size-limited tmpfs holding a *copy* of the
   submission's directory without any notebook, so whatever the code writes
   there vanishes with the sandbox.  Nothing else exists: not the
   repository (so not ``solutions/``), not the course directory (so not the
   gradebook, other submissions or feedback).
3. The code runs as an **unprivileged user** (uid ``64000 + 100 * block + slot``: each grading run
   reserves a block of its own, :class:`UidBlock`; no groups,
   ``no_new_privs``), with a **seccomp filter** that refuses the kernel's keyrings
   (per user id and in no namespace: one submission could leave a key for the
   next), under **resource limits**: address space (memory), CPU time,
   processes, file size, open files, no core dumps; a supervisor (PID 1 of the
   namespace, root) kills everything at a wall-clock deadline.

A kernel talks to nbgrader over ZeroMQ; a TCP socket would not cross the
network namespace, so the grading kernel uses ZeroMQ's ``ipc`` transport (Unix
sockets in a per-kernel directory, the only path shared with the outside, and
sealed read-only once the kernel has created its sockets).

Where a facility is missing (not root, no ``unshare``, not Linux) the sandbox
**degrades loudly**: the resource limits still apply, and every start prints
what is *not* isolated.  ``ATTENTION_SANDBOX=strict`` refuses to run instead;
``ATTENTION_SANDBOX=off`` skips isolation on purpose (debugging), also loudly.

This file must run with nothing but the standard library (``python -I -S``).
"""

from __future__ import annotations

import ctypes
import fnmatch
import json
import os
import selectors
import shutil
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
NEWROOT = "/tmp/.attention-sandbox-root"   # a mount point only; each sandbox mounts its own tmpfs here
INSIDE_WORKDIR = "/home/student/work"       # where the copy of the working directory appears
INSIDE_IPC = "/run/kernel"                  # where the kernel's socket folder appears
INSIDE_VENV = "/opt/python"                 # where the grader's virtual environment appears
BASE_UID = 64000
ENV_PREFIX = "ATTENTION_SANDBOX"



# ---------------------------------------------------------------------------
# What is available here
# ---------------------------------------------------------------------------

class SandboxUnavailable(RuntimeError):
    """Strict mode, and full isolation is impossible here; the message says what is missing."""


def mode() -> str:
    """``auto`` (default), ``strict`` or ``off``, from ``$ATTENTION_SANDBOX``."""
    value = os.environ.get(ENV_PREFIX, "auto").strip().lower() or "auto"
    if value not in ("auto", "strict", "off"):
        raise SystemExit(f"{ENV_PREFIX} must be auto, strict or off; got {value!r}")
    return value


def missing_facilities() -> list[str]:
    """Why full isolation is impossible here; empty when it is possible."""
    missing = []
    if not sys.platform.startswith("linux"):
        missing.append(f"not Linux ({sys.platform}): no namespaces")
        return missing
    if os.geteuid() != 0:
        missing.append("not running as root: cannot create namespaces, mounts or switch user")
    if shutil.which("unshare") is None:
        missing.append("util-linux 'unshare' not found")
    if not os.path.exists("/proc/self/ns/net"):
        missing.append("the kernel does not expose namespaces (/proc/self/ns)")
    if not missing:
        probe = _probe_namespaces()
        if probe:
            missing.append(probe)
    return missing


_PROBED: list = []


def _probe_namespaces() -> str:
    """Root is not always enough (e.g. a container without CAP_SYS_ADMIN): try it, once.

    Where a worker's zygote (:class:`Zygote`) is listening, its namespaces are the proof.
    """
    if not _PROBED and os.environ.get(ZYGOTE_ENV, "").startswith("/") and os.path.exists(os.environ[ZYGOTE_ENV]):
        _PROBED.append("")
    if not _PROBED:
        import subprocess

        try:
            done = subprocess.run([*NEW_NAMESPACES, "true"], capture_output=True, text=True, timeout=20)
            _PROBED.append("" if done.returncode == 0 else
                           f"namespaces are not permitted here ({done.stderr.strip()[:200]})")
        except (OSError, subprocess.SubprocessError) as error:
            _PROBED.append(f"unshare failed ({error})")
    return _PROBED[0]


def describe(missing: list[str] | None = None) -> str:
    """One paragraph an instructor can read: what is and is not isolated."""
    missing = missing_facilities() if missing is None else missing
    if mode() == "off":
        missing = [f"{ENV_PREFIX}=off"] + missing
    if not missing:
        keyrings = ", no kernel keyrings (seccomp)" if seccomp_available() else ""
        return ("sandbox: full isolation (new mount/network/PID/IPC namespaces, private file-system "
                f"view, unprivileged user{keyrings}, memory/CPU/process/file limits, wall-clock deadline)")
    return ("sandbox: DEGRADED -- " + "; ".join(missing) + ". Only the memory, CPU, process and "
            "file-size limits apply: student code CAN use the network, read every file this user "
            "can read (other submissions, the solutions, the gradebook) and write wherever this "
            "user can write.")


def _default_limits():
    """The module ``limits.py`` next to this file, also when this file runs as a script.

    The kernel launcher and the supervisor run ``sandbox.py`` as a program, where
    a relative import has no package to be relative to.
    """
    if __package__:
        from . import limits
        return limits
    import importlib.util

    spec = importlib.util.spec_from_file_location("grading_limits", os.path.join(HERE, "limits.py"))
    limits = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(limits)
    return limits


def limits_from_env(overrides: dict | None = None) -> dict:
    """``limits.SANDBOX``, then ``ATTENTION_SANDBOX_<NAME>`` variables, then ``overrides``."""
    limits = dict(_default_limits().SANDBOX)
    for key in limits:
        value = os.environ.get(f"{ENV_PREFIX}_{key.upper()}")
        if value:
            limits[key] = int(float(value))
    limits.update(overrides or {})
    return limits


# ---------------------------------------------------------------------------
# Whose user ids: each grading run its own
# ---------------------------------------------------------------------------
#
# A sandbox runs as an unprivileged user, one per worker (its slot), so that one worker's programs
# cannot signal or outlast another's, and so that RLIMIT_NPROC, which the kernel counts per real user
# id across the whole machine (namespaces do not separate it), holds one worker's processes only.  Two
# grading runs on one machine (two instructors, two assignments, a run and a test suite) must not share
# them: one run's fork bomb would use up the other's process limit.  So each run reserves a block of ids
# (an exclusive lock on a file per block, held as long as the run lives) and hands its base to the
# processes it starts in the environment.

#: Sandbox user ids per block: a run may have this many workers
UIDS_PER_BLOCK = 100
#: Blocks: ids 64000 to 65499, below nobody (65534) and the 16-bit (uid_t)-1 (65535)
UID_BLOCKS = 15
#: The environment variable that hands a run's first sandbox user id to the processes it starts
UID_BASE_ENV = f"{ENV_PREFIX}_UID_BASE"
_RESERVED: dict[int, int] = {}    # base -> the descriptor of its lock


class UidBlock:
    """A block of sandbox user ids that no other process on this machine holds (see the comment above).

    ``with UidBlock.reserve():`` holds one for a grading run: the run's processes inherit its
    base (:data:`UID_BASE_ENV`); on leaving, the environment is as it was and the block is free.
    """

    def __init__(self, base: int, fd: int):
        self.base, self._fd = base, fd

    @classmethod
    def reserve(cls) -> "UidBlock":
        import fcntl

        folder = _uid_lock_folder()
        for block in range(UID_BLOCKS):
            fd = os.open(os.path.join(folder, f"block-{block}"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            base = BASE_UID + block * UIDS_PER_BLOCK
            _RESERVED[base] = fd
            return cls(base, fd)
        raise SandboxUnavailable(f"{UID_BLOCKS} grading runs on this machine hold every block of the sandbox's "
                                 f"user ids ({BASE_UID} to {BASE_UID + UID_BLOCKS * UIDS_PER_BLOCK - 1}); "
                                 "grade when one of them has ended")

    def release(self) -> None:
        if _RESERVED.pop(self.base, None) is not None:
            os.close(self._fd)      # the lock goes with its last descriptor

    def __enter__(self) -> "UidBlock":
        self._previous = os.environ.get(UID_BASE_ENV)
        os.environ[UID_BASE_ENV] = str(self.base)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is None:
            os.environ.pop(UID_BASE_ENV, None)
        else:
            os.environ[UID_BASE_ENV] = self._previous
        self.release()


def _uid_lock_folder() -> str:
    """Where the blocks' lock files are: root's own (``/run``), or a folder of this user's."""
    import tempfile

    base = "/run" if os.geteuid() == 0 and os.access("/run", os.W_OK) else tempfile.gettempdir()
    folder = os.path.join(base, f"course-grader-uids-{os.geteuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if os.lstat(folder).st_uid != os.geteuid() or not os.path.isdir(folder) or os.path.islink(folder):
        raise SandboxUnavailable(f"{folder} is not a folder of this user's: the sandbox's user ids cannot be reserved")
    return folder


def uid_base() -> int:
    """This process's first sandbox user id: its grading run's (inherited), else a block reserved now
    for as long as this process lives (plain ``nbgrader autograde``, practice feedback, a test)."""
    inherited = os.environ.get(UID_BASE_ENV)
    if inherited:
        return int(inherited)
    if not _RESERVED:
        os.environ[UID_BASE_ENV] = str(UidBlock.reserve().base)
        return int(os.environ[UID_BASE_ENV])
    return min(_RESERVED)


def sandbox_uid(slot: int | None = None) -> int:
    """The unprivileged user a sandbox of worker ``slot`` runs as: this run's base plus the slot."""
    if slot is None:
        slot = int(os.environ.get(f"{ENV_PREFIX}_SLOT", "0") or 0)
    if not 0 <= int(slot) < UIDS_PER_BLOCK:
        raise ValueError(f"worker slot {slot}: a grading run has at most {UIDS_PER_BLOCK} workers")
    return uid_base() + int(slot)


# ---------------------------------------------------------------------------
# Building the command line
# ---------------------------------------------------------------------------

def command(argv: list[str], workdir: str, *, limits: dict | None = None, slot: int | None = None,
            share: list[tuple[str, str]] = (), files: dict[str, str] | None = None,
            seal: list[str] = (), exclude: list[str] = ("*.ipynb",), quiet: bool = False,
            forbid: list[str] = ()) -> list[str]:
    """The command line that runs ``argv`` in the sandbox.

    Args:
        argv: the program and its arguments, as seen *inside* the sandbox.
        workdir: its working directory; a copy of this directory's files (minus
            ``exclude``) is what the program finds there.
        limits: see ``limits.SANDBOX``.
        slot: picks the unprivileged uid (:func:`sandbox_uid`), one per parallel worker.
        share: directories shared read-write with the outside: ``(path outside, path inside)``.
        files: ``{path inside: content}`` small files created for the program.
        seal: files whose appearance means the program has started; the shared
            directories are then made read-only to it.
        exclude: glob patterns of files not copied into the working directory.
        quiet: send the program's stdout to /dev/null.
        forbid: modules the program may not import (an assignment's policy:
            TensorFlow and Keras where the exercise asks for NumPy).  Each is
            replaced, in the sandbox's view of the Python installation, by a
            module whose import fails with a message saying so.

    Falls back to resource limits only (with a warning) when isolation is
    unavailable; see :func:`describe`.
    """
    spec = _spec(argv, workdir, limits=limits, slot=slot, share=share, files=files, seal=seal,
                 exclude=exclude, quiet=quiet, forbid=forbid)
    current = mode()
    missing = missing_facilities()
    if current == "strict" and missing:
        raise SandboxUnavailable(
            f"{ENV_PREFIX}=strict, but the sandbox cannot isolate student code here: "
            + "; ".join(missing) + ". Grade on Linux as root with util-linux's unshare, or unset "
            f"{ENV_PREFIX} to grade with resource limits only (not recommended).")
    if current == "off" or missing:
        return self_command("limits-only", json.dumps(spec))
    _inside_paths(spec)
    zygote = os.environ.get(ZYGOTE_ENV, "")
    if zygote and zygote != "off" and not zygote_refuses(spec):
        return self_command("attach", zygote, json.dumps(spec))
    return _isolated_command(spec)


#: How this file runs as a program: imported, so that Python reads its compiled form (a script is
#: compiled anew at every start, 30 ms, twice per submission graded).
RUN_SELF = "import sys; sys.path.insert(0, sys.argv[1]); import sandbox; sandbox.main(sys.argv[2:])"


def self_command(*args: str) -> list[str]:
    """The command line that runs this file's :func:`main` with ``args`` (standard library only)."""
    return [sys.executable, "-I", "-S", "-c", RUN_SELF, HERE, *args]


def _spec(argv: list[str], workdir: str, *, limits: dict | None = None, slot: int | None = None,
          share=(), files: dict | None = None, seal=(), exclude=("*.ipynb",), quiet: bool = False,
          forbid=()) -> dict:
    """What the sandbox's own process needs to know (see :func:`command`), as plain data."""
    python = students_python()
    facts = interpreter_facts(python, tuple(forbid))
    argv = list(argv)
    if argv and argv[0] == sys.executable:     # the students' code runs in the course's interpreter
        argv[0] = python
    return {
        "argv": argv, "workdir": os.path.abspath(workdir),
        "limits": limits_from_env(limits), "uid": sandbox_uid(slot),
        "share": [[os.path.abspath(outside), inside] for outside, inside in share],
        "files": dict(files or {}),
        "seal": list(seal), "exclude": list(exclude), "quiet": quiet,
        "forbid": facts["forbid"],
        "python": facts["prefixes"],
        "hide": facts["hide"],
        "venv": None,
        "base_prefix": facts["base_prefix"], "prefix": facts["prefix"],
    }


def _inside_paths(spec: dict):
    """Where the isolated program sees the installation: a virtual environment as :data:`INSIDE_VENV`."""
    venv = os.path.abspath(spec["prefix"])
    if venv != os.path.abspath(spec["base_prefix"]) and not venv.startswith("/usr/"):
        # A virtual environment lives in the course's repository: inside, it is INSIDE_VENV,
        # so that no command line, link or variable the program can read names the host's folders.
        spec["venv"] = venv
        # Only there: sys.exec_prefix names it too, and a second, host path would escape the
        # forbidden modules' stubs (which cover the INSIDE_VENV path).
        spec["python"] = [p for p in spec["python"] if os.path.realpath(p) != os.path.realpath(venv)]
        program = os.path.abspath(spec["argv"][0]) if spec["argv"] else ""
        if program.startswith(venv + "/"):
            spec["argv"][0] = INSIDE_VENV + program[len(venv):]


#: A program in namespaces of its own (mounts, network, process ids, IPC, host name), killed with its parent.
NEW_NAMESPACES = ("unshare", "--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child",
                  "--propagation", "private", "--")


def _isolated_command(spec: dict) -> list[str]:
    return [*NEW_NAMESPACES, *self_command("inside", json.dumps(spec))]


def students_python() -> str:
    """The interpreter that runs the students' code: the course's own (``$ATTENTION_SANDBOX_PYTHON``,
    the grading command's ``--python``), else the grader's."""
    return os.environ.get(f"{ENV_PREFIX}_PYTHON") or sys.executable


#: (interpreter, forbidden modules) -> its facts; another interpreter is asked once per process
_FACTS: dict = {}


def interpreter_facts(python: str, forbid: tuple = ()) -> dict:
    """What the sandbox needs to know of ``python``: its installation's prefixes, the package folders
    it does not use (:func:`unused_package_folders`) and where it finds the forbidden modules.

    The grader's own interpreter answers here; another (a course's environment) is asked by
    running this file with it (``python -I sandbox.py facts``).
    """
    key = (python, tuple(forbid))
    if key not in _FACTS:
        if python == sys.executable:
            _FACTS[key] = own_facts(list(forbid))
        else:
            import subprocess
            done = subprocess.run([python, "-I", os.path.abspath(__file__), "facts", json.dumps(list(forbid))],
                                  capture_output=True, text=True, timeout=120)
            if done.returncode != 0:
                raise SandboxUnavailable(f"the students' Python ({python}) could not describe itself: "
                                         + (done.stderr.strip().splitlines() or ["no output"])[-1])
            _FACTS[key] = json.loads(done.stdout)
    return _FACTS[key]


def own_facts(forbid: list) -> dict:
    """:func:`interpreter_facts` of the interpreter running this code."""
    return {"prefixes": list(dict.fromkeys([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix])),
            "prefix": sys.prefix, "base_prefix": sys.base_prefix,
            "hide": unused_package_folders(), "forbid": module_locations(forbid)}


def check_students_python(python: str) -> str:
    """``python`` as an absolute path, if it can run a notebook and the re-check; else a clear error."""
    import subprocess
    found = shutil.which(python) or python
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        raise SandboxUnavailable(f"--python {python}: no such interpreter (give the path of the course "
                                 "environment's python, for example course-env/bin/python)")
    found = os.path.abspath(found)
    done = subprocess.run([found, "-I", "-c", "import ipykernel, IPython, numpy"], capture_output=True,
                          text=True, timeout=120)
    if done.returncode != 0:
        missing = (done.stderr.strip().splitlines() or ["it did not start"])[-1]
        raise SandboxUnavailable(f"--python {python} cannot run students' notebooks here ({missing}); "
                                 "the course environment needs ipykernel and numpy (pip install ipykernel numpy)")
    return found


def module_locations(names) -> dict[str, list[str]]:
    """``{name: [package folder or module file, ...]}``: every folder of ``sys.path`` that holds a
    top-level module of ``names`` (the first one found is not the only one a program can reach)."""
    from importlib.machinery import PathFinder

    folders = list(dict.fromkeys(os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)))
    found = {}
    for name in names:
        for folder in folders:
            try:
                spec = PathFinder.find_spec(name, [folder])
            except (ImportError, ValueError):
                spec = None
            if spec is None:
                continue
            if spec.submodule_search_locations:
                found.setdefault(name, []).append(os.path.abspath(list(spec.submodule_search_locations)[0]))
            elif spec.origin and os.path.isfile(spec.origin):
                found.setdefault(name, []).append(os.path.abspath(spec.origin))
    return found


def unused_package_folders() -> list[str]:
    """The host's Python package folders that are not on this interpreter's ``sys.path``.

    The base installation's ``site-packages`` under a virtual environment, and
    the operating system's (``/usr/lib/python3/dist-packages``): the sandbox
    needs their parents (the standard library, ``/usr``), not them, and a
    module a program imported from there would escape the forbidden modules'
    stubs, which cover the folders the interpreter uses.
    """
    import glob
    import site

    candidates = (site.getsitepackages([sys.base_prefix, sys.base_exec_prefix])
                  + glob.glob("/usr/lib/python3*/*-packages") + glob.glob("/usr/local/lib/python3*/*-packages"))
    used = {os.path.realpath(p) for p in sys.path if p}
    return sorted({os.path.realpath(c) for c in candidates if os.path.isdir(c)} - used)


def forbidden_from_env(env: dict | None = None) -> list[str]:
    """The modules ``$ATTENTION_SANDBOX_FORBID`` (comma-separated) forbids: how a kernel learns its policy."""
    env = os.environ if env is None else env
    return [name.strip() for name in env.get(f"{ENV_PREFIX}_FORBID", "").split(",") if name.strip()]


FORBIDDEN_MESSAGE = ("{name} cannot be imported while this assignment is graded: its grading policy "
                     "forbids it, because the exercise asks you to write that part yourself")


# ---------------------------------------------------------------------------
# Inside the namespaces (root, PID 1): build the view, drop privileges, supervise
# ---------------------------------------------------------------------------

_libc = None
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC = 32, 4096, 16384
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS = 1, 38


def _c():
    global _libc
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _mount(source, target, fstype=None, flags=0, data=None):
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    if _c().mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {source} on {target}: {os.strerror(err)}")


def _prctl(option, value):
    _c().prctl(option, ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0), ctypes.c_ulong(0))


def _inside(path: str) -> str:
    return os.path.join(NEWROOT, path.lstrip("/"))


def _folders(path: str):
    """Create the folder ``path`` of the new root and those above it, as mount points or a mount point's parents.

    Mode 0711: a program can pass through them but not list them, since their
    names can be the host's (``~/.pyenv/versions`` above a base interpreter).
    """
    missing = []
    while not os.path.exists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for folder in reversed(missing):
        os.mkdir(folder)
        os.chmod(folder, 0o711)


def _bind(source: str, inside: str | None = None, readonly: bool = True):
    target = _inside(inside or source)
    if os.path.isdir(source):
        _folders(target)
    else:
        _folders(os.path.dirname(target))
        open(target, "a").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if readonly:
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)


def working_files(source: str, exclude=("*.ipynb",), budget: int | None = None):
    """``(copied, left_out)``: the relative paths of ``source``'s regular files the sandbox copies into its
    working folder, and those it leaves out because they would exceed ``budget`` bytes (by default the
    sandbox's: half of its in-memory files).  Links, devices and sockets are never copied."""
    if budget is None:
        budget = limits_from_env()["tmp_mb"] * 2 ** 19
    copied, left_out = [], []

    def walk(folder: str, prefix: str):
        nonlocal budget
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:          # gone, or not a folder any more, since it was listed
            return
        for entry in entries:
            if any(fnmatch.fnmatch(entry.name, pattern) for pattern in exclude) or entry.is_symlink():
                continue
            if entry.path in (NEWROOT, SCRATCH):   # another sandbox's mount points (a working folder of /tmp)
                continue
            relative = os.path.join(prefix, entry.name)
            if entry.is_dir():
                walk(entry.path, relative)
            elif entry.is_file():
                try:
                    size = entry.stat().st_size
                except OSError:  # removed while the folder was read: nothing to copy
                    continue
                if size > budget:
                    left_out.append(relative)
                    continue
                budget -= size
                copied.append(relative)

    if os.path.isdir(source):
        walk(source, "")
    return copied, left_out


def _copy_tree(source: str, target: str, uid: int, exclude, budget: int):
    """The files :func:`working_files` chooses, owned by the program's user."""
    copied, _ = working_files(source, exclude, budget)
    for relative in copied:
        dest = os.path.join(target, relative)
        folder = os.path.dirname(dest)
        if not os.path.isdir(folder):
            os.makedirs(folder, 0o700)
            walk_up = folder
            while walk_up != target:
                os.chown(walk_up, uid, uid)
                walk_up = os.path.dirname(walk_up)
        try:
            shutil.copyfile(os.path.join(source, relative), dest)
        except FileNotFoundError:   # removed since it was listed
            continue
        os.chown(dest, uid, uid)
        os.chmod(dest, 0o600)


SCRATCH = "/tmp/.attention-sandbox-scratch"  # a mount point only, outside the new root


def _scratch(size_mb: int, uid: int) -> str:
    """One in-memory file system for all the program can write: /tmp, /dev/shm and its working folder.

    One, so that its size is one number, which the memory limit accounts for
    (:func:`apply_limits`): what a program keeps in files in memory is memory.
    It is mounted outside the new root, in the sandbox's own mount namespace,
    and its three folders are bound into the view.
    """
    os.makedirs(SCRATCH, mode=0o700, exist_ok=True)
    _mount("tmpfs", SCRATCH, "tmpfs", MS_NOSUID | MS_NODEV, f"size={size_mb}m,mode=0700")
    for name, mode, owner in (("tmp", 0o1777, 0), ("shm", 0o1777, 0), ("work", 0o700, uid)):
        path = os.path.join(SCRATCH, name)
        os.mkdir(path)
        os.chown(path, owner, owner)
        os.chmod(path, mode)
    return SCRATCH


def build_view(spec: dict):
    """The program's file-system view at :data:`NEWROOT`: the installation, then the submission's part."""
    uid, limits = spec["uid"], spec["limits"]
    scratch = _scratch(limits["tmp_mb"], uid)
    _build_installation(spec, scratch)
    _forbid_modules(spec)
    _build_submission(spec, scratch)
    # Nothing else may be created in the new root itself.
    _mount(None, NEWROOT, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)


def _build_installation(spec: dict, scratch: str):
    """What every program sees alike: the operating system, Python, /dev, /proc, and /tmp from ``scratch``."""
    uid = spec["uid"]
    os.makedirs(NEWROOT, mode=0o700, exist_ok=True)
    _mount("tmpfs", NEWROOT, "tmpfs", MS_NOSUID, "size=16m,mode=0755")
    # The operating system and the Python installation, read-only.
    for name in sorted(os.listdir("/")):
        path = "/" + name
        if os.path.islink(path) and name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            os.symlink(os.readlink(path), _inside(path))
        elif name in ("usr", "etc", "bin", "sbin", "lib", "lib32", "lib64", "libx32") and os.path.isdir(path):
            _bind(path)
    # A private /tmp, with the program's home directory in it and nothing of the host's.
    # Mounted before the Python installation is bound in: a base interpreter installed
    # under /tmp keeps its path (its binary names it), which a tmpfs mounted afterwards would hide.
    os.makedirs(_inside("/tmp"), exist_ok=True)
    _mount(os.path.join(scratch, "tmp"), _inside("/tmp"), None, MS_BIND)
    _home(scratch, uid)
    if spec.get("venv"):
        _bind(spec["venv"], INSIDE_VENV)
    prefixes = sorted({os.path.realpath(p) for p in spec["python"]})
    for prefix in prefixes:
        if not any(prefix.startswith(done + "/") for done in ("/usr", "/etc")):
            if os.path.isdir(prefix):
                _bind(prefix)
                # the interpreter may be a link into another installation (a venv, pyenv)
    for prefix in spec["python"]:
        if os.path.islink(prefix) and not os.path.exists(_inside(prefix)):
            _folders(os.path.dirname(_inside(prefix)))
            os.symlink(os.readlink(prefix), _inside(prefix))
    for folder in spec.get("hide", []):     # package folders the interpreter does not use: empty
        if os.path.isdir(_inside(folder)):
            _mount("tmpfs", _inside(folder), "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                   "size=4k,mode=0755")
    # /dev: a handful of harmless devices.
    dev = _inside("/dev")
    os.makedirs(dev, exist_ok=True)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=64k,mode=0755")
    for name in ("null", "zero", "full", "random", "urandom"):
        if os.path.exists("/dev/" + name):
            open(os.path.join(dev, name), "a").close()
            _mount("/dev/" + name, os.path.join(dev, name), None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    os.makedirs(os.path.join(dev, "shm"))
    _mount(os.path.join(scratch, "shm"), os.path.join(dev, "shm"), None, MS_BIND)
    os.makedirs(_inside("/proc"), exist_ok=True)
    # hidepid=2: the program sees only its own processes, not the supervisor (root, PID 1),
    # whose command line holds the host's paths.
    _mount("proc", _inside("/proc"), "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")


def _home(scratch: str, uid: int):
    home = os.path.join(scratch, "tmp", "home")
    os.makedirs(home, mode=0o700)
    os.chown(home, uid, uid)


def _build_submission(spec: dict, scratch: str):
    """What is this program's own: the shared folders, the copy of its working folder, its files."""
    uid, limits = spec["uid"], spec["limits"]
    # Directories shared with the outside (the kernel's sockets), at paths that name nothing of the host.
    for outside, inside in spec["share"]:
        os.chown(outside, uid, uid)
        os.chmod(outside, 0o700)
        _folders(_inside(inside))
        _mount(outside, _inside(inside), None, MS_BIND)
    # The working directory: a private, size-limited copy, at a path that says nothing about the host.
    workdir = spec["workdir"]
    inside_workdir = _inside(INSIDE_WORKDIR)
    _folders(inside_workdir)
    _mount(os.path.join(scratch, "work"), inside_workdir, None, MS_BIND)
    if os.path.isdir(workdir):
        _copy_tree(workdir, inside_workdir, uid, spec["exclude"], limits["tmp_mb"] * 2 ** 19)
    for path, content in spec["files"].items():
        target = _inside(path)
        with open(target, "w") as f:
            f.write(content)
        os.chown(target, uid, uid)
        os.chmod(target, 0o600)


def _host_to_inside(path: str, spec: dict) -> str:
    venv = spec.get("venv")
    return INSIDE_VENV + path[len(venv):] if venv and path.startswith(venv + "/") else path


def _forbid_modules(spec: dict, stubs: str = NEWROOT):
    """Cover each forbidden module, in the read-only view, with one that refuses to be imported
    (a single-file module by a stub file kept in ``stubs``)."""
    for name, locations in spec.get("forbid", {}).items():
        for location in locations:
            _forbid_module(name, location, spec, stubs)


def _forbid_module(name: str, location: str, spec: dict, stubs: str = NEWROOT):
    stub = f"raise ModuleNotFoundError({FORBIDDEN_MESSAGE.format(name=name)!r}, name={name!r})\n"
    target = _inside(_host_to_inside(location, spec))
    if not os.path.exists(target):
        return
    if os.path.isdir(target):
        _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
        with open(os.path.join(target, "__init__.py"), "w") as f:
            f.write(stub)
        _mount(None, target, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)
    else:   # a single-file module: a stub file of the same name
        stub_path = os.path.join(stubs, f".forbidden-{name}.py")
        with open(stub_path, "w") as f:
            f.write(stub)
        _mount(stub_path, target, None, MS_BIND)
        _mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID)


def child_env(spec: dict) -> dict:
    python_bin = os.path.dirname(spec["argv"][0]) if os.path.isabs(spec["argv"][0]) else ""
    keep = {k: v for k, v in os.environ.items()
            if k in ("TF_CPP_MIN_LOG_LEVEL", "TF_ENABLE_ONEDNN_OPTS", "KERAS_BACKEND", "PYTHONHASHSEED")}
    return {
        **keep,
        "PATH": ":".join(p for p in (python_bin, "/usr/local/bin", "/usr/bin", "/bin") if p),
        "HOME": "/tmp/home", "USER": "student", "LOGNAME": "student", "TMPDIR": "/tmp",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
        "IPYTHONDIR": "/tmp/home/.ipython", "MPLCONFIGDIR": "/tmp/home/.matplotlib",
        "JUPYTER_RUNTIME_DIR": "/tmp/home/.jupyter-runtime",
        # one thread each: predictable, and fair to the other submissions graded in parallel
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "MALLOC_ARENA_MAX": "2", "PYTHONDONTWRITEBYTECODE": "1",
        f"{ENV_PREFIX}_INSIDE": "1",   # what runs here is being graded (course_grader.practice does nothing)
    }


def apply_limits(limits: dict, in_memory_files_mb: int = 0):
    """The resource limits; ``in_memory_files_mb`` (the sandbox's tmpfs) comes out of the memory limit."""
    import resource

    def setlimit(name, soft, hard=None):
        which = getattr(resource, name, None)
        if which is None:
            return
        try:
            resource.setrlimit(which, (soft, soft if hard is None else hard))
        except (ValueError, OSError):
            pass  # e.g. macOS refuses RLIMIT_AS; describe() has already said so

    mib = 2 ** 20
    setlimit("RLIMIT_AS", max(limits["memory_mb"] - in_memory_files_mb, 64) * mib)
    setlimit("RLIMIT_CPU", limits["cpu_seconds"], limits["cpu_seconds"] + 5)
    setlimit("RLIMIT_FSIZE", limits["file_mb"] * mib)
    setlimit("RLIMIT_NOFILE", limits["open_files"])
    setlimit("RLIMIT_CORE", 0)
    if os.geteuid() == 0 or os.environ.get(f"{ENV_PREFIX}_NPROC_LIMIT_SELF"):
        # Per real user: only meaningful for the sandbox user, not for an
        # instructor's own account running the degraded mode.
        setlimit("RLIMIT_NPROC", limits["processes"])


def _seal(spec: dict):
    """Once the program has created its sockets, the shared directories become read-only to it."""
    for _, path in spec["share"]:     # the supervisor runs inside the new root
        try:
            os.chown(path, 0, 0)
            os.chmod(path, 0o755)
        except OSError:
            pass


def supervise(spec: dict, pid: int, forward_interrupts: bool = False):
    """PID 1: seal, reap, enforce the wall clock, exit with the program's status.

    An interrupt reaches the program from its process group; a zygote's program
    (:func:`zygote_child`) is in no group of its launcher's, and gets it from here.
    """
    if forward_interrupts:
        signal.signal(signal.SIGINT, lambda signum, frame: os.kill(pid, signal.SIGINT))
    else:
        signal.signal(signal.SIGINT, signal.SIG_IGN)   # interrupts are for the program
    wall = spec["limits"]["wall_seconds"]
    deadline = time.monotonic() + wall if wall else None
    unsealed = bool(spec["share"])
    seal_by = time.monotonic() + 60
    while True:
        now = time.monotonic()
        if unsealed and (now > seal_by or all(os.path.exists(p) for p in spec["seal"])):
            _seal(spec)
            unsealed = False
        if deadline is not None and now > deadline:
            os.kill(pid, signal.SIGKILL)
            sys.stderr.write(f"sandbox: wall-clock limit of {wall} s reached, program killed\n")
            os._exit(137)
        try:
            done, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            os._exit(1)
        if done == pid:
            os._exit(os.waitstatus_to_exitcode(status) if status else 0)
        if done == 0:
            time.sleep(0.02 if unsealed else 0.05)


# Kernel facilities outside the file system that no namespace of the sandbox covers: the
# keyrings (add_key, request_key, keyctl) are per user id, so a key one submission stored could
# be read by the next one graded under the same uid.  A seccomp filter makes them fail (EPERM).
_SECCOMP_ARCHES = {  # machine: (AUDIT_ARCH_*, [add_key, request_key, keyctl])
    "x86_64": (0xC000003E, [248, 249, 250]),
    "aarch64": (0xC00000B7, [217, 218, 219]),
}
PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 22, 2


def seccomp_available() -> bool:
    return sys.platform.startswith("linux") and os.uname().machine in _SECCOMP_ARCHES


def _deny_kernel_facilities():
    """Install the seccomp filter (after no_new_privs, before exec; inherited by every child)."""
    if not seccomp_available():
        return
    arch, denied = _SECCOMP_ARCHES[os.uname().machine]
    ld_abs, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06        # BPF_LD|W|ABS, JMP|JEQ|K, JMP|JGE|K, RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1              # SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO | EPERM
    program = [(ld_abs, 0, 0, 4),                          # the audit architecture
               (jeq, 1, 0, arch),
               (ret, 0, 0, deny),                          # another ABI (e.g. 32-bit calls): refused
               (ld_abs, 0, 0, 0),                          # the system call's number
               (jge, len(denied) + 1, 0, 0x40000000)]      # x32 numbers: refused
    for number in denied:
        program.append((jeq, len(denied) - len(program) + 5, 0, number))
    program += [(ret, 0, 0, allow), (ret, 0, 0, deny)]

    class Filter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                    ("k", ctypes.c_uint)]

    class Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Filter))]

    filters = (Filter * len(program))(*[Filter(*instruction) for instruction in program])
    fprog = Program(len(program), filters)
    if _c().prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "could not install the seccomp filter")


def _only_standard_streams(quiet: bool) -> int:
    """Leave the program nothing of the grader's but stdin, stdout and stderr; returns a copy of stderr.

    A grading worker's open files (its log, the gradebook, pipes) must not
    reach student code.  A kernel (``quiet``) gets /dev/null for stdout and
    stderr, which a worker points at its log: the kernel's outputs travel
    over ZeroMQ.  The returned descriptor (closed on exec) is for reporting a
    failed exec.
    """
    report = os.dup(2)                    # non-inheritable (PEP 446): gone after exec
    if quiet:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)
        os.close(null)
    try:
        inherited = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:                       # no /proc (not Linux): the usual range
        inherited = range(3, 4096)
    for fd in inherited:
        if fd > 2 and fd != report:
            try:
                os.close(fd)
            except OSError:
                pass
    return report


def become_the_program(spec: dict) -> int:
    """Root, in the program's namespaces and view, becomes what the program runs as: its limits, its
    unprivileged user without groups, no new privileges, the seccomp filter, nothing of the grader's
    open but the standard streams.  Returns a copy of stderr (closed on exec) for reporting a failure."""
    apply_limits(spec["limits"], in_memory_files_mb=spec["limits"]["tmp_mb"])
    uid = spec["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _deny_kernel_facilities()
    return _only_standard_streams(spec.get("quiet"))


def run_inside(spec: dict):
    build_view(spec)
    os.chroot(NEWROOT)
    os.chdir(INSIDE_WORKDIR)
    env = child_env(spec)
    pid = os.fork()
    if pid == 0:
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            report = become_the_program(spec)
            os.execve(spec["argv"][0], spec["argv"], env)
        except BaseException as error:  # noqa: BLE001 - report and die, never continue as root
            message = f"sandbox: could not start {spec['argv'][0]}: {error}\n".encode()
            os.write(locals().get("report", 2), message)
        os._exit(127)
    supervise(spec, pid)


def run_limits_only(spec: dict):
    signal.signal(signal.SIGINT, signal.SIG_IGN)       # interrupts are for the program
    sys.stderr.write("WARNING " + describe() + "\n")
    sys.stderr.flush()
    wall = spec["limits"]["wall_seconds"]
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.chdir(spec["workdir"])
        apply_limits(spec["limits"])
        _only_standard_streams(spec.get("quiet"))
        env = {**os.environ, **{k: v for k, v in child_env(spec).items()
                                if k.endswith("_THREADS") or k in ("MALLOC_ARENA_MAX", f"{ENV_PREFIX}_INSIDE")}}
        env.pop("JPY_PARENT_PID", None)
        os.execve(spec["argv"][0], spec["argv"], env)
    if not wall:
        os._exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    deadline = time.monotonic() + wall
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            os._exit(os.waitstatus_to_exitcode(status))
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    sys.stderr.write(f"sandbox: wall-clock limit of {wall} s reached, program killed\n")
    os._exit(137)


# ---------------------------------------------------------------------------
# A warm start: one zygote per grading worker
# ---------------------------------------------------------------------------
#
# Starting a program in the sandbox costs little; starting Python in it and
# importing ipykernel, IPython and NumPy costs about half a second of CPU, twice
# per submission (the kernel, then the re-check's process).  A zygote does that
# once per worker and forks every program from it, each into namespaces, a
# working folder, /tmp and a user of its own, as the programs above:
#
#   worker ── launcher (``sandbox.py attach``: the process jupyter_client or the
#      │       re-check holds; its stdin, stdout and stderr become the program's)
#      │          │ Unix socket
#   unshare ── O (``sandbox.py zygote``, root, host paths): builds the view once;
#                │ per program, in a new mount namespace, that program's /tmp,
#                │ working folder, shared folders and forbidden modules
#                └─ Z (``/.zygote/sandbox.py zygote-serve``, root, chrooted,
#                     inside paths only, modules imported, never runs a
#                     student's code)
#                     └─ C (per program: enters the mount namespace O made,
#                          new PID, network, IPC and UTS namespaces; relays
#                          the launcher's interrupts and the exit status)
#                          └─ PID 1 (mounts /proc, supervises: wall clock, seal)
#                               └─ the program: limits, unprivileged user,
#                                  seccomp, then ``python -m``/``-c`` run in the
#                                  warm interpreter
#
# Z holds nothing of the host's (it was started with inside paths only), so
# neither does a program forked from it.  Every program is a copy of Z as Z was
# before any program ran: nothing passes from one program to the next.
# Programs the zygote cannot run exactly as the process above would (another
# interpreter, a forbidden module the zygote has imported, a file outside /tmp
# or the working folder) start as above, from the launcher.

ZYGOTE_ENV = f"{ENV_PREFIX}_ZYGOTE"   # the address (a Unix socket) of this worker's zygote
INSIDE_ZYGOTE = "/.zygote"             # the zygote's copy of this file, in the view (root only)
#: imported by the zygote: what a kernel and the re-check's process import before any cell runs
PRELOAD = ("numpy", "IPython", "IPython.core.interactiveshell", "IPython.extensions", "ipykernel.kernelapp",
           "ipykernel.ipkernel", "ipykernel.zmqshell", "ipykernel.iostream", "ipykernel.debugger",
           "jupyter_client.session", "tornado.queues", "sqlite3",
           # what a kernel's start-up imports after the above (ipykernel 6, IPython 8)
           "IPython.core.completerlib", "IPython.core.debugger", "IPython.core.oinspect",
           "IPython.extensions.storemagic", "IPython.utils.wildcard", "pdb", "faulthandler",
           "tornado.platform.asyncio")
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWPID, CLONE_NEWNET = 0x20000000, 0x40000000
_MESSAGE = 1 << 20       # the longest message between the zygote's processes (a spec with a program's source)


def _python_program(argv: list[str]):
    """``(kind, target, rest, isolated)`` for ``python [-I] [-s] (-m module | -c source) args``, else None.

    Only the options the zygote's fork reproduces: ``-I`` (no current folder on the path, no
    user site, no ``PYTHON*`` variables: :func:`run_python`) and ``-s`` (the zygote runs
    without a user site).  Others (``-S``: no site, which the zygote has; ``-u``, ``-B``,
    ``-E``, ``-X``...) change how an interpreter starts, so such a program starts from scratch."""
    args, isolated = list(argv[1:]), False
    while args and args[0] in ("-I", "-s"):
        isolated = isolated or args[0] == "-I"
        args = args[1:]
    if len(args) >= 2 and args[0] in ("-m", "-c"):
        return args[0], args[1], args[2:], isolated
    return None


def zygote_refuses(spec: dict, zygote: dict | None = None) -> str:
    """Why a zygote cannot run this program as :func:`run_inside` would; '' when it can.

    ``zygote``: the zygote's own spec and the top-level modules it has imported (known to the
    zygote; the launcher asks the part it knows without them).
    """
    if _python_program(spec["argv"]) is None:
        return "not a python -m or -c program"
    if any(os.path.realpath(p).startswith("/tmp/") for p in spec["python"]):
        return "the interpreter lives under /tmp, where each program's own /tmp is mounted"
    if any(inside != INSIDE_IPC for _, inside in spec["share"]):
        return "a shared folder other than the kernel's sockets"
    if any(not (path.startswith("/tmp/") or path.startswith(INSIDE_WORKDIR + "/")) for path in spec["files"]):
        return "a file outside /tmp and the working folder"
    if zygote is not None:
        base, imported = zygote["spec"], set(zygote["imported"])
        for key in ("python", "venv", "hide"):
            if spec.get(key) != base.get(key):
                return f"another interpreter ({key})"
        if spec["argv"][0] != base["argv"][0]:
            return "another interpreter"
        clash = sorted(name for name in spec["forbid"] if name.split(".")[0] in imported)
        if clash:
            return "forbidden modules the zygote has imported: " + ", ".join(clash)
    return ""


class Zygote:
    """A grading worker's zygote (see above): started by :meth:`start`, used by every :func:`command`
    of this process and its children while ``$ATTENTION_SANDBOX_ZYGOTE`` names it."""

    def __init__(self, process, folder: str):
        self.process, self.folder = process, folder
        self.address = os.path.join(folder, "socket")

    @classmethod
    def start(cls, slot: int | None = None, timeout: float = 120.0):
        """The zygote, ready; None (and the reason on stderr) where there is none to have.

        Only with full isolation: degraded, each program runs with limits only, as before.
        """
        import socket
        import subprocess
        import tempfile

        if os.environ.get(ZYGOTE_ENV) == "off" or mode() == "off" or missing_facilities():
            return None
        spec = _spec([sys.executable, "-c", "pass"], "/", slot=slot, quiet=True)
        _inside_paths(spec)
        reason = zygote_refuses(spec)
        if reason:
            sys.stderr.write(f"sandbox: no zygote ({reason}); every program starts from scratch\n")
            return None
        folder = tempfile.mkdtemp(prefix="sandbox-zygote-")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(os.path.join(folder, "socket"))
        listener.listen(64)
        command_line = [*NEW_NAMESPACES, *self_command("zygote", str(listener.fileno()), json.dumps(spec))]
        process = subprocess.Popen(command_line, pass_fds=[listener.fileno()], stdout=subprocess.PIPE,
                                   preexec_fn=lambda: _prctl(PR_SET_PDEATHSIG, signal.SIGKILL))
        listener.close()
        zygote = cls(process, folder)
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            ready = selector.select(timeout) and process.stdout.readline().strip() == b"ready"
        if not ready:
            zygote.close()
            sys.stderr.write("sandbox: the zygote did not start; every program starts from scratch\n")
            return None
        os.environ[ZYGOTE_ENV] = zygote.address
        return zygote

    def close(self):
        if os.environ.get(ZYGOTE_ENV) == self.address:
            del os.environ[ZYGOTE_ENV]
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.process.stdout.close()
        shutil.rmtree(self.folder, ignore_errors=True)


def _syscall(name: str, *args):
    if getattr(_c(), name)(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{name}: {os.strerror(err)}")


def zygote_main(listen_fd: int, spec: dict):
    """O: build the view once, start Z in it, then prepare each program's mount namespace."""
    import socket

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    listener = socket.socket(fileno=listen_fd)
    _build_installation(spec, _scratch(16, spec["uid"]))
    for inside in (INSIDE_IPC, INSIDE_WORKDIR):
        _folders(_inside(inside))
    code = _inside(INSIDE_ZYGOTE)
    os.mkdir(code, 0o700)
    shutil.copyfile(os.path.abspath(__file__), os.path.join(code, "sandbox.py"))
    _mount(None, NEWROOT, None, MS_REMOUNT | MS_RDONLY | MS_NOSUID)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    python = spec["argv"][0]
    pid = os.fork()
    if pid == 0:
        ours.close()
        os.chroot(NEWROOT)
        os.chdir("/")
        os.set_inheritable(theirs.fileno(), True)
        os.execve(python, [python, "-s", f"{INSIDE_ZYGOTE}/sandbox.py", "zygote-serve", str(theirs.fileno())],
                  child_env(spec))
    theirs.close()
    hello = ours.recv(_MESSAGE)
    if not hello:
        raise SystemExit("sandbox: the zygote's interpreter did not start")
    zygote = {"spec": spec, "imported": json.loads(hello)}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    own_namespace = os.open("/proc/self/ns/mnt", os.O_RDONLY)
    while True:
        connection, _ = listener.accept()
        try:
            _zygote_prepare(connection, ours, zygote, own_namespace)
        except Exception as error:   # noqa: BLE001 - that program falls back; the zygote goes on
            sys.stderr.write(f"sandbox: zygote: {error}\n")
            try:
                connection.send(b"fallback")
            except OSError:
                pass
        finally:
            connection.close()


def _zygote_prepare(connection, zygote_socket, zygote: dict, own_namespace: int):
    """O, for one program: its mount namespace (this file's view, with its own /tmp, working folder,
    shared folders and forbidden modules), handed to Z with the launcher's streams and socket."""
    import socket

    message, fds, _, _ = socket.recv_fds(connection, _MESSAGE, 3)
    try:
        spec = json.loads(message)
        reason = zygote_refuses(spec, zygote)
        if reason or len(fds) != 3:
            connection.send(b"fallback")
            return
        uid = spec["uid"]
        _syscall("unshare", CLONE_NEWNS)
        try:
            scratch = _scratch(spec["limits"]["tmp_mb"], uid)
            _mount(os.path.join(scratch, "tmp"), _inside("/tmp"), None, MS_BIND)
            _mount(os.path.join(scratch, "shm"), _inside("/dev/shm"), None, MS_BIND)
            _home(scratch, uid)
            _forbid_modules(spec, stubs=scratch)
            _build_submission(spec, scratch)
            namespace = os.open("/proc/self/ns/mnt", os.O_RDONLY)
        finally:
            _syscall("setns", own_namespace, CLONE_NEWNS)
        # Z learns nothing of the host: only what the program sees.
        inside = {"argv": spec["argv"], "limits": spec["limits"], "uid": uid, "quiet": spec["quiet"],
                  "seal": spec["seal"], "share": [["", path] for _, path in spec["share"]]}
        try:
            socket.send_fds(zygote_socket, [json.dumps(inside).encode()], [namespace, *fds, connection.fileno()])
        finally:
            os.close(namespace)
        connection.send(b"started")
    finally:
        for fd in fds:
            os.close(fd)


def zygote_serve(fd: int):
    """Z: import what every program imports, then fork one child per program (:func:`zygote_child`)."""
    import importlib
    import socket
    import threading

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if p != here]
    channel = socket.socket(fileno=fd)
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:   # noqa: BLE001 - not installed in this interpreter: imported by the program
            pass
    tasks = os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["1"]
    if threading.active_count() != 1 or len(tasks) != 1:
        raise SystemExit("sandbox: the zygote has threads after its imports; it cannot fork safely")
    channel.send(json.dumps(sorted({name.split(".")[0] for name in sys.modules})).encode())
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)     # the children reap themselves
    while True:
        message, fds, _, _ = socket.recv_fds(channel, _MESSAGE, 5)
        if not message:
            os._exit(0)                               # O has gone
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            channel.close()
            try:
                zygote_child(json.loads(message), fds)
            finally:
                os._exit(127)
        for descriptor in fds:
            os.close(descriptor)


def zygote_child(spec: dict, fds: list[int]):
    """C: the program's namespaces; relays the launcher's interrupts and the program's exit status."""
    import select
    import socket

    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    namespace, stdin, stdout, stderr, control = fds
    _syscall("setns", namespace, CLONE_NEWNS)
    os.close(namespace)
    os.chroot(NEWROOT)
    os.chdir(INSIDE_WORKDIR)
    _syscall("unshare", CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
    init = os.fork()
    if init == 0:
        os.close(control)
        try:
            _zygote_init(spec, stdin, stdout, stderr)
        finally:
            os._exit(127)
    for descriptor in (stdin, stdout, stderr):
        os.close(descriptor)
    launcher = socket.socket(fileno=control)
    watched = [launcher]
    gone = os.pidfd_open(init) if hasattr(os, "pidfd_open") else None
    while True:
        ready, _, _ = select.select(watched + ([gone] if gone is not None else []), [], [],
                                    None if gone is not None else 0.02)
        done, status = os.waitpid(init, os.WNOHANG)
        if done:
            try:
                launcher.send(f"exit {os.waitstatus_to_exitcode(status)}".encode())
            except OSError:
                pass
            os._exit(0)
        if launcher in ready:
            request = launcher.recv(64)
            if request == b"INT":
                os.kill(init, signal.SIGINT)
            else:                                     # the launcher was killed or asks so
                os.kill(init, signal.SIGKILL)
                watched = []


def _zygote_init(spec: dict, stdin: int, stdout: int, stderr: int):
    """PID 1 of the program's namespace: its /proc, then the program, supervised."""
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")
    for descriptor, standard in ((stdin, 0), (stdout, 1), (stderr, 2)):   # the launcher's
        os.dup2(descriptor, standard)
        os.close(descriptor)
    pid = os.fork()
    if pid == 0:
        try:
            _zygote_program(spec)
        except BaseException as error:  # noqa: BLE001 - report and die, never continue as root
            os.write(2, f"sandbox: could not start the program: {error!r}\n".encode())
        os._exit(127)
    supervise(spec, pid, forward_interrupts=True)


def _zygote_program(spec: dict):
    """The program: the same limits, user and filter as :func:`run_inside`'s, then its Python code."""
    for signum in (signal.SIGCHLD, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.close(become_the_program(spec))
    os.environ.clear()
    os.environ.update(child_env(spec))
    run_python(spec["argv"])


def run_python(argv: list[str]):
    """Run ``python [-I] (-m module | -c source) args`` in this interpreter, as that command would,
    and exit with its status."""
    import atexit
    import builtins
    import runpy
    import types

    kind, target, rest, isolated = _python_program(argv)
    if "numpy.random" in sys.modules:      # a fresh interpreter's NumPy draws its own seed
        sys.modules["numpy.random"].seed()
    sys.orig_argv = list(argv)
    status = 0
    try:
        if kind == "-m":
            if not isolated:
                sys.path.insert(0, os.getcwd())
            sys.argv = [target, *rest]
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            if not isolated:
                sys.path.insert(0, "")
            sys.argv = ["-c", *rest]
            main = types.ModuleType("__main__")
            main.__builtins__ = builtins
            sys.modules["__main__"] = main
            exec(compile(target, "<string>", "exec"), main.__dict__)
    except SystemExit as exit_:
        if exit_.code is None or isinstance(exit_.code, int):
            status = exit_.code or 0
        else:
            print(exit_.code, file=sys.stderr)
            status = 1
    except BaseException:   # noqa: BLE001 - as the interpreter does: the traceback, status 1
        sys.excepthook(*sys.exc_info())
        status = 1
    try:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def attach_main(address: str, spec_text: str):
    """The launcher: hands its streams to the zygote at ``address`` and stands for the program (its
    exit status; an interrupt sent to it reaches the program; killed, it takes the program with it).
    Where the zygote cannot run the program, it runs as :func:`command` would run it without one."""
    import socket

    spec = json.loads(spec_text)
    channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        channel.connect(address)
        socket.send_fds(channel, [spec_text.encode()], [0, 1, 2])
        answer = channel.recv(64)
    except OSError:
        answer = b""
    if answer != b"started":
        channel.close()
        cmd = _isolated_command(spec)
        os.execvp(cmd[0], cmd)

    def interrupt(signum, frame):
        try:
            channel.send(b"INT" if signum == signal.SIGINT else b"KILL")
        except OSError:
            pass

    signal.signal(signal.SIGINT, interrupt)
    signal.signal(signal.SIGTERM, interrupt)
    while True:
        message = channel.recv(64)
        if message.startswith(b"exit "):
            status = int(message.split()[1])
            os._exit(status if status >= 0 else 128 - status)
        if not message:
            os._exit(1)


class AttachedProgram:
    """A program the zygote runs for this very process, with no launcher between: what the grader
    uses of :class:`subprocess.Popen` (``stdin``, ``stdout``, ``poll``, ``wait``, ``send_signal``,
    ``kill``), over the zygote's channel.  Its exit status is the launcher's (:func:`attach_main`);
    closing the channel, or this process dying, kills the program."""

    def __init__(self, channel, stdin, stdout):
        self.channel, self.stdin, self.stdout = channel, stdin, stdout
        self.stderr = None          # the descriptor given to start(), not a pipe of this process's
        self.returncode = None

    @classmethod
    def start(cls, command_line: list[str], stderr: int):
        """The program of ``command_line`` (:func:`command`'s) started by the zygote, its stdin and
        stdout pipes to this process and its stderr to ``stderr``; None if ``command_line`` does not
        attach to a zygote or the zygote will not run it (then run ``command_line`` as it is)."""
        import socket

        if len(command_line) < 3 or command_line[-3] != "attach":
            return None
        address, spec_text = command_line[-2], command_line[-1]
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        channel = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            channel.connect(address)
            socket.send_fds(channel, [spec_text.encode()], [stdin_read, stdout_write, stderr])
            answer = channel.recv(64)
        except OSError:
            answer = b""
        finally:
            os.close(stdin_read)       # the program's ends, now the program's alone
            os.close(stdout_write)
        if answer != b"started":
            channel.close()
            os.close(stdin_write)
            os.close(stdout_read)
            return None
        return cls(channel, open(stdin_write, "wb", buffering=0), open(stdout_read, "rb", buffering=0))

    def _ended(self, message: bytes):
        if message.startswith(b"exit "):
            status = int(message.split()[1])
            self.returncode = status if status >= 0 else 128 - status    # as the launcher exits
        else:
            self.returncode = 1                                           # the channel broke
        self.channel.close()

    def poll(self):
        import socket

        if self.returncode is None:
            try:
                message = self.channel.recv(64, socket.MSG_DONTWAIT)
            except BlockingIOError:
                return None
            except OSError:
                message = b""
            self._ended(message)
        return self.returncode

    def wait(self, timeout: float | None = None):
        import subprocess

        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise subprocess.TimeoutExpired("attached program", timeout)
            with selectors.DefaultSelector() as selector:
                selector.register(self.channel, selectors.EVENT_READ)
                selector.select(remaining)
        return self.returncode

    def send_signal(self, signum: int):
        """SIGINT reaches the program; any other signal kills it (and everything it started)."""
        if self.returncode is None:
            try:
                self.channel.send(b"INT" if signum == signal.SIGINT else b"KILL")
            except OSError:
                pass

    def kill(self):
        self.send_signal(signal.SIGKILL)


# ---------------------------------------------------------------------------
# The grading kernel
# ---------------------------------------------------------------------------

def kernel_command(connection_file: str, extra: list[str] = (), env: dict | None = None,
                   workdir: str | None = None) -> list[str]:
    """The command line that runs the IPython kernel of ``connection_file`` in the sandbox, in
    ``workdir`` (default: the current folder), with the limits and forbidden modules that ``env``
    (the kernel's environment; default this process's) names."""
    env = os.environ if env is None else env
    workdir = workdir or os.getcwd()
    with open(connection_file) as f:
        info = json.load(f)
    limits = {key: int(float(env[f"{ENV_PREFIX}_{key.upper()}"])) for key in _default_limits().SANDBOX
              if env.get(f"{ENV_PREFIX}_{key.upper()}")}
    forbid = forbidden_from_env(env)
    inside_connection = "/tmp/.kernel-connection.json"
    share, seal, inside_info = [], [], dict(info)
    if info.get("transport") == "ipc":
        # The sockets' folder appears inside as /run/kernel: the host's path stays outside.
        prefix = info["ip"]
        inside_info["ip"] = f"{INSIDE_IPC}/{os.path.basename(prefix)}"
        share = [(os.path.dirname(prefix), INSIDE_IPC)]
        seal = [f"{inside_info['ip']}-{info[key]}" for key in
                ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")]
    elif mode() != "off" and not missing_facilities():
        raise SystemExit("sandbox: the kernel must use ZeroMQ's ipc transport (TCP cannot cross "
                         "the network namespace); use course_grader.preprocessors.BoundedExecute")
    isolated = mode() != "off" and not missing_facilities()
    if isolated:
        argv = [sys.executable, "-m", "ipykernel_launcher", "-f", inside_connection, *extra]
        return command(argv, workdir, share=share, seal=seal, quiet=True, limits=limits,
                       files={inside_connection: json.dumps(inside_info)}, forbid=forbid)
    # degraded: the kernel reads the real connection file
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", connection_file, *extra]
    return command(argv, workdir, quiet=True, limits=limits)


def kernel_main(connection_file: str, extra: list[str]):
    """Started by jupyter_client (as root): the IPython kernel, sandboxed.  (A grading worker with
    a zygote starts it without this process: ``BoundedExecute``'s kernel provisioner.)"""
    cmd = kernel_command(connection_file, extra)
    # If whatever started us dies, so does the sandbox (and with it every process inside).
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if cmd[-3] == "attach":     # this process is the launcher: no second interpreter to start
        attach_main(cmd[-2], cmd[-1])
    os.execvp(cmd[0], cmd)


def main(args: list[str]):
    if not args:
        raise SystemExit(__doc__)
    if args[0] == "kernel":
        kernel_main(args[1], args[2:])
    elif args[0] == "inside":
        run_inside(json.loads(args[1]))
    elif args[0] == "attach":
        attach_main(args[1], args[2])
    elif args[0] == "zygote":
        zygote_main(int(args[1]), json.loads(args[2]))
    elif args[0] == "zygote-serve":
        zygote_serve(int(args[1]))
    elif args[0] == "limits-only":
        run_limits_only(json.loads(args[1]))
    elif args[0] == "facts":   # asked by another interpreter's grader: see interpreter_facts
        print(json.dumps(own_facts(json.loads(args[1]) if len(args) > 1 else [])))
    elif args[0] == "describe":
        print(describe())
    elif args[0] == "run":  # python sandbox.py run WORKDIR -- CMD...: for trying it out
        workdir, argv = args[1], args[args.index("--") + 1:]
        argv[0] = shutil.which(argv[0]) or argv[0]
        cmd = command(argv, workdir)
        os.execvp(cmd[0], cmd)
    else:
        raise SystemExit(f"unknown mode {args[0]!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
