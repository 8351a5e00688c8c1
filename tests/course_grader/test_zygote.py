"""The sandbox's zygote: programs forked from a warm interpreter, each as isolated as one started from
scratch, and nothing passing from one to the next.

(Every test of tests/course_grader/test_sandbox.py also runs with programs forked from a zygote; the
grading workers start theirs, so every grading test goes through one.)
"""

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import psutil
import pytest
from event_loops import run_coroutine

from course_grader import sandbox

pytestmark = pytest.mark.skipif(bool(sandbox.missing_facilities()),
                                reason="a zygote needs full isolation (Linux, root, unshare)")

SLOT = 7     # a uid of its own: no other test's programs run under it


@pytest.fixture(scope="module")
def zygote():
    started = sandbox.Zygote.start(SLOT)
    assert started is not None
    yield started
    started.close()


@pytest.fixture
def workdir(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "data.txt").write_text("released data")
    return folder


def launch(code, workdir, **options):
    return subprocess.Popen(sandbox.command([sys.executable, "-I", "-c", code], str(workdir), slot=SLOT, **options),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def run(code, workdir, **options):
    process = launch(code, workdir, **options)
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def programs_of_the_slot():
    return [p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real == sandbox.sandbox_uid(SLOT)]


def test_the_program_is_forked_from_the_zygote(zygote, workdir):
    """A warm interpreter: what a kernel imports is there before the program imports anything; and
    the program is a Python program as ``python -I -c`` would run it."""
    status, out, err = run("import sys, json; print(json.dumps([sorted(m for m in ('ipykernel', 'IPython', 'numpy') "
                           "if m in sys.modules), sys.argv, __name__, sys.flags.isolated]))", workdir)
    assert status == 0, err
    assert json.loads(out) == [["IPython", "ipykernel", "numpy"], ["-c"], "__main__", 0]


PLANT = r"""
import builtins, os, random, subprocess, sys, types, numpy
for path in ("/tmp/planted", "/tmp/home/planted", "planted", "/dev/shm/planted"):
    open(path, "w").write("from the first student")
os.environ["PLANTED"] = "1"
numpy.pi = 3.0
sys.modules["planted"] = types.ModuleType("planted")
builtins.planted = True
subprocess.Popen(["sleep", "600"], start_new_session=True)
print(random.random(), numpy.random.random(), os.getpid())
"""

CHECK = r"""
import builtins, os, random, sys, numpy, json
print(json.dumps({
    "files": [p for p in ("/tmp/planted", "/tmp/home/planted", "planted", "/dev/shm/planted") if os.path.exists(p)],
    "environ": "PLANTED" in os.environ, "pi": numpy.pi, "module": "planted" in sys.modules,
    "builtin": hasattr(builtins, "planted"),
    "processes": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "draws": [random.random(), numpy.random.random()], "pid": os.getpid(), "uid": os.getuid(),
    "own_file": open("data.txt").read()}))
"""


def test_nothing_passes_from_one_program_to_the_next(zygote, workdir):
    status, out, err = run(PLANT, workdir)
    assert status == 0, err
    first_draws = [float(x) for x in out.split()[:2]]
    status, out, err = run(CHECK, workdir)
    assert status == 0, err
    seen = json.loads(out)
    assert seen["files"] == [] and not seen["environ"] and not seen["module"] and not seen["builtin"]
    assert seen["pi"] == pytest.approx(3.141592653589793)
    assert seen["processes"] == [seen["pid"]]                 # the first one's sleeper died with it
    assert seen["uid"] == sandbox.sandbox_uid(SLOT) and seen["own_file"] == "released data"
    # a fresh interpreter draws its own seeds: so does each forked program
    assert seen["draws"][0] != first_draws[0] and seen["draws"][1] != first_draws[1]
    assert not [p for p in programs_of_the_slot() if "sleep" in (p.name() or "")]


def test_the_program_holds_nothing_of_what_the_grader_knows_about_it(zygote, workdir):
    """The zygote learns only what the program sees (the host's side of each program, its folder
    and shared folders, is prepared by another process): the submission's folder on the host
    appears nowhere in the program's memory, read from outside while it waits, as in a program
    started from scratch.  (The installation's own files name its host paths, ``pyvenv.cfg`` and
    compiled modules, in either case.)"""
    process = launch("import sys, numpy; print('ready', flush=True); sys.stdin.readline()", workdir)
    try:
        assert process.stdout.readline().strip() == "ready"
        program = next(p for p in programs_of_the_slot() if p.name().startswith("python"))
        needles = [str(workdir).encode()]
        found = []
        with open(f"/proc/{program.pid}/maps") as maps, open(f"/proc/{program.pid}/mem", "rb") as memory:
            for line in maps:
                fields = line.split()
                if "r" not in fields[1] or (len(fields) > 5 and fields[5] in ("[vvar]", "[vsyscall]")):
                    continue
                start, end = (int(x, 16) for x in fields[0].split("-"))
                try:
                    memory.seek(start)
                    chunk = memory.read(end - start)
                except OSError:
                    continue
                found += [needle for needle in needles if needle in chunk]
        assert found == []
    finally:
        process.communicate("go\n", timeout=30)


def test_the_launcher_stands_for_the_program(zygote, workdir, monkeypatch):
    """Its exit status is the program's, its streams are the program's, an interrupt sent to it
    reaches the program, and killing it kills the program."""
    process = launch("import sys; print(input().upper()); print('to stderr', file=sys.stderr); sys.exit(3)", workdir)
    out, err = process.communicate("hello\n", timeout=60)
    assert (process.returncode, out, err) == (3, "HELLO\n", "to stderr\n")

    def outcome(program):    # the exit status and the last line of stderr
        status, _, err = run(program, workdir)
        return status, err.strip().splitlines()[-1:]

    statuses = []
    for program in ("raise ValueError('uncaught')", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)",
                    "import sys; sys.exit('a message')"):
        forked = outcome(program)
        with monkeypatch.context() as scratch:      # the same program, started from scratch
            scratch.delenv(sandbox.ZYGOTE_ENV)
            assert forked == outcome(program)
        statuses.append(forked)
    assert statuses[0] == (1, ["ValueError: uncaught"]) and statuses[2] == (1, ["a message"])

    process = launch("import time\ntry:\n    print('ready', flush=True); time.sleep(60)\n"
                     "except KeyboardInterrupt:\n    print('interrupted')", workdir)
    assert process.stdout.readline().strip() == "ready"
    os.killpg(process.pid, signal.SIGINT)          # as jupyter_client interrupts a kernel
    out, _ = process.communicate(timeout=30)
    assert out.strip() == "interrupted" and process.returncode == 0

    process = launch("import time; print('ready', flush=True); time.sleep(600)", workdir)
    assert process.stdout.readline().strip() == "ready"
    assert programs_of_the_slot()
    os.killpg(process.pid, signal.SIGKILL)         # as a kernel is shut down, and a worker stopped
    process.wait(timeout=30)
    deadline = time.monotonic() + 10
    while programs_of_the_slot() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert programs_of_the_slot() == []


