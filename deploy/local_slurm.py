"""A private one-node Slurm cluster on this machine, for tests and for
`./toroid slurm-selftest --local`: munged, slurmctld and slurmd from Debian's
munge and slurm-wlm, each started with a generated configuration under one
temporary directory (its own munge key and socket, state, spool, logs, pid
files and TCP ports), so nothing of the system's own Slurm or munge is used
or touched. stop() ends the three daemons by the pids in their pid files,
waits for them, kills what is left, and removes the directory; it runs on
every exit path (context manager, SIGINT/SIGTERM handlers, atexit).

The node is declared with 8 CPUs whatever the machine has
(SlurmdParameters=config_overrides) and oversubscribed, so `srun -n 8` runs a
2x2x2 partition on a 2-core machine.
"""
import atexit
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")


class SlurmError(Exception):
    pass


def which(prog):
    for d in ("/usr/sbin", "/usr/bin", "/sbin", "/bin"):
        p = os.path.join(d, prog)
        if os.access(p, os.X_OK):
            return p
    return shutil.which(prog)


def missing_programs():
    """The programs a local cluster needs that are not installed."""
    return [p for p in ("munged", "slurmctld", "slurmd", "srun", "sinfo") if not which(p)]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is gone for our purposes.
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def processes_with(needle):
    """Live processes (other than this one) whose command line holds needle."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmd and pid_alive(int(pid)):
            out.append("%s %s" % (pid, cmd.strip()))
    return out


class LocalSlurm:
    def __init__(self, cpus=8, say=print, keep=False):
        self.cpus = cpus
        self.say = say
        self.keep = keep
        self.dir = None
        self.host = socket.gethostname().split(".")[0]
        self.env = dict(os.environ)
        self.pids = {}
        self._old_handlers = {}

    # -- paths
    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _on_signal(self, signum, frame):
        self.stop()
        raise KeyboardInterrupt("signal %d" % signum)

    def start(self, timeout=60):
        miss = missing_programs()
        if miss:
            raise SlurmError("not installed: %s (./toroid setup --slurm installs slurm-wlm and munge)"
                             % ", ".join(miss))
        if os.geteuid() != 0:
            raise SlurmError("a private Slurm runs its daemons as root (SlurmUser=root); run as root")
        self.dir = tempfile.mkdtemp(prefix="toroid-slurm.")
        os.chmod(self.dir, 0o755)
        atexit.register(self.stop)
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._old_handlers[sig] = signal.signal(sig, self._on_signal)
        for d in ("state", "spool", "munge"):
            os.makedirs(self.path(d), mode=0o700)
        try:
            self._start_munge()
            self._write_conf()
            self.env["SLURM_CONF"] = self.path("slurm.conf")
            for prog in ("slurmctld", "slurmd"):
                self._run([which(prog), "-f", self.path("slurm.conf")], prog)
                self.pids[prog] = self._read_pid(self.path(prog + ".pid"), prog)
            self._wait_idle(timeout)
        except BaseException:
            self.stop()
            raise

    def _run(self, argv, what, timeout=20):
        try:
            r = subprocess.run(argv, env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=timeout, text=True)
        except subprocess.TimeoutExpired:
            raise SlurmError("%s did not return within %d s: %s" % (what, timeout, " ".join(argv)))
        if r.returncode != 0:
            raise SlurmError("%s failed (exit %d): %s\n%s" % (what, r.returncode, " ".join(argv), r.stdout.strip()))
        return r.stdout

    def _read_pid(self, path, what, timeout=10):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with open(path) as f:
                    pid = int(f.read().strip())
                if pid_alive(pid):
                    return pid
            except (OSError, ValueError):
                pass
            time.sleep(0.05)
        raise SlurmError("%s did not start: no live pid in %s; its log:\n%s" % (what, path, self.log_tail(what)))

    def _start_munge(self):
        key = self.path("munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.munge_socket = self.path("munge", "munge.socket")
        # --force: munged refuses group-writable log/pid directories
        # otherwise; ours are private to this directory anyway.
        self._run([which("munged"), "--force", "--key-file", key, "--socket", self.munge_socket,
                   "--pid-file", self.path("munge", "munged.pid"), "--log-file", self.path("munged.log"),
                   "--seed-file", self.path("munge", "munged.seed")], "munged")
        self.pids["munged"] = self._read_pid(self.path("munge", "munged.pid"), "munged")

    def _write_conf(self):
        conf = """# private one-node cluster (deploy/local_slurm.py)
ClusterName=toroid
SlurmctldHost={host}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={munge}
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
StateSaveLocation={dir}/state
SlurmdSpoolDir={dir}/spool
SlurmctldPidFile={dir}/slurmctld.pid
SlurmdPidFile={dir}/slurmd.pid
SlurmctldLogFile={dir}/slurmctld.log
SlurmdLogFile={dir}/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
# The node is declared bigger than it is: 8 CPUs on any machine.
SlurmdParameters=config_overrides
NodeName={host} CPUs={cpus} State=UNKNOWN
PartitionName=toroid Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
""".format(host=self.host, munge=self.munge_socket, ctld_port=free_port(), d_port=free_port(), dir=self.dir,
           cpus=self.cpus)
        with open(self.path("slurm.conf"), "w") as f:
            f.write(conf)

    def _wait_idle(self, timeout):
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            try:
                state = self._run([which("sinfo"), "-h", "-N", "-o", "%T"], "sinfo", timeout=10).strip()
            except SlurmError as e:
                state = str(e).splitlines()[0]
            if state in ("idle", "mixed", "allocated"):
                self.say("slurm: one-node cluster up: node %s %s, %d CPUs declared (config in %s)"
                         % (self.host, state, self.cpus, self.dir))
                return
            for d, pid in self.pids.items():
                if not pid_alive(pid):
                    raise SlurmError("%s exited; its log:\n%s" % (d, self.log_tail(d)))
            time.sleep(0.2)
        raise SlurmError("the node did not become idle within %d s (last: %s); slurmd log:\n%s"
                         % (timeout, state, self.log_tail("slurmd")))

    def log_tail(self, daemon, lines=15):
        try:
            with open(self.path(daemon + ".log"), errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def leftovers(self):
        """Processes still running whose command line names our directory."""
        return processes_with(self.dir) if self.dir else []

    def stop(self):
        if self.dir is None:
            return
        # slurmd before slurmctld before munged: each still needs the next.
        for d in ("slurmd", "slurmctld", "munged"):
            pid = self.pids.pop(d, None)
            if not pid or not pid_alive(pid):
                continue
            os.kill(pid, signal.SIGTERM)
            deadline = time.monotonic() + 10
            while pid_alive(pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            if pid_alive(pid):
                self.say("slurm: %s (pid %d) did not stop within 10 s: SIGKILL" % (d, pid))
                os.kill(pid, signal.SIGKILL)
        left = self.leftovers()
        for entry in left:
            pid = int(entry.split()[0])
            self.say("slurm: killing leftover process %s" % entry)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.keep:
            self.say("slurm: daemons stopped; configuration and logs kept in %s" % self.dir)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.say("slurm: daemons stopped (munged, slurmctld, slurmd), %s removed" % self.dir)
        self.dir = None
        for sig, h in self._old_handlers.items():
            signal.signal(sig, h)
        self._old_handlers = {}
