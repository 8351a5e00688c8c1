"""The grading sandbox: what student code can and cannot do inside it.

Where full isolation is available (Linux, root, util-linux: how the course is
graded and how CI runs) the isolation itself is asserted; where it is not, that
the sandbox says so loudly and still applies its resource limits.
"""

import os
import subprocess
import sys
import sysconfig
import time
import uuid

import pytest

from grading_support import ROOT, programs_start

from course_grader import sandbox

ISOLATED = not sandbox.missing_facilities()


@pytest.fixture(scope="module", autouse=True, params=["from scratch", "from a zygote"])
def how_programs_start(request):
    """Every test twice: each program a new interpreter, and each forked from a grading worker's zygote."""
    yield from programs_start(request.param)


def run(code, workdir, timeout=60, **options):
    cmd = sandbox.command([sys.executable, "-I", "-c", code], str(workdir), **options)
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def workdir(tmp_path):
    folder = tmp_path / "submission"
    folder.mkdir()
    (folder / "data.txt").write_text("released data")
    (folder / "notebook.ipynb").write_text("{}")
    (tmp_path / "other-student.txt").write_text("someone else's work")
    return folder


def test_describe_says_what_is_isolated():
    text = sandbox.describe()
    assert ("full isolation" in text) == ISOLATED
    assert ("DEGRADED" in text) == (not ISOLATED)


def test_own_folder_is_a_private_copy_without_notebooks(workdir):
    done = run("import os\nprint(sorted(os.listdir('.')))\nopen('new.txt', 'w').write('x')\n"
               "print(open('data.txt').read())", workdir)
    assert done.returncode == 0, done.stderr
    assert "released data" in done.stdout
    if ISOLATED:
        assert "['data.txt']" in done.stdout              # the notebook (with hidden tests) is not there
        assert not (workdir / "new.txt").exists()          # writes stay inside the sandbox
    else:
        assert "DEGRADED" in done.stderr


def test_runs_as_an_unprivileged_user_without_groups(workdir):
    done = run("import os\nprint(os.getuid(), os.getgid(), os.getgroups())", workdir, slot=3)
    uid = str(sandbox.sandbox_uid(3))
    if ISOLATED:
        assert done.stdout.split()[:2] == [uid, uid] and "[]" in done.stdout
    else:
        assert "DEGRADED" in done.stderr


def test_nothing_else_is_visible(workdir):
    code = f"""
import os
for path in [{str(ROOT / 'README.md')!r}, {str(ROOT / 'solutions')!r}, {str(workdir.parent / 'other-student.txt')!r},
             '/root', '/home', '/var']:
    try:
        print('VISIBLE' if (os.listdir(path) if os.path.isdir(path) else open(path).read(1)) else 'EMPTY', path)
    except OSError as error:
        print('HIDDEN', path, type(error).__name__)
"""
    done = run(code, workdir)
    if ISOLATED:
        assert done.stdout.count("HIDDEN") == 6, done.stdout + done.stderr     # the program ran, and saw none
    else:
        assert "DEGRADED" in done.stderr


def test_no_network(workdir):
    code = """
import socket
for address in [("1.1.1.1", 53), ("127.0.0.1", 80)]:
    try:
        socket.create_connection(address, timeout=3)
        print("CONNECTED", address)
    except OSError as error:
        print("BLOCKED", address, error)
"""
    done = run(code, workdir)
    if ISOLATED:
        assert done.stdout.count("BLOCKED") == 2, done.stdout
    else:
        assert "DEGRADED" in done.stderr


def test_read_only_system(workdir):
    done = run("open('/usr/lib/evil', 'w')", workdir)
    assert done.returncode != 0
    assert ("Read-only file system" in done.stderr or "Permission denied" in done.stderr) or not ISOLATED


def test_memory_limit(workdir):
    done = run("import numpy as np\ntry:\n    np.ones(2 ** 31)\n    print('ALLOCATED')\n"
               "except MemoryError:\n    print('MemoryError')", workdir, limits={"memory_mb": 512})
    assert "MemoryError" in done.stdout, done.stdout + done.stderr