def test_a_program_the_zygote_cannot_run_exactly_starts_from_scratch(zygote, workdir):
    """A module the zygote has imported cannot be forbidden in a fork of it: that program starts from
    scratch, with the module forbidden; a module the zygote has not imported is forbidden in a fork;
    a program that is not Python runs as before."""
    probe = ("import sys\nwarm = 'ipykernel' in sys.modules\ntry:\n    import {name}\n    print(warm, 'imported')\n"
             "except ModuleNotFoundError as error:\n    print(warm, error)")
    status, out, err = run(probe.format(name="numpy"), workdir, forbid=["numpy"])
    assert status == 0, err
    assert out.startswith("False ") and "numpy cannot be imported while this assignment is graded" in out
    status, out, err = run(probe.format(name="json_stub_module_that_is_not_there"), workdir, forbid=["keras"])
    assert out.startswith("True "), (out, err)
    if "keras" in sandbox.module_locations(["keras"]):
        status, out, err = run(probe.format(name="keras"), workdir, forbid=["keras"])
        assert out.startswith("True ") and "keras cannot be imported" in out, (out, err)
    cmd = sandbox.command(["/bin/echo", "not python"], str(workdir), slot=SLOT)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "not python" and "attach" not in cmd    # decided without asking the zygote


def test_zygote_refuses_what_it_cannot_run_as_from_scratch():
    spec = {"argv": ["/opt/python/bin/python", "-I", "-c", "pass"], "python": ["/usr"], "share": [],
            "files": {}, "forbid": {}, "venv": None, "hide": []}
    zygote = {"spec": {**spec, "argv": ["/opt/python/bin/python"]}, "imported": ["numpy", "IPython"]}
    assert sandbox.zygote_refuses(spec, zygote) == ""
    assert sandbox.zygote_refuses({**spec, "argv": ["/bin/sh", "-c", "true"]}, zygote)
    assert sandbox.zygote_refuses({**spec, "argv": ["/opt/python/bin/python", "-I", "-s", "-m", "x"]}, zygote) == ""
    for option in ("-S", "-u", "-B", "-E", "-O", "-X"):   # options that change how an interpreter starts
        assert sandbox.zygote_refuses({**spec, "argv": ["/opt/python/bin/python", option, "-c", "pass"]}, zygote)
    assert sandbox.zygote_refuses({**spec, "argv": ["/usr/bin/python3", "-c", "pass"]}, zygote)
    assert re.search("numpy", sandbox.zygote_refuses({**spec, "forbid": {"numpy.linalg": ["/x"]}}, zygote))
    assert sandbox.zygote_refuses({**spec, "files": {"/etc/x": ""}}, zygote)
    assert sandbox.zygote_refuses({**spec, "share": [["/a", "/elsewhere"]]}, zygote)
    assert sandbox.zygote_refuses({**spec, "python": ["/tmp/pyenv"]}, zygote)


