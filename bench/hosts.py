#!/usr/bin/python3
"""hosts.py: hqt on other machines over ssh (issue 25), against the raw
tools it drives.  Printed, not asserted.

    bench/hosts.py [list|tui|all]        (default all; list takes ~20 s)

Its own world, all under one temporary directory: a real OpenSSH server on
127.0.0.1 (its own host key, configuration and authorized key; as root in
a mount namespace of its own with a private /run and root's shell start-up
files empty, as tests/integration/test-hosts.c runs it), listening on three
ports, one per host: r1, r2, r3, three Host entries of the bench's own
ssh_config, which a `ssh` early on PATH puts in front of every ssh (-F).
Behind each host a hqt world of its own (HOME, database, private tmux
server) with idle sessions of a generic harness (`sleep 100000`):
$HOST_SESSIONS (20) on r1, half of it on r2, a quarter on r3; hqt reaches
each by `hqt host add rN rN --command 'env PATH=... HOME=... XDG_...=...
/path/to/hqt'`.  This machine's world (HOME, database, the hosts, the
shared connections' sockets) has no sessions.

list  (1) One host, its shared connection warm.  A: `hqt --host r1 list
          --json`.  B: r1's hqt's own `list --json` run directly (the same
          `env ... hqt list --json` the remote shell runs, no ssh), plus
          `ssh r1 true` over the same shared connection with hqt's own ssh
          options (core/remote.c: -T, BatchMode, ControlMaster=auto,
          ControlPath=<hqt's directory>/%C, ControlPersist=600,
          ConnectTimeout, ServerAliveInterval): each a whole process, the
          two times added in each pair.  Goal: A within 1.3x of B.
      (2) Three hosts, their connections warm.  A: `hqt list --all --json`
          (this machine's list, then the three hosts asked in parallel).
          B: the slowest of the three `hqt --host rN list --json` of the
          same pair.  Goal: about the slowest one, not the sum (read here
          as at most 1.3x of it); A against the sum is printed for scale,
          and, apart from the pairs, this machine's list alone.
      For both, "all the CPU a run set going" is the mean CPU of every
      process the bench started, read just before and after each run:
      the timed process and what it reaped (wait4), and the live ones
      (sshd and its sessions, where the host's shell and hqt run; the ssh
      masters; the tmux servers) by /proc's schedstat and cutime+cstime.
      Here the hosts are this machine: on its N cpus, A cannot take less
      than that CPU / N, however parallel hqt is.
tui   (3) `hqt tui` in a pane of a private tmux server with two hosts (r1,
          r2), left alone for $IDLE_SECONDS (60) once it shows both hosts'
          rows and 3 s more: the TUI process's CPU (all its threads,
          /proc/PID/task/*/schedstat; goal: at most 0.1% of a core), with
          its loop's and its host threads' shares; its ssh clients, as the
          CPU of the children it reaped (/proc/PID/stat cutime+cstime, in
          clock ticks; at idle those are its ssh clients), and estimated as
          (reads in the span, counted in sshd's VERBOSE log) x (the median
          CPU of one ssh client running the TUI's very read, by wait4's
          rusage, 40 runs before the TUI starts); the two shared
          connections' masters (schedstat); and what the reads cost the
          hosts (reads x their hqt's list run directly).

Every timed side is one process started with posix_spawn and reaped with
wait4, stdin and stdout /dev/null, no shell in the interval (bench/README.md,
"Method"); pairs alternate which side goes first, WARMUP (3) pairs untimed,
then RUNS (30) pairs; the figure is the median of the per-pair ratios with
its distribution-free 95% interval.  The last lines are for bench/run,
tab-separated, as bench-timer's:
    result NAME MEDIAN_A_MS MEDIAN_B_MS RATIO CI_LO CI_HI RESOLVES_10%
           CPU_A_MS CPU_B_MS -1 -1
  (NAME: hosts-one, hosts-all, hosts-all-sum), and for the TUI:
    result hosts-tui TUI_% SSH_CLIENTS_% SSH_ESTIMATE_% MASTERS_% READS
           SECONDS MAIN_THREAD_% HOST_THREADS_%
Without /usr/sbin/sshd it prints "hosts.py: skipped: no sshd" and no result.

Environment: HQT (default build/bin/hqt), RUNS, WARMUP, HOST_SESSIONS,
IDLE_SECONDS.  What it starts (sshd, the ssh masters, the tmux servers, the
TUI) is stopped at the end: the masters by `ssh -O exit`, the servers by
tmux kill-server, sshd by SIGTERM.  It is the subreaper of what daemonizes
under it, and names (and stops) anything of its own still running then.
"""
import ctypes
import json
import math
import os
import pwd
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
HQT = os.path.abspath(os.environ.get("HQT", os.path.join(HERE, "..", "build", "bin", "hqt")))
SSHD = "/usr/sbin/sshd"