def test_wall_clock_limit_kills_everything(workdir):
    marker = f"sleep-{uuid.uuid4().hex}"
    code = f"""
import subprocess, time
subprocess.Popen(["sh", "-c", "exec -a {marker} sleep 300"])
time.sleep(300)
"""
    started = time.monotonic()
    done = run(code, workdir, limits={"wall_seconds": 3})
    assert time.monotonic() - started < 30
    assert done.returncode != 0 and "wall-clock limit" in done.stderr
    time.sleep(0.5)
    survivors = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    for pid in survivors:   # clean up before failing, whatever happens
        subprocess.run(["kill", "-9", pid])
    if ISOLATED:
        assert survivors == [], "a process started in the sandbox outlived it"


def test_off_is_loud_and_keeps_the_limits(workdir, monkeypatch):
    monkeypatch.setenv("ATTENTION_SANDBOX", "off")
    done = run("import numpy as np\ntry:\n    np.ones(2 ** 31)\nexcept MemoryError:\n    print('MemoryError')",
               workdir, limits={"memory_mb": 512})
    assert "DEGRADED" in done.stderr and "ATTENTION_SANDBOX=off" in done.stderr
    assert "MemoryError" in done.stdout


def test_strict_refuses_to_run_without_isolation(workdir, monkeypatch):
    monkeypatch.setenv("ATTENTION_SANDBOX", "strict")
    monkeypatch.setattr(sandbox, "missing_facilities", lambda: ["not running as root"])
    with pytest.raises(sandbox.SandboxUnavailable, match="not running as root"):
        sandbox.command([sys.executable, "-c", "pass"], str(workdir))


def test_unknown_mode_is_an_error(monkeypatch):
    monkeypatch.setenv("ATTENTION_SANDBOX", "maybe")
    with pytest.raises(SystemExit, match="auto, strict or off"):
        sandbox.mode()


def test_grading_kernelspec_runs_the_sandbox():
    import json

    here = os.path.dirname(sandbox.__file__)
    spec = json.loads(open(os.path.join(here, "kernels", "attention-sandbox", "kernel.json")).read())
    # sandbox.py's own way of running itself (its compiled form), from the folder that holds it;
    # isolated (not the submission's folder on sys.path), with site (a virtual environment's prefix)
    assert spec["argv"] == ["python", "-I", "-c", sandbox.RUN_SELF, "{resource_dir}/../..", "kernel",
                            "{connection_file}"]
    assert os.path.exists(os.path.join(here, "kernels", "attention-sandbox", "..", "..", "sandbox.py"))


@pytest.fixture(scope="module")
def venv_under_tmp(tmp_path_factory):
    """A virtual environment where CI has it: under /tmp (the repository is cloned there)."""
    import venv

    env_dir = tmp_path_factory.mktemp("ci-clone") / "venv-under-tmp"
    assert str(env_dir).startswith("/tmp/") or not str(env_dir.parent).startswith("/tmp/")
    venv.create(env_dir, system_site_packages=True, with_pip=False)
    return env_dir


