#!/usr/bin/env bash
# The Slurm test of `make test` (tests/deploy/test_slurm_grading.py) starts a one-node Slurm
# cluster on this machine. Find Slurm and munge; or install Debian's where this user may (root,
# with apt-get); or stop at once, with one line saying what to install.
set -uo pipefail
have() {
    for program in sbatch squeue scontrol sinfo; do command -v "$program" >/dev/null 2>&1 || return 1; done
    for daemon in munged slurmctld slurmd; do
        # daemons live in sbin, often off an ordinary user's PATH
        command -v "$daemon" >/dev/null 2>&1 || [ -x "${SBIN:-/usr/sbin}/$daemon" ] || return 1
    done
}
have && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "make test: installing Debian's Slurm and munge for the cluster test (tests/deploy/)"
    export DEBIAN_FRONTEND=noninteractive
    if apt-get update -qq && apt-get install -y -qq slurmctld slurmd slurm-client munge >/dev/null && have; then
        exit 0
    fi
fi
echo "make test needs Slurm and munge for its cluster test, run as root: install them (Debian/Ubuntu: apt-get install slurmctld slurmd slurm-client munge)" >&2
exit 1