def number(name, default, lo, hi):
    v = os.environ.get(name, "")
    if v == "":
        return default
    if not v.isdigit() or not lo <= int(v) <= hi:
        sys.exit("hosts.py: %s takes a number from %d to %d, not '%s'" % (name, lo, hi, v))
    return int(v)


# Every loop of the bench is bounded by these.
RUNS = number("RUNS", 30, 1, 1000)
WARMUP = number("WARMUP", 3, 0, 100)
SESSIONS = number("HOST_SESSIONS", 20, 4, 400)
IDLE = number("IDLE_SECONDS", 60, 5, 600)
GOAL_ONE = 1.3
GOAL_ALL = 1.3
GOAL_TUI = 0.1
HOSTS = [("r1", SESSIONS), ("r2", SESSIONS // 2), ("r3", SESSIONS // 4)]

DEVNULL = os.open(os.devnull, os.O_RDWR)
HZ = os.sysconf("SC_CLK_TCK")


def say(*a):
    print(*a, flush=True)


# ---- timing (bench/README.md, "Method") ------------------------------

class Cmd:
    """A command to time: its program found once, outside the clock."""

    def __init__(self, argv, env, label):
        path = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
        if path is None:
            sys.exit("hosts.py: %s not found" % argv[0])
        self.path, self.argv, self.env, self.label = path, argv, env, label


def timed(c):
    """(wall ms, CPU ms) of c as a whole process: posix_spawn (glibc's
    CLONE_VFORK: resumes once the child has exec'd), wait4, nothing else
    between the clock reads.  A command that fails stops the bench."""
    t0 = time.perf_counter()
    pid = os.posix_spawn(c.path, c.argv, c.env,
                         file_actions=[(os.POSIX_SPAWN_DUP2, DEVNULL, 0),
                                       (os.POSIX_SPAWN_DUP2, DEVNULL, 1)])
    _, status, ru = os.wait4(pid, 0)
    t1 = time.perf_counter()
    if status != 0:
        raise SystemExit("hosts.py: '%s' failed (wait status %d): its time would measure "
                         "nothing" % (c.label, status))
    return (t1 - t0) * 1000, (ru.ru_utime + ru.ru_stime) * 1000


def ci_rank(n):
    """The rank k of the order statistics x(k), x(n+1-k) holding the median
    with 95% confidence (as bench/timer.c): 0 for too few runs."""
    cdf = 0.0
    for k in range(n):
        p = math.exp(math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
                     - n * math.log(2))
        if cdf + p > 0.025:
            return k
        cdf += p
    return 0


def side_line(label, wall, cpu):
    say("  %-50s median %8.2f ms  cpu %6.2f ms  (%d runs, %.2f-%.2f)"
        % (label, statistics.median(wall), statistics.median(cpu), len(wall), min(wall),
           max(wall)))


def verdict(name, a, b, cpu_a, cpu_b, goal):
    """The ratio of the pairs, its interval and noise, and the result line."""
    n = len(a)
    ratios = [x / y for x, y in zip(a, b)]
    r = statistics.median(ratios)
    k = ci_rank(n)
    lo = hi = half = 0.0
    if k > 0:
        s = sorted(ratios)
        lo, hi = s[k - 1], s[n - k]
        half = max(r - lo, hi - r) / r
    resolves = k > 0 and half <= 0.05
    line = "  ratio %.2fx (median of %d pair ratios" % (r, n)
    if k > 0:
        line += "; 95%% interval %.2f-%.2fx, +-%.1f%%" % (lo, hi, 100 * half)
    say(line + ")")
    if not resolves:
        say("  noise: %s, this run cannot tell a 10%% change from noise"
            % ("the interval is wider than +-5%" if k > 0 else "too few runs for an interval"))
    if goal:
        close = " (the goal is inside the interval: a close call)" if k > 0 and lo <= goal <= hi \
            else ""
        say("  goal <= %gx: %s%s" % (goal, "ok" if r <= goal else "OVER GOAL", close))
    return "result\t%s\t%.3f\t%.3f\t%.4f\t%.4f\t%.4f\t%d\t%.3f\t%.3f\t-1.000\t-1.000" % (
        name, statistics.median(a), statistics.median(b), r, lo, hi, 1 if resolves else 0,
        statistics.median(cpu_a), statistics.median(cpu_b))


# ---- processes of our own ---------------------------------------------

def subreaper():
    """What daemonizes under us (ssh masters, tmux servers) stays ours."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    except OSError:
        pass


def our_children():
    """Live children of this process (the subreaper's too), pid -> comm."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % tid) as f:
                pids = f.read().split()
        except OSError:
            continue
        for p in pids:
            try:
                with open("/proc/%s/stat" % p) as f:
                    st = f.read()
            except OSError:
                continue
            if st[st.rindex(")") + 2] != "Z":
                try:
                    with open("/proc/%s/cmdline" % p, "rb") as f:
                        cmd = f.read().replace(b"\0", b" ").decode(errors="replace").strip()
                except OSError:
                    cmd = ""
                out[int(p)] = cmd or st[st.index("(") + 1:st.rindex(")")]
    return out


def reap():
    for _ in range(1000):
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def schedstat_ns(pid, tid=None):
    path = "/proc/%d/task/%d/schedstat" % (pid, tid) if tid else "/proc/%d/schedstat" % pid
    try:
        with open(path) as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def stat_ticks(pid):
    """utime, stime, cutime, cstime of pid (all its threads, and the
    children it reaped), in clock ticks."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    return [int(x) for x in fields[11:15]]


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def threads_ns(pid):
    out = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        return out
    for tid in tids:
        ns = schedstat_ns(pid, int(tid))
        if ns is not None:
            out[int(tid)] = ns
    return out


def descendants(pid):
    """pid's descendants, a bounded walk of /proc/P/task/T/children."""
    out, todo = [], [pid]
    while todo and len(out) < 10000:
        p = todo.pop()
        try:
            tids = os.listdir("/proc/%d/task" % p)
        except OSError:
            continue
        for t in tids:
            try:
                with open("/proc/%d/task/%s/children" % (p, t)) as f:
                    kids = [int(x) for x in f.read().split()]
            except (OSError, ValueError):
                continue
            out += kids
            todo += kids
    return out


def cpu_of(pids):
    """CPU so far of pids (live ones): each one's threads (schedstat, ns)
    and the children each reaped (cutime+cstime, clock ticks)."""
    total = 0.0
    for p in set(pids):
        if not alive(p):
            continue
        total += sum(threads_ns(p).values()) / 1e6
        try:
            t = stat_ticks(p)
        except (OSError, ValueError, IndexError):
            continue
        total += (t[2] + t[3]) * 1000.0 / HZ
    return total


def machine_cpu_ms():
    """All the CPU the bench set going so far, here and on the hosts (one
    machine here): its live descendants (sshd and its sessions, the tmux
    servers, the ssh masters) and the children it reaped (getrusage)."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return cpu_of(descendants(os.getpid())) + (ru.ru_utime + ru.ru_stime) * 1000


def measured(c):
    """timed(c), and all the CPU the run set going (machine_cpu_ms read
    just outside the interval; what finishes after the read lands on the
    next run)."""
    m0 = machine_cpu_ms()
    wall, cpu = timed(c)
    return wall, cpu, machine_cpu_ms() - m0


# ---- the world ----------------------------------------------------------

class World:
    """A HOME, a database and a private tmux server of hqt's."""

    def __init__(self, base, sock, path):
        home = os.path.join(base, "home")
        run = os.path.join(base, "run")
        for d in (".config/hqt", ".local/share", ".local/state", ".cache"):
            os.makedirs(os.path.join(home, d))
        os.mkdir(run, 0o700)
        self.base, self.sock = base, sock
        self.env = {"PATH": path, "HOME": home, "XDG_CONFIG_HOME": home + "/.config",
                    "XDG_DATA_HOME": home + "/.local/share",
                    "XDG_STATE_HOME": home + "/.local/state", "XDG_CACHE_HOME": home + "/.cache",
                    "XDG_RUNTIME_DIR": run, "LANG": "C.UTF-8", "NO_COLOR": "1"}
        with open(os.path.join(home, ".config", "hqt", "hqt.ini"), "w") as f:
            f.write("[hqt]\ntmux_socket = %s\n[harness.sleeper]\nplugin = generic\n"
                    "command = sleep 100000\n" % sock)

    def hqt(self, *args, check=True):
        r = subprocess.run([HQT] + list(args), env=self.env, stdin=DEVNULL,
                           capture_output=True, text=True, timeout=120)
        if check and r.returncode != 0:
            raise SystemExit("hosts.py: hqt %s failed (%d): %s"
                             % (" ".join(args), r.returncode, r.stderr.strip()))
        return r

    def command(self):
        """The remote hqt as `host add --command` names it."""
        words = ["env"] + ["%s=%s" % (k, shlex.quote(self.env[k])) for k in
                           ("PATH", "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
                            "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "LANG")]
        return " ".join(words + [shlex.quote(HQT)])


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


class Bench:
    def __init__(self):
        self.root = tempfile.mkdtemp(prefix="hqt-hosts-bench-")
        self.keys = os.path.join(self.root, "keys")
        self.sshd = None
        self.socks = []
        self.tui_sock = None

    # ---- set-up ----

    def setup(self):
        os.mkdir(self.keys, 0o700)
        for k in ("host_key", "user_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f",
                            os.path.join(self.keys, k)], check=True, stdin=DEVNULL)
        shutil.copy(os.path.join(self.keys, "user_key.pub"),
                    os.path.join(self.keys, "authorized_keys"))
        self.ports = free_ports(len(HOSTS))
        user = pwd.getpwuid(os.getuid()).pw_name
        self.ssh_config = os.path.join(self.keys, "ssh_config")
        with open(self.ssh_config, "w") as f:
            f.write("Host %s\n  HostName 127.0.0.1\n  User %s\n  IdentityFile %s/user_key\n"
                    "  IdentitiesOnly yes\n  UserKnownHostsFile %s/known_hosts\n"
                    "  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n"
                    % (" ".join(h for h, _ in HOSTS), user, self.keys, self.keys))
            for (h, _), p in zip(HOSTS, self.ports):
                f.write("Host %s\n  Port %d\n" % (h, p))
        with open(os.path.join(self.keys, "host_key.pub")) as f:
            hostkey = f.read().strip()
        with open(os.path.join(self.keys, "known_hosts"), "w") as f:
            for p in self.ports:
                f.write("[127.0.0.1]:%d %s\n" % (p, hostkey))
        # The user's ssh, with the bench's configuration: a `ssh` early on
        # PATH (hqt finds ssh on PATH).  Both sides of every pair run it.
        bindir = os.path.join(self.root, "bin")
        os.mkdir(bindir)
        self.ssh = os.path.join(bindir, "ssh")
        with open(self.ssh, "w") as f:
            f.write("#!/bin/sh\nexec /usr/bin/ssh -F %s \"$@\"\n" % shlex.quote(self.ssh_config))
        os.chmod(self.ssh, 0o755)

        tag = "hqt-hosts-bench-%d" % os.getpid()
        self.local = World(os.path.join(self.root, "local"), tag + "-local",
                           bindir + ":/usr/local/bin:/usr/bin:/bin")
        self.tui_sock = self.local.sock
        self.far = {}
        for h, n in HOSTS:
            w = World(os.path.join(self.root, "far-" + h), "%s-%s" % (tag, h), "/usr/bin:/bin")
            self.far[h] = w
            self.socks.append(w.sock)
        self.socks.append(self.local.sock)
        self.control = os.path.join(self.local.env["XDG_RUNTIME_DIR"], "hqt", "ssh")

        self.start_sshd()
        for h, n in HOSTS:
            w = self.far[h]
            proj = os.path.join(w.base, "proj")
            os.mkdir(proj)
            # Made there directly (its tmux server started outside sshd):
            # the bench times what a list costs, not how the sessions came.
            w.hqt("project", "add", "p", proj)
            for i in range(n):
                w.hqt("new", "p", "sleeper", "--nickname", "%s-s%d" % (h, i + 1))
            self.local.hqt("host", "add", h, h, "--command", w.command())
            # The first read makes the shared connection (and hqt its
            # directory); it lists them all.
            got = json.loads(self.local.hqt("--host", h, "list", "--json").stdout)
            if len(got) != n:
                raise SystemExit("hosts.py: %s listed %d sessions, not %d" % (h, len(got), n))
            if self.master_pid(h) is None:
                raise SystemExit("hosts.py: no shared connection to %s after a read" % h)
        say("  sshd on 127.0.0.1 ports %s; hosts %s with %s sessions; %d cpus, load %s"
            % (", ".join(map(str, self.ports)), ", ".join(h for h, _ in HOSTS),
               ", ".join(str(n) for _, n in HOSTS), os.cpu_count(), load()))

    def start_sshd(self):
        cfg = os.path.join(self.keys, "sshd_config")
        with open(cfg, "w") as f:
            f.write("".join("Port %d\n" % p for p in self.ports))
            f.write("ListenAddress 127.0.0.1\nHostKey {k}/host_key\nPidFile {k}/sshd.pid\n"
                    "AuthorizedKeysFile {k}/authorized_keys\nStrictModes no\nUsePAM no\n"
                    "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                    "KbdInteractiveAuthentication no\nLogLevel VERBOSE\n".format(k=self.keys))
        self.sshd_log = os.path.join(self.keys, "sshd.log")
        log = open(self.sshd_log, "ab")
        if os.getuid() == 0:
            # Privilege separation wants /run/sshd: a /run of our own, in a
            # mount namespace of our own, where root's shell start-up files
            # are empty too (the remote commands run no rc file).
            sh = ("mount -t tmpfs -o mode=755 none /run && mkdir -m 755 /run/sshd && "
                  "h=$(getent passwd 0 | cut -d: -f6) && "
                  "for f in .bashrc .bash_profile .profile; do "
                  "[ ! -f \"$h/$f\" ] || mount --bind /dev/null \"$h/$f\" || exit 1; done && "
                  "exec %s -D -e -f %s" % (SSHD, shlex.quote(cfg)))
            argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", sh]
        else:
            say("  (not root: the remote shell reads your own shell start-up files; "
                "A and B's ssh pay them alike)")
            argv = [SSHD, "-D", "-e", "-f", cfg]
        self.sshd = subprocess.Popen(argv, stdin=DEVNULL, stdout=log, stderr=log)
        log.close()
        for _ in range(100):
            r = subprocess.run([self.ssh, "-o", "ControlPath=none", "-o", "BatchMode=yes",
                                "-o", "ConnectTimeout=5", HOSTS[0][0], "true"], stdin=DEVNULL,
                               capture_output=True, env=self.local.env, timeout=30)
            if r.returncode == 0:
                return
            if self.sshd.poll() is not None:
                break
            time.sleep(0.05)
        with open(self.sshd_log) as f:
            raise SystemExit("hosts.py: sshd did not come up:\n" + f.read()[-2000:])

    def ssh_argv(self, host, command):
        """ssh as hqt runs it (core/remote.c remote_argv), without a tty."""
        return ["ssh", "-T", "-o", "BatchMode=yes", "-o", "ControlMaster=auto",
                "-o", "ControlPath=%s/%%C" % self.control, "-o", "ControlPersist=600",
                "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=15", "--", host, command]

    def master_pid(self, host):
        r = subprocess.run([self.ssh, "-o", "ControlPath=%s/%%C" % self.control, "-O", "check",
                            host], env=self.local.env, stdin=DEVNULL, capture_output=True,
                           text=True, timeout=30)
        m = re.search(r"pid=(\d+)", r.stderr)
        return int(m.group(1)) if m else None

    def sessions_started(self):
        """Commands sshd started so far (its VERBOSE log says each)."""
        with open(self.sshd_log, errors="replace") as f:
            return sum(1 for line in f if "Starting session: command" in line)

    # ---- (1) one host ----

    def one_host(self):
        h, n = HOSTS[0]
        w, L = self.far[h], self.local
        a = Cmd([HQT, "--host", h, "list", "--json"], L.env, "hqt --host %s list --json" % h)
        direct = shlex.split(w.command()) + ["list", "--json"]
        ba = Cmd(direct, {"PATH": "/usr/bin:/bin"}, "%s's hqt list --json, run there" % h)
        bb = Cmd(self.ssh_argv(h, "true"), L.env, "ssh %s true, the shared connection" % h)
        say("one host (%s, %d sessions), the shared connection warm: %d alternating pairs, "
            "%d untimed" % (h, n, RUNS, WARMUP))
        t = {c: [] for c in (a, ba, bb)}
        for i in range(WARMUP + RUNS):
            for c in ([a, ba, bb] if i % 2 == 0 else [bb, ba, a]):
                m = measured(c)
                if i >= WARMUP:
                    t[c].append(m)
        col = lambda c, k: [x[k] for x in t[c]]  # noqa: E731
        A, CA = col(a, 0), col(a, 1)
        B = [x + y for x, y in zip(col(ba, 0), col(bb, 0))]
        CB = [x + y for x, y in zip(col(ba, 1), col(bb, 1))]
        side_line("A  " + a.label, A, CA)
        side_line("B  " + ba.label, col(ba, 0), col(ba, 1))
        side_line("   + " + bb.label, col(bb, 0), col(bb, 1))
        side_line("B  the sum, per pair", B, CB)
        say("  (cpu: wait4's rusage, the process and the children it reaped: A is hqt here "
            "and its ssh client, not the host's side)")
        say("  all the CPU a run set going, here and on the host (one machine here; mean): "
            "A %.1f ms, B %.1f + %.1f ms"
            % tuple(statistics.mean(col(c, 2)) for c in (a, ba, bb)))
        return verdict("hosts-one", A, B, CA, CB, GOAL_ONE)

    # ---- (2) three hosts ----

    def three_hosts(self):
        L = self.local
        total = sum(n for _, n in HOSTS)
        got = json.loads(L.hqt("list", "--all", "--json").stdout)
        if len(got) != total:
            raise SystemExit("hosts.py: list --all listed %d sessions, not %d" % (len(got), total))
        a = Cmd([HQT, "list", "--all", "--json"], L.env, "hqt list --all --json")
        bs = [Cmd([HQT, "--host", h, "list", "--json"], L.env,
                  "hqt --host %s list --json (%d sessions)" % (h, n)) for h, n in HOSTS]
        here = Cmd([HQT, "list", "--json"], L.env, "hqt list --json (here: no sessions)")
        say("three hosts (%s sessions; none here), the shared connections warm: %d alternating "
            "pairs, %d untimed" % ("+".join(str(n) for _, n in HOSTS), RUNS, WARMUP))
        t = {c: [] for c in [a, here] + bs}
        for i in range(WARMUP + RUNS):
            for c in ([a] + bs if i % 2 == 0 else bs[::-1] + [a]):
                m = measured(c)
                if i >= WARMUP:
                    t[c].append(m)
        # What A does before it asks the hosts (its own list, no host
        # asked), apart from the pairs: not part of any ratio.
        for i in range(min(RUNS, 10)):
            t[here].append(measured(here))
        col = lambda c, k: [x[k] for x in t[c]]  # noqa: E731
        A, CA = col(a, 0), col(a, 1)
        slow = [max(x) for x in zip(*(col(c, 0) for c in bs))]
        cslow = [max(x) for x in zip(*(col(c, 1) for c in bs))]
        summed = [sum(x) for x in zip(*(col(c, 0) for c in bs))]
        csum = [sum(x) for x in zip(*(col(c, 1) for c in bs))]
        side_line("A  " + a.label, A, CA)
        for c in bs:
            side_line("   " + c.label, col(c, 0), col(c, 1))
        side_line("B  the slowest of the three, per pair", slow, cslow)
        side_line("   the sum of the three, per pair", summed, csum)
        side_line("   (apart: " + here.label + ")", col(here, 0), col(here, 1))
        ma = statistics.mean(col(a, 2))
        say("  all the CPU a run set going, here and on the hosts (one machine here; mean): "
            "A %.1f ms, the three B %s ms; on %d cpus A cannot take less than %.1f ms"
            % (ma, " + ".join("%.1f" % statistics.mean(col(c, 2)) for c in bs),
               os.cpu_count(), ma / os.cpu_count()))
        say(" against the slowest:")
        r1 = verdict("hosts-all", A, slow, CA, cslow, GOAL_ALL)
        say(" against the sum (for scale; parallel is well under 1):")
        r2 = verdict("hosts-all-sum", A, summed, CA, csum, 0)
        return [r1, r2]

    # ---- (3) the idle TUI ----

    def tui(self):
        L = self.local
        hosts = [h for h, _ in HOSTS[:2]]
        for h, _ in HOSTS[2:]:
            L.hqt("host", "rm", h)
        # The TUI's very read, timed as the pairs are: its ssh client's CPU
        # (wait4's rusage: the client, the wrapper's sh exec'd into it),
        # and the host's hqt for the same list run directly.
        reads = [Cmd(self.ssh_argv(h, self.far[h].command() + " 'list' '--json'"), L.env,
                     "ssh %s <its hqt> list --json" % h) for h in hosts]
        directs = [Cmd(shlex.split(self.far[h].command()) + ["list", "--json"],
                       {"PATH": "/usr/bin:/bin"}, "%s's hqt list --json" % h) for h in hosts]
        cli, there = [], []
        for i in range(20):
            for c in reads:
                cli.append(timed(c)[1])
            for c in directs:
                there.append(timed(c)[1])
        per_read = statistics.median(cli)
        masters = {h: self.master_pid(h) for h in hosts}
        if None in masters.values():
            raise SystemExit("hosts.py: no shared connection to %s" % masters)

        subprocess.run(["tmux", "-L", self.tui_sock, "-f", "/dev/null", "new-session", "-d",
                        "-s", "tui", "-x", "160", "-y", "40", HQT, "tui"], env=L.env,
                       stdin=DEVNULL, check=True, capture_output=True, timeout=30)
        screen = ""
        for _ in range(300):
            screen = subprocess.run(["tmux", "-L", self.tui_sock, "capture-pane", "-p", "-t",
                                     "tui"], env=L.env, capture_output=True, text=True,
                                    timeout=30).stdout
            if all(h + ":p" in screen for h in hosts) and "asking" not in screen:
                break
            time.sleep(0.2)
        else:
            raise SystemExit("hosts.py: the TUI never showed both hosts' rows:\n" + screen)
        pid = int(subprocess.run(["tmux", "-L", self.tui_sock, "display", "-p", "-t", "tui",
                                  "#{pane_pid}"], env=L.env, capture_output=True, text=True,
                                 check=True, timeout=30).stdout)
        with open("/proc/%d/comm" % pid) as f:
            comm = f.read().strip()
        if comm != "hqt-tui":
            raise SystemExit("hosts.py: the pane runs %s, not hqt-tui" % comm)
        time.sleep(3)  # its first reads and draws settle

        def snap():
            return (time.monotonic(), threads_ns(pid), stat_ticks(pid),
                    {h: schedstat_ns(p) for h, p in masters.items()}, self.sessions_started())
        t0, th0, tk0, m0, s0 = snap()
        say("the idle TUI with two hosts (%s: %s sessions), pid %d, left alone for %d s..."
            % (", ".join(hosts), ", ".join(str(n) for _, n in HOSTS[:2]), pid, IDLE))
        time.sleep(IDLE)
        t1, th1, tk1, m1, s1 = snap()
        el = t1 - t0
        pct = lambda ns: 100.0 * ns / 1e9 / el  # noqa: E731
        self_ns = sum(th1[t] - th0[t] for t in th1 if t in th0)
        main_ns = th1.get(pid, 0) - th0.get(pid, 0)
        gone = sorted(set(th0) - set(th1))
        kids_ticks = (tk1[2] - tk0[2]) + (tk1[3] - tk0[3])
        own_ticks = (tk1[0] - tk0[0]) + (tk1[1] - tk0[1])
        n_reads = s1 - s0
        clients = 100.0 * kids_ticks / HZ / el
        estimate = 100.0 * n_reads * per_read / 1000 / el
        mas = pct(sum(m1[h] - m0[h] for h in hosts))
        expect = len(hosts) * (el / 3 + el / 30)
        say("  TUI itself (%d threads)   %7.3f%% of a core   (goal <= %g%%)"
            % (len(th1), pct(self_ns), GOAL_TUI))
        say("    its loop (main thread) %7.3f%%; the host threads %.3f%%%s"
            % (pct(main_ns), pct(self_ns - main_ns),
               "; threads gone meanwhile: %s (not counted)" % gone if gone else ""))
        say("    the same in clock ticks of /proc/PID/stat (%.0f ms): %.3f%%"
            % (1000 / HZ, 100.0 * own_ticks / HZ / el))
        say("  reads over ssh            %d in %.0f s (sshd's log; every 3 s list, every 30 s "
            "project list a host: about %.0f)" % (n_reads, el, expect))
        say("  its ssh clients, measured %7.3f%% of a core   (the children it reaped: "
            "cutime+cstime, %d ticks of %.0f ms)" % (clients, kids_ticks, 1000 / HZ))
        say("  its ssh clients, estimate %7.3f%% of a core   (%d reads x %.2f ms, the median "
            "CPU of one such client, %d runs)" % (estimate, n_reads, per_read, len(cli)))
        say("  the two shared connections' ssh masters %.3f%% of a core" % mas)
        say("  on the hosts (here the same machine): their hqt's list %.2f ms of CPU a read "
            "(median, run directly): %.3f%% of a core, sshd's share not counted"
            % (statistics.median(there), 100.0 * n_reads * statistics.median(there) / 1000 / el))
        subprocess.run(["tmux", "-L", self.tui_sock, "send-keys", "-t", "tui", "q"], env=L.env,
                       capture_output=True, timeout=30)
        for _ in range(100):
            if not alive(pid):
                break
            time.sleep(0.1)
        else:
            say("  (the TUI did not end on q; its tmux server is stopped)")
        return "result\thosts-tui\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%.0f\t%.4f\t%.4f" % (
            pct(self_ns), clients, estimate, mas, n_reads, el, pct(main_ns),
            pct(self_ns - main_ns))

    # ---- the end ----

    def cleanup(self):
        # The shared connections first: sshd's session processes end with
        # them.
        if os.path.isdir(getattr(self, "control", "/nonexistent")):
            for h, _ in HOSTS:
                subprocess.run([self.ssh, "-o", "ControlPath=%s/%%C" % self.control, "-O", "exit",
                                h], env=self.local.env, stdin=DEVNULL, capture_output=True,
                               timeout=30)
        tmpdir = os.environ.get("TMUX_TMPDIR") or "/tmp"
        for s in self.socks:
            subprocess.run(["tmux", "-L", s, "kill-server"], stdin=DEVNULL, capture_output=True,
                           timeout=30)
            try:  # tmux leaves its socket behind
                os.unlink(os.path.join(tmpdir, "tmux-%d" % os.getuid(), s))
            except OSError:
                pass
        if self.sshd is not None and self.sshd.poll() is None:
            self.sshd.terminate()
            try:
                self.sshd.wait(10)
            except subprocess.TimeoutExpired:
                self.sshd.kill()
                self.sshd.wait(10)
        # A tmux server with many windows takes a moment to end.
        for _ in range(50):
            reap()
            left = our_children()
            if not left:
                break
            time.sleep(0.1)
        if left:
            say("  left behind, now stopped: %s" % ", ".join("%d (%s)" % kv for kv in left.items()))
            for p in left:
                try:
                    os.kill(p, signal.SIGTERM)
                except OSError:
                    pass
            time.sleep(0.5)
            reap()
        shutil.rmtree(self.root, ignore_errors=True)


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "all"
    if mode not in ("list", "tui", "all") or len(sys.argv) > 2:
        sys.exit("usage: bench/hosts.py [list|tui|all]")
    if not os.access(SSHD, os.X_OK):
        say("hosts.py: skipped: no sshd")
        say("  (no %s: apt-get install openssh-server)" % SSHD)
        return
    for tool in ("ssh", "ssh-keygen", "tmux") + (("unshare",) if os.getuid() == 0 else ()):
        if shutil.which(tool) is None:
            say("hosts.py: skipped: no %s" % tool)
            return
    if not os.access(HQT, os.X_OK):
        sys.exit("hosts.py: no hqt at %s (build first, or set HQT)" % HQT)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("hosts.py: terminated"))
    subreaper()
    b = Bench()
    results = []
    started = time.monotonic()
    try:
        b.setup()
        if mode in ("list", "all"):
            results.append(b.one_host())
            results += b.three_hosts()
        if mode in ("tui", "all"):
            results.append(b.tui())
    finally:
        b.cleanup()
    say("  (%.0f s; load %s)" % (time.monotonic() - started, load()))
    for r in results:
        say(r)


if __name__ == "__main__":
    main()
