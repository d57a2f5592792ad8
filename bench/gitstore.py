#!/usr/bin/python3
"""gitstore.py: `hqt sync` of one new commit against a plain `git fetch` of
one new commit from the same store (issue 22's goal: under 150 ms).

Its own world: a temporary HOME, a private tmux server, a git project, one
sandboxed writable session in a worktree (so it has a git store), its
harness idle.  Each pair: a new commit is made in the store on the
session's branch (untimed), `hqt sync N` runs (timed); a new commit on
another branch of the store (untimed), `git fetch STORE +that:refs/bench/x`
runs in the project (timed).  Each side is one process started with
posix_spawn and reaped (os.posix_spawn, os.waitpid): no shell in the timed
interval.  Pairs alternate which side goes first, after WARMUP untimed
pairs; the medians and the median of the per-pair ratios are printed, with
the last line for scripts:
    result gitstore-sync MEDIAN_HQT_MS MEDIAN_GIT_MS RATIO
Usage: bench/gitstore.py [RUNS]   (HQT=build/bin/hqt)
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 20
WARMUP = 3
HERE = os.path.dirname(os.path.abspath(__file__))
HQT = os.path.abspath(os.environ.get("HQT", os.path.join(HERE, "..", "build", "bin", "hqt")))


def timed(argv, env, cwd=None):
    """Wall milliseconds of argv as a whole process, spawned and reaped."""
    devnull = os.open(os.devnull, os.O_RDWR)
    old = os.getcwd()
    if cwd:
        os.chdir(cwd)
    try:
        t0 = time.perf_counter()
        pid = os.posix_spawn(argv[0], argv, env,
                             file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 0),
                                           (os.POSIX_SPAWN_DUP2, devnull, 1)])
        _, status = os.waitpid(pid, 0)
        t1 = time.perf_counter()
    finally:
        os.chdir(old)
        os.close(devnull)
    if status != 0:
        sys.exit("gitstore.py: %s failed (%d)" % (argv[:3], status))
    return (t1 - t0) * 1000


def main():
    if not shutil.which("bwrap"):
        print("gitstore.py: skipped: bwrap not installed")
        print("result gitstore-sync - - -")
        return
    root = tempfile.mkdtemp(prefix="hqt-gitstore-bench-")
    home = os.path.join(root, "home")
    proj = os.path.join(root, "proj")
    os.makedirs(os.path.join(home, ".config", "hqt"))
    os.makedirs(os.path.join(home, ".local", "share", "hqt"))
    os.makedirs(proj)
    run = os.path.join(root, "run")
    os.mkdir(run, 0o700)
    sock = "hqt-gitstore-bench-%d" % os.getpid()
    env = {"HOME": home, "PATH": "/usr/local/bin:/usr/bin:/bin", "XDG_RUNTIME_DIR": run,
           "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
           "XDG_CONFIG_HOME": os.path.join(home, ".config"), "LC_ALL": "C",
           "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@b", "GIT_COMMITTER_NAME": "b",
           "GIT_COMMITTER_EMAIL": "b@b"}
    with open(os.path.join(home, ".config", "hqt", "hqt.ini"), "w") as f:
        f.write("[hqt]\ntmux_socket = %s\n[harness.sleeper]\nplugin = generic\n"
                "command = sleep 100000\n" % sock)
    with open(os.path.join(home, ".local", "share", "hqt", "consent"), "w") as f:
        f.write("skip-permissions-in-sandbox accepted 0\n")
    git = shutil.which("git")

    def sh(*argv, cwd=None):
        return subprocess.run(argv, env=env, cwd=cwd, check=True, capture_output=True,
                              text=True).stdout.strip()
    try:
        sh(git, "init", "-q", "-b", "main", cwd=proj)
        with open(os.path.join(proj, "a.txt"), "w") as f:
            f.write("one\n")
        sh(git, "add", "a.txt", cwd=proj)
        sh(git, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "one", cwd=proj)
        sh(HQT, "project", "add", "p", proj)
        sid = sh(HQT, "new", "p", "sleeper", "--sandbox", "--net", "off")
        s = json.loads(sh(HQT, "show", sid, "--json"))
        store = s["git_store"]["path"] + "/git"
        branch = s["branch"]
        sh(git, "--git-dir", store, "update-ref", "refs/heads/bench-raw", "refs/heads/" + branch)
        n = [0]

        def commit(ref):
            # The bench's own git in the store it made (never hqt's).
            n[0] += 1
            head = sh(git, "--git-dir", store, "rev-parse", ref)
            blob = subprocess.run([git, "--git-dir", store, "hash-object", "-w", "--stdin"],
                                  input="%d\n" % n[0], env=env, capture_output=True, text=True,
                                  check=True).stdout.strip()
            tree = subprocess.run([git, "--git-dir", store, "mktree"],
                                  input="100644 blob %s\tf%d\n" % (blob, n[0]), env=env,
                                  capture_output=True, text=True, check=True).stdout.strip()
            c = sh(git, "--git-dir", store, "commit-tree", tree, "-p", head, "-m", "c%d" % n[0])
            sh(git, "--git-dir", store, "update-ref", ref, c)

        def hqt_side():
            commit("refs/heads/" + branch)
            return timed([HQT, "sync", sid], env)

        def git_side():
            commit("refs/heads/bench-raw")
            return timed([git, "fetch", "-q", "--no-tags", store,
                          "+refs/heads/bench-raw:refs/bench/raw"], env, cwd=proj)
        a, b, ratios = [], [], []
        for i in range(WARMUP + RUNS):
            if i % 2 == 0:
                x = hqt_side()
                y = git_side()
            else:
                y = git_side()
                x = hqt_side()
            if i >= WARMUP:
                a.append(x)
                b.append(y)
                ratios.append(x / y)
        ma, mb, mr = statistics.median(a), statistics.median(b), statistics.median(ratios)
        print("  hqt sync (one new commit) median %.1f ms" % ma)
        print("  git fetch (one new commit, same store) median %.1f ms" % mb)
        print("  ratio %.2fx (median of %d pairs); goal: hqt sync under 150 ms" % (mr, RUNS))
        print("result gitstore-sync %.1f %.1f %.2f" % (ma, mb, mr))
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], env=env, capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


main()