def run_with(python, code, workdir, **options):
    """Run ``code`` in the sandbox that the grader running on ``python`` builds."""
    driver = ("import json, subprocess, sys\n"
              f"sys.path.insert(0, {os.path.dirname(os.path.dirname(sandbox.__file__))!r})\n"
              "from course_grader import sandbox\n"
              f"cmd = sandbox.command([sys.executable, '-I', '-c', {code!r}], {str(workdir)!r}, **{options!r})\n"
              "done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)\n"
              "print(done.stdout, done.stderr)\n"
              "sys.exit(done.returncode)")
    return subprocess.run([str(python), "-c", driver], capture_output=True, text=True, timeout=90)


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
def test_a_python_installation_under_tmp_is_visible_inside(venv_under_tmp, workdir):
    """CI clones the repository under /tmp, so the virtual environment lives there;
    the sandbox's private /tmp must not hide it (it once did).  Inside, it has a
    path that says nothing about the host's folders."""
    done = run_with(venv_under_tmp / "bin" / "python", "import sys, numpy; print(sys.prefix)", workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.split()[0] == sandbox.INSIDE_VENV and str(venv_under_tmp) not in done.stdout


# The file system holds what the program needs, at one path each, and nothing of the host.  Each
# attack below worked once: the virtual environment was there a second time, at its host path
# (sys.exec_prefix names it), where the forbidden modules' stubs did not cover it.
HOST_SITE = sysconfig.get_paths()["purelib"]                     # the grader's site-packages, host path
HOST_SACREBLEU = os.path.join(HOST_SITE, "sacrebleu")

FORBIDDEN_BY_HOST_PATH = {
    "sys.path": "import sys\nsys.path.insert(0, {site!r})\nimport sacrebleu\nprint('IMPORTED', sacrebleu.__file__)",
    "spec_from_file_location": (
        "import importlib.util, sys\n"
        "spec = importlib.util.spec_from_file_location('sacrebleu', {package!r} + '/__init__.py',\n"
        "                                              submodule_search_locations=[{package!r}])\n"
        "module = importlib.util.module_from_spec(spec)\nsys.modules['sacrebleu'] = module\n"
        "spec.loader.exec_module(module)\nprint('IMPORTED', module.BLEU)"),
    "runpy": "import runpy\nprint('IMPORTED', runpy.run_path({package!r} + '/version.py')['__version__'])",
    "keras by sys.path": "import sys\nsys.path.insert(0, {site!r})\nimport keras\nprint('IMPORTED', keras.__file__)",
}


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
@pytest.mark.parametrize("route", list(FORBIDDEN_BY_HOST_PATH))
def test_a_forbidden_module_cannot_be_imported_by_its_host_path(workdir, route):
    assert os.path.isdir(HOST_SACREBLEU)                      # the attack names a real folder of the host
    code = FORBIDDEN_BY_HOST_PATH[route].format(site=HOST_SITE, package=HOST_SACREBLEU)
    done = run(code, workdir, timeout=180, forbid=["sacrebleu", "keras", "tensorflow"])
    assert "IMPORTED" not in done.stdout, done.stdout
    assert done.returncode != 0
    assert "grading policy forbids it" in done.stderr or "No such file or directory" in done.stderr, done.stderr


SOURCE_BY_HOST_PATH = {
    "open": "print('READ', open({package!r} + '/metrics/bleu.py').read()[:200])",
    "listdir": "import os\nprint('READ', os.listdir({package!r}))",
    "glob": "import glob\nfound = glob.glob({site!r} + '/sacrebleu*/**', recursive=True)\nprint('READ' if found else 'NONE', found[:3])",
    "pathlib": "import pathlib\nprint('READ', len(pathlib.Path({package!r}, 'sacrebleu.py').read_bytes()))",
}


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
@pytest.mark.parametrize("route", list(SOURCE_BY_HOST_PATH))
def test_a_forbidden_modules_source_cannot_be_read_by_its_host_path(workdir, route):
    code = SOURCE_BY_HOST_PATH[route].format(site=HOST_SITE, package=HOST_SACREBLEU)
    done = run(code, workdir, forbid=["sacrebleu"])
    assert "READ" not in done.stdout, done.stdout
    assert "No such file or directory" in done.stderr or "NONE []" in done.stdout, done.stdout + done.stderr


def unused_package_folders_here():
    """The base installation's and the operating system's package folders this interpreter does not use."""
    import glob
    import site

    folders = (site.getsitepackages([sys.base_prefix]) + glob.glob("/usr/lib/python3*/*-packages")
               + glob.glob("/usr/local/lib/python3*/*-packages"))
    used = {os.path.realpath(p) for p in sys.path if p}
    return sorted({os.path.realpath(f) for f in folders if os.path.isdir(f)} - used)


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
def test_package_folders_the_interpreter_does_not_use_are_empty(workdir):
    """The base interpreter's site-packages (a virtual environment leaves it out) and the system's
    dist-packages hold modules the stubs do not cover: a forbidden module installed there too was
    importable by putting the folder on sys.path."""
    folders = unused_package_folders_here()
    assert folders or sys.prefix == sys.base_prefix               # a virtual environment leaves one out
    ours = set(os.listdir(HOST_SITE))
    # In each folder, a package the grader's site-packages has too: forbidden, then imported from there.
    shared = {folder: sorted(name for name in set(os.listdir(folder)) & ours
                             if os.path.isfile(os.path.join(folder, name, "__init__.py")))[:1]
              for folder in folders}
    forbid = sorted({name for names in shared.values() for name in names})
    code = "import os, sys\n"
    for folder, names in shared.items():
        code += f"print('LISTED', {folder!r}, os.listdir({folder!r}) if os.path.isdir({folder!r}) else 'missing')\n"
        for name in names:
            code += (f"sys.path.insert(0, {folder!r})\ntry:\n    import {name}\n    print('IMPORTED', {name}.__file__)\n"
                     f"except ImportError as error:\n    print('REFUSED', error)\nsys.path.pop(0)\n")
    done = run(code, workdir, forbid=forbid)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("LISTED") == len(folders)
    assert all(line.endswith(("[]", "missing")) for line in done.stdout.splitlines() if line.startswith("LISTED"))
    assert "IMPORTED" not in done.stdout, done.stdout
    attempts = sum(len(names) for names in shared.values())
    assert done.stdout.count("REFUSED") == done.stdout.count("grading policy forbids it") == attempts, done.stdout


TMP_CONTENTS = r"""
import os
print('WALK', sorted(os.path.join(d, n) for d, ds, fs in os.walk('/tmp') for n in ds + fs))
print('LIST', sorted(os.listdir('/tmp')))
print('EXISTS', [p for p in {paths!r} if os.path.exists(p)])
"""


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
def test_tmp_holds_nothing_of_the_host(venv_under_tmp, workdir):
    """The grader's virtual environment under /tmp (as in CI) was bound at its host path too,
    so the private /tmp showed the host's folders above it."""
    host = [str(venv_under_tmp), str(venv_under_tmp.parent), str(workdir), "/tmp/" + str(workdir).split("/")[2]]
    done = run_with(venv_under_tmp / "bin" / "python", TMP_CONTENTS.format(paths=host), workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "WALK ['/tmp/home']" in done.stdout and "LIST ['home']" in done.stdout, done.stdout
    assert "EXISTS []" in done.stdout, done.stdout


INSTALLATION = r"""
import json, os, site, sys, numpy
print(json.dumps({'mountinfo': open('/proc/self/mountinfo').read().splitlines(),
                  'maps': sorted({line.split()[-1] for line in open('/proc/self/maps') if '/' in line}),
                  'python': [sys.prefix, sys.exec_prefix, sys.executable, numpy.__file__] + sys.path
                            + site.getsitepackages()}))
"""


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox builds its own file-system view")
@pytest.mark.parametrize("grader", ["this interpreter", "a virtual environment under /tmp"])
def test_what_the_program_reads_about_its_installation_names_no_host_path(venv_under_tmp, workdir, grader):
    """Mount points, mapped files, sys.prefix, sys.path and site-packages name the view's paths only.

    What the kernel must show stays: mountinfo's fourth column, the folder a bind
    mount comes from, names the virtual environment's host path on the one line
    that mounts it as /opt/python."""
    import json

    python = sys.executable if grader == "this interpreter" else str(venv_under_tmp / "bin" / "python")
    venv = os.path.dirname(os.path.dirname(os.path.abspath(python)))
    done = run_with(python, INSTALLATION, workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[0])
    host = {str(ROOT), str(workdir.parent)}
    if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):      # a virtual environment: moved to /opt/python
        host |= {venv, os.path.realpath(venv)}
    for line in seen["mountinfo"]:
        fields = line.split()
        for path in host:
            if path in line:   # only where the venv is mounted, and only as the mount's source
                assert fields[4] == sandbox.INSIDE_VENV and fields[3].startswith(path), line
                assert fields[3] in (venv, os.path.realpath(venv)) and path not in " ".join(fields[4:]), line
    named = "\n".join(seen["maps"] + seen["python"])
    assert sandbox.INSIDE_VENV + "/lib" in named
    assert not any(path in named for path in host), named


# Nothing of the grader inside: no inherited descriptor, no host path in /proc or the environment.
LOOK_AROUND = r"""
import json, os
fds = sorted(int(fd) for fd in os.listdir('/proc/self/fd'))
targets = {fd: os.readlink(f'/proc/self/fd/{fd}') for fd in fds if os.path.exists(f'/proc/self/fd/{fd}')}
seen = []
for pid in os.listdir('/proc'):
    if pid.isdigit():
        for entry in ('cmdline', 'environ', 'cwd', 'root', 'exe'):
            try:
                path = f'/proc/{pid}/{entry}'
                seen.append(os.readlink(path) if entry in ('cwd', 'root') else
                            open(path, 'rb').read().decode(errors='replace'))
            except OSError:
                pass
print(json.dumps({'fds': fds, 'targets': targets, 'pids': [p for p in os.listdir('/proc') if p.isdigit()],
                  'proc': seen, 'environ': dict(os.environ)}))
"""


@pytest.mark.skipif(not ISOLATED, reason="isolation unavailable here: the degraded mode says so (tested above)")
def test_no_descriptor_of_the_grader_reaches_the_program(workdir, tmp_path):
    import json

    log = open(tmp_path / "worker.log", "a")
    secret = open(tmp_path / "gradebook.db", "w")
    os.set_inheritable(log.fileno(), True)      # as a worker's dup2-ed log is
    os.set_inheritable(secret.fileno(), True)
    cmd = sandbox.command([sys.executable, "-I", "-c", LOOK_AROUND], str(workdir))
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60, close_fds=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    # 0-2 only (the descriptor listdir opened for itself is closed by the time of readlink)
    assert [fd for fd in seen["targets"] if int(fd) > 2] == []
    assert not any("worker.log" in t or "gradebook" in t for t in seen["targets"].values())


@pytest.mark.skipif(not ISOLATED, reason="isolation unavailable here: the degraded mode says so (tested above)")
def test_no_host_path_in_proc_or_the_environment(workdir):
    import json

    done = run(LOOK_AROUND, workdir)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert "1" not in seen["pids"]                       # the supervisor (root) is hidden
    visible = "\n".join(seen["proc"]) + json.dumps(seen["environ"])
    for host in (str(workdir.parent), str(ROOT), sys.prefix):
        assert host not in visible


@pytest.mark.skipif(not ISOLATED, reason="isolation unavailable here: the degraded mode says so (tested above)")
@pytest.mark.parametrize("statement", ["import tensorflow", "import keras", "from keras import layers",
                                       "import importlib; importlib.import_module('tensorflow.python')"])
def test_a_forbidden_module_cannot_be_imported_by_any_route(workdir, statement):
    done = run(statement, workdir, forbid=["tensorflow", "keras"])
    assert done.returncode != 0
    assert "ModuleNotFoundError" in done.stderr and "grading policy forbids it" in done.stderr


@pytest.mark.skipif(not ISOLATED, reason="isolation unavailable here: the degraded mode says so (tested above)")
def test_forbidding_leaves_the_rest_of_the_installation(workdir):
    code = ("import glob, numpy, sys\n"
            "print(numpy.ones(2).sum())\n"
            "print([p for p in glob.glob(sys.prefix + '/lib/python*/site-packages/tensorflow/**', recursive=True)"
            " if p.endswith('.so')][:3])")
    done = run(code, workdir, forbid=["tensorflow", "keras"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["2.0", "[]"]     # not even TensorFlow's shared libraries


KEYRING = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
numbers = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[os.uname().machine]
add_key, request_key, keyctl = numbers
KEY_SPEC_USER_KEYRING = -4
if sys.argv[1] == "write":
    key = libc.syscall(add_key, b"user", b"course-grader-test", b"from the previous submission", 28,
                       ctypes.c_int(KEY_SPEC_USER_KEYRING))
else:
    key = libc.syscall(request_key, b"user", b"course-grader-test", None, 0)
    if key >= 0:
        buffer = ctypes.create_string_buffer(100)
        libc.syscall(keyctl, 11, key, buffer, 100)          # KEYCTL_READ
        print("READ", buffer.value)
print("RESULT", key, os.strerror(ctypes.get_errno()) if key < 0 else "")
"""


@pytest.mark.skipif(not (ISOLATED and sandbox.seccomp_available()), reason="needs the isolated sandbox")
def test_nothing_survives_in_the_keyrings_from_one_submission_to_the_next(workdir):
    first = subprocess.run(sandbox.command([sys.executable, "-I", "-c", KEYRING, "write"], str(workdir),
                                           slot=5), capture_output=True, text=True, timeout=60)
    second = subprocess.run(sandbox.command([sys.executable, "-I", "-c", KEYRING, "read"], str(workdir),
                                            slot=5), capture_output=True, text=True, timeout=60)
    assert "RESULT -1 Operation not permitted" in first.stdout, first.stdout + first.stderr
    assert "RESULT -1 Operation not permitted" in second.stdout and "READ" not in second.stdout


@pytest.mark.skipif(not ISOLATED, reason="only the isolated sandbox has in-memory file systems")
def test_in_memory_files_count_against_the_memory_limit(workdir):
    code = ("import resource, os\n"
            "print('AS', resource.getrlimit(resource.RLIMIT_AS)[0] // 2 ** 20)\n"
            "block = b'x' * 2 ** 20\n"
            "for place in ('/tmp/a', '/dev/shm/b', 'c'):\n"
            "    try:\n"
            "        with open(place, 'wb') as f:\n"
            "            for _ in range(40):\n"
            "                f.write(block)\n"
            "        print('WROTE', place)\n"
            "    except OSError as error:\n"
            "        print('FULL', place, error.errno)\n")
    done = run(code, workdir, limits={"memory_mb": 512, "tmp_mb": 100})
    assert done.returncode == 0, done.stderr
    assert "AS 412" in done.stdout                       # 512 MiB = 412 of address space + 100 of files
    assert done.stdout.count("WROTE") == 2 and "FULL c" in done.stdout   # 3 x 40 MiB > 100 MiB, shared


def test_a_program_path_with_dot_dot_runs(workdir):
    """``.../bin/../bin/python`` names the same interpreter (the virtual environment moves inside)."""
    folder, name = os.path.split(sys.executable)
    program = os.path.join(folder, "..", os.path.basename(folder), name)
    done = subprocess.run(sandbox.command([program, "-I", "-c", "print('ran')"], str(workdir)),
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "ran" in done.stdout, done.stderr


def test_files_beyond_the_budget_are_named_not_skipped_silently(tmp_path):
    folder = tmp_path / "work"
    (folder / "data").mkdir(parents=True)
    (folder / "data" / "small.csv").write_bytes(b"x" * 1000)
    (folder / "big.bin").write_bytes(b"x" * 600_000)
    (folder / "notebook.ipynb").write_text("{}")
    copied, left_out = sandbox.working_files(str(folder), budget=2 ** 19)     # what tmp_mb=1 allows
    assert copied == ["data/small.csv"] and left_out == ["big.bin"]
    if ISOLATED:   # and the sandbox copies exactly what working_files says
        done = run("import os\nprint(sorted(os.path.join(d, f) for d, _, fs in os.walk('.') for f in fs))",
                   folder, limits={"tmp_mb": 1})
        assert "'./data/small.csv'" in done.stdout and "big.bin" not in done.stdout, done.stderr


def test_files_removed_while_the_folder_is_read_are_left_out(tmp_path, monkeypatch):
    """A file or folder that disappears between the listing and the copy (another process's, or a
    /proc a working folder under /tmp holds) is not copied; the sandbox still starts."""
    for name in ("a.csv", "b.csv", "sub/c.csv", "gone/d.csv"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(name)
    real_scandir = os.scandir

    def scandir_then_remove(folder):
        entries = list(real_scandir(folder))
        if os.path.realpath(folder) == str(tmp_path):
            (tmp_path / "b.csv").unlink()                  # listed, then gone
            for file in (tmp_path / "gone").iterdir():
                file.unlink()
            (tmp_path / "gone").rmdir()
        return iter(entries)

    monkeypatch.setattr(sandbox.os, "scandir", scandir_then_remove)
    copied, left_out = sandbox.working_files(str(tmp_path))
    assert sorted(copied) == ["a.csv", os.path.join("sub", "c.csv")] and left_out == []


def test_the_sandboxes_mount_points_are_never_copied(tmp_path, monkeypatch):
    """A working folder that holds the sandbox's mount points (``/tmp``, where another sandbox's
    ``/proc`` comes and goes) gets neither of them."""
    for name in ("root/proc/1/status", "scratch/file", "data.txt"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(name)
    monkeypatch.setattr(sandbox, "NEWROOT", str(tmp_path / "root"))
    monkeypatch.setattr(sandbox, "SCRATCH", str(tmp_path / "scratch"))
    copied, left_out = sandbox.working_files(str(tmp_path))
    assert copied == ["data.txt"] and left_out == []
