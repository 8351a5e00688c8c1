"""A real Slurm cluster of one node, this machine, started for a test and stopped after it.

Debian's ``slurmctld``, ``slurmd`` and ``munge`` (``make test`` installs them where it may,
``scripts/ensure_slurm.sh``), run as root, with every file, socket and port of their own in a
temporary folder: nothing of the machine's own configuration is read or changed.  Client commands
(``sbatch``, ``squeue``, ``scontrol``) find the cluster through ``SLURM_CONF``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

DAEMONS = {"munged": "/usr/sbin/munged", "slurmctld": "/usr/sbin/slurmctld", "slurmd": "/usr/sbin/slurmd"}
CLIENTS = ("sbatch", "squeue", "scontrol", "sinfo")


def missing() -> list[str]:
    """The programs a local cluster needs that this machine lacks."""
    return ([name for name, path in DAEMONS.items() if not (shutil.which(name) or os.path.exists(path))]
            + [name for name in CLIENTS if not shutil.which(name)])


def _daemon(name: str) -> str:
    return shutil.which(name) or DAEMONS[name]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _config(folder: Path, node: str, cpus: int) -> str:
    ctld, slurmd = _free_port(), _free_port()
    return "\n".join([
        "ClusterName=grading",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={ctld}",
        f"SlurmdPort={slurmd}",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={folder}/munge.socket",
        "SlurmUser=root",
        "SlurmdUser=root",
        f"StateSaveLocation={folder}/state",
        f"SlurmdSpoolDir={folder}/spool",
        f"SlurmctldPidFile={folder}/slurmctld.pid",
        f"SlurmdPidFile={folder}/slurmd.pid",
        f"SlurmctldLogFile={folder}/slurmctld.log",
        f"SlurmdLogFile={folder}/slurmd.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "MpiDefault=none",
        "SwitchType=switch/none",
        "ReturnToService=2",
        "JobCompType=jobcomp/none",
        "MinJobAge=3600",           # finished jobs stay visible to scontrol while the test reads them
        f"NodeName={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
        "PartitionName=grading Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ])


@contextmanager
def local_slurm(folder: Path, cpus: int = 2, timeout: float = 60):
    """Start munge, slurmctld and slurmd in ``folder``; yields the environment for Slurm's client commands."""
    for sub in ("state", "spool"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    key = folder / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    node = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(_config(folder, node, cpus))
    env = dict(os.environ, SLURM_CONF=str(conf))
    started = []
    try:
        subprocess.run([_daemon("munged"), "--force", f"--key-file={key}", f"--socket={folder}/munge.socket",
                        f"--pid-file={folder}/munged.pid", f"--log-file={folder}/munged.log",
                        f"--seed-file={folder}/munged.seed"], check=True, capture_output=True, text=True)
        started.append(folder / "munged.pid")
        for name in ("slurmctld", "slurmd"):
            subprocess.run([_daemon(name), "-f", str(conf)] + (["-N", node] if name == "slurmd" else []),
                           check=True, capture_output=True, text=True, env=env)
            started.append(folder / f"{name}.pid")
        deadline = time.monotonic() + timeout
        while _node_state(env) not in ("idle", "mixed", "allocated"):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the local Slurm node did not come up in {timeout:.0f} s:\n"
                                   + _tail(folder / "slurmctld.log") + _tail(folder / "slurmd.log"))
            time.sleep(0.5)
        yield env
    finally:
        for pid_file in reversed(started):
            _stop(pid_file)


def _node_state(env) -> str:
    done = subprocess.run(["sinfo", "--noheader", "--format=%T"], capture_output=True, text=True, env=env)
    return done.stdout.strip().rstrip("*~#") if done.returncode == 0 else ""


def _tail(path: Path, lines: int = 20) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n" if path.exists() else ""


def _stop(pid_file: Path, timeout: float = 20):
    try:
        pid = int(pid_file.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return
    try:
        os.kill(pid, 15)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            os.kill(pid, 0)
            time.sleep(0.2)
        os.kill(pid, 9)
    except ProcessLookupError:
        pass


def job_states(job: str, env) -> list[str]:
    """The state of every task of ``job`` (one for a plain job): ``COMPLETED``, ``FAILED``, ``PENDING`` ..."""
    shown = subprocess.run(["scontrol", "show", "job", job], capture_output=True, text=True, env=env).stdout
    return re.findall(r"JobState=(\w+)", shown)


ACTIVE = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"}


def wait_for(job: str, env, timeout: float) -> list[str]:
    """Wait until every task of ``job`` has ended; their final states."""
    deadline = time.monotonic() + timeout
    while not (states := job_states(job, env)) or ACTIVE & set(states):
        if time.monotonic() > deadline:
            subprocess.run(["scancel", job], env=env, capture_output=True)
            raise TimeoutError(f"Slurm job {job} not finished after {timeout:.0f} s: {states}")
        time.sleep(1)
    return states