def test_off_means_every_program_starts_from_scratch(workdir, monkeypatch):
    monkeypatch.setenv(sandbox.ZYGOTE_ENV, "off")
    assert sandbox.Zygote.start(SLOT) is None
    cmd = sandbox.command([sys.executable, "-I", "-c", "import sys; print('ipykernel' in sys.modules)"],
                          str(workdir), slot=SLOT)
    assert "attach" not in cmd
    assert subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip() == "False"


def attach(code, workdir, stderr):
    cmd = sandbox.command([sys.executable, "-I", "-c", code], str(workdir), slot=SLOT)
    return sandbox.AttachedProgram.start(cmd, stderr.fileno())


def test_a_program_attached_without_a_launcher_behaves_as_its_launcher_would(zygote, workdir, tmp_path):
    """The re-check's student process is the grader's own attachment to the zygote (no launcher
    process): its pipes, exit status, interrupt and kill are those of the launched program, and
    closing the attachment kills the program."""
    with open(tmp_path / "stderr", "w+b") as stderr:
        program = attach("import sys; print(input().upper()); print('to stderr', file=sys.stderr); sys.exit(3)",
                         workdir, stderr)
        assert program is not None
        program.stdin.write(b"hello\n")
        program.stdin.close()
        assert program.stdout.read() == b"HELLO\n" and program.wait(timeout=60) == 3
        stderr.seek(0)
        assert stderr.read() == b"to stderr\n"

        for code in ("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "raise ValueError('uncaught')"):
            assert attach(code, workdir, stderr).wait(timeout=60) == run(code, workdir)[0]   # the launcher's status
        program = attach("import time\ntry:\n    print('ready', flush=True); time.sleep(60)\n"
                         "except KeyboardInterrupt:\n    print('interrupted')", workdir, stderr)
        assert program.stdout.readline() == b"ready\n" and program.poll() is None
        with pytest.raises(subprocess.TimeoutExpired):
            program.wait(timeout=0.2)
        program.send_signal(signal.SIGINT)
        assert program.stdout.readline() == b"interrupted\n" and program.wait(timeout=30) == 0

        for ending in ("kill", "close"):
            program = attach("import time; print('ready', flush=True); time.sleep(600)", workdir, stderr)
            assert program.stdout.readline() == b"ready\n" and programs_of_the_slot()
            if ending == "kill":
                program.kill()
                assert program.wait(timeout=30) != 0
            else:                                    # the grader's worker gone: its end of the channel closes
                program.channel.close()
            deadline = time.monotonic() + 10
            while programs_of_the_slot() and time.monotonic() < deadline:
                time.sleep(0.05)
            assert programs_of_the_slot() == [], ending

    cmd = sandbox.command(["/bin/echo", "not python"], str(workdir), slot=SLOT)
    assert sandbox.AttachedProgram.start(cmd, 2) is None       # no zygote for it: run the command as it is


def test_a_grading_kernel_starts_from_the_zygote_without_a_launcher(zygote, workdir, monkeypatch):
    """A worker's sandboxed kernel is the worker's own attachment to its zygote (the kernel
    provisioner of :class:`course_grader.preprocessors.bounded_execute.PromptKernelManager`): no
    launcher process; it runs as the sandbox's user, in the submission's folder; it is interrupted
    and shut down as a launched kernel is, and nothing of it is left."""
    from jupyter_client.kernelspec import KernelSpecManager

    from course_grader.preprocessors.bounded_execute import KERNELS_DIR, PromptKernelManager

    monkeypatch.setenv(f"{sandbox.ENV_PREFIX}_SLOT", str(SLOT))

    async def session(ipc_dir):
        km = PromptKernelManager(kernel_name="attention-sandbox", transport="ipc", ip=os.path.join(ipc_dir, "k"),
                                 kernel_spec_manager=KernelSpecManager(kernel_dirs=[KERNELS_DIR]))
        children = {p.pid for p in psutil.Process().children()}
        await km.start_kernel(cwd=str(workdir))
        try:
            assert isinstance(km.provisioner.process, sandbox.AttachedProgram)
            assert {p.pid for p in psutil.Process().children()} == children, "a launcher process was started"
            kc = km.client()
            kc.start_channels()
            await kc.wait_for_ready(timeout=60)
            outputs = []
            reply = await kc.execute_interactive("import os; print(os.getuid(), open('data.txt').read())",
                                                 output_hook=outputs.append, timeout=60)
            assert reply["content"]["status"] == "ok"
            assert [o["content"]["text"] for o in outputs if o["msg_type"] == "stream"] == [
                f"{sandbox.sandbox_uid(SLOT)} released data\n"]
            msg_id = kc.execute("import time; print('sleeping', flush=True); time.sleep(60)")
            while True:       # interrupted once the cell runs, however long the kernel took to start it
                message = await kc.get_iopub_msg(timeout=30)
                if message["msg_type"] == "stream" and message["parent_header"].get("msg_id") == msg_id:
                    break
            await km.interrupt_kernel()
            while True:
                reply = await kc.get_shell_msg(timeout=30)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
            assert reply["content"]["ename"] == "KeyboardInterrupt"
            assert await km.is_alive()
            kc.stop_channels()
        finally:
            await km.shutdown_kernel(now=True)
        assert not await km.is_alive()

    with tempfile.TemporaryDirectory(prefix="ipc-") as ipc_dir:
        run_coroutine(session(ipc_dir))
    deadline = time.monotonic() + 10
    while programs_of_the_slot() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert programs_of_the_slot() == []
