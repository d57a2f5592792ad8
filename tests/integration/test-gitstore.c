/* test-gitstore.c: a sandboxed session's private git store and the import
 * of its commits (SPEC §12 "Commits from a sandbox", issue 22), with the real
 * git, bwrap and tmux.  Each attack is made by the agent inside a real
 * sandboxed session (the generic harness runs a bash script the test
 * writes), each with a control that shows the payload works where the
 * protection is not in the way, and the effect is looked for where it would
 * land: the repository's refs and objects, marker files, the worktree's
 * real .git.
 *
 * The agent's script talks to the test in steps: it writes .t/ready-N in
 * its worktree and waits for .t/go-N (the directory .t is excluded from
 * git status on both sides). */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <dirent.h>
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process.h"
#include "support.h"

static struct tenv te;
static char *proj;    /* the project "p": a git repository with one commit */
static char *script;  /* what the harness runs */
static char *marks;   /* where a payload run on the host leaves its marker */

/* The agent's script: a prelude, then body.  In body: $g is its git
 * directory (the store), $c the repository's common directory (through
 * the store's alternates), $b the session's branch, $base the commit it
 * started from, `step N` hands over to the test, `try NAME CMD...`
 * records "NAME ok" or "NAME FAIL: <stderr>". */
static void
agent(const char *body)
{
	write_file(script,
		   fmt("#!/bin/bash\n"
		       "mkdir -p .t; exec >>.t/log 2>&1\n"
		       "export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=a@a "
		       "GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=a@a\n"
		       "g=$(git rev-parse --absolute-git-dir); echo .t/ >> \"$g/info/exclude\"\n"
		       "c=$(sed 's|/objects$||' \"$g/objects/info/alternates\")\n"
		       "b=$(git symbolic-ref --short HEAD); base=$(git rev-parse HEAD)\n"
		       "M='%s'\n"
		       "step() { echo \"== step $1\"; : > .t/ready-$1; "
		       "while [ ! -e .t/go-$1 ]; do sleep 0.02; done; }\n"
		       "try() { local n=$1; shift; if \"$@\" 2>.t/err; then echo \"$n ok\"; "
		       "else echo \"$n FAIL: $(head -c 300 .t/err)\"; fi; }\n"
		       "%s\necho DONE\nsleep 1000\n", marks, body),
		   0755);
}

static void
setup(void)
{
	char *ini;
	struct run r;

	tenv_init(&te, "");
	script = fmt("%s/bin/agent", te.root);
	ini = fmt("[sessions]\nworktree_dir = %s/wt\n"
		  "[harness.agent]\nplugin = generic\ncommand = %s\n", te.root, script);
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("%s[hqt]\ntmux_socket = %s\n", ini, te.socket), 0644);
	free(ini);
	marks = fmt("%s/marks", te.root);
	mkdir(marks, 0755);
	proj = fmt("%s/proj", te.root);
	mkdir(proj, 0755);
	const char *init[] = { "sh", "-c",
			       "cd \"$1\" && git init -q -b main && echo one > a.txt && "
			       "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one && "
			       "echo .t/ >> .git/info/exclude",
			       "sh", proj, NULL };
	run_argv(&r, &te, init, NULL);
	cr_assert_eq(r.code, 0, "git init: %s", r.err);
	run_free(&r);
	run_ok(&te, "project", "add", "p", proj, NULL);
}

static void
teardown(void)
{
	tenv_free(&te);
	free(proj);
	free(script);
	free(marks);
}

TestSuite(gitstore, .init = setup, .fini = teardown, .timeout = 90);

/* sh -c CMD in dir, its stdout (trailing blanks trimmed); the exit in *code
 * when code is given, else asserted 0. */
static char *
sh_rc(const char *dir, const char *cmd, int *code)
{
	struct run r;
	char *full = fmt("cd '%s' && %s", dir, cmd), *out;
	const char *argv[] = { "bash", "-c", full, "sh", NULL };

	run_argv(&r, &te, argv, NULL);
	free(full);
	if (code != NULL)
		*code = r.code;
	else
		cr_assert_eq(r.code, 0, "%s: %s", cmd, r.err);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	for (size_t n = strlen(out); n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ');)
		out[--n] = '\0';
	return out;
}

static char *
sh(const char *dir, const char *cmd)
{
	return sh_rc(dir, cmd, NULL);
}

/* doctor's word on bubblewrap, with no harness on PATH. */
static bool
bwrap_ok(void)
{
	static const char *const tools[] = { "tmux", "bwrap", "env", "git", NULL };
	struct run r;
	json_t *j, *c;
	size_t i;
	bool ok = false;
	char *bin = tools_dir(&te, tools);

	tenv_put(&te, "PATH", bin);
	run_hqt(&r, &te, "doctor", "--json", NULL);
	tenv_put(&te, "PATH", TENV_PATH);
	free(bin);
	j = run_json(&r, "doctor --json");
	run_free(&r);
	json_array_foreach(json_object_get(j, "checks"), i, c)
		if (strcmp(json_string_value(json_object_get(c, "name")), "bubblewrap") == 0)
			ok = json_is_true(json_object_get(c, "ok"));
	json_decref(j);
	return ok;
}

/* A started sandboxed session: its id, worktree, branch and store. */
struct sess {
	long id;
	char *ids;
	char *wt;
	char *branch;
	char *store;   /* S */
	char *git;     /* S/git */
};

static void
start(struct sess *s)
{
	json_t *j, *g;

	s->id = run_new(&te, "p", "agent", "--sandbox", NULL);
	s->ids = fmt("%ld", s->id);
	j = run_show(&te, s->ids);
	cr_assert(json_is_string(json_object_get(j, "worktree")), "no worktree");
	s->wt = strdup(json_string_value(json_object_get(j, "worktree")));
	s->branch = strdup(json_string_value(json_object_get(j, "branch")));
	g = json_object_get(j, "git_store");
	cr_assert(json_is_object(g), "a sandboxed writable session in a worktree has a store");
	s->store = strdup(json_string_value(json_object_get(g, "path")));
	s->git = fmt("%s/git", s->store);
	json_decref(j);
}

static void
sess_free(struct sess *s)
{
	free(s->ids);
	free(s->wt);
	free(s->branch);
	free(s->store);
	free(s->git);
}

static char *
agent_log(const struct sess *s)
{
	char *t = slurp(fmt("%s/.t/log", s->wt));
	return t != NULL ? t : strdup("(no log)");
}

/* Wait for the agent's step n (20 s). */
static void
wait_step(const struct sess *s, int n)
{
	char *ready = fmt("%s/.t/ready-%d", s->wt, n);
	struct stat st;
	int i;

	for (i = 0; i < 1000 && stat(ready, &st) != 0; i++)
		sleep_ms(20);
	cr_assert_eq(stat(ready, &st), 0, "the agent did not reach step %d:\n%s", n, agent_log(s));
	free(ready);
}

static void
go_step(const struct sess *s, int n)
{
	write_file(fmt("%s/.t/go-%d", s->wt, n), "", 0644);
}

/* The lines of the agent's log since its step from-1 (all when from is 1). */
static bool
logged(const struct sess *s, const char *what)
{
	char *log = agent_log(s);
	bool yes = strstr(log, what) != NULL;

	free(log);
	return yes;
}

/* Run hqt ARGS (NULL-terminated) into r, in at most max_ms. */
static void
hqt_timed(struct run *r, int max_ms, const char *const *args)
{
	long long t0 = now_ms(), took;

	run_hqtv(r, &te, args);
	took = now_ms() - t0;
	cr_expect(took < max_ms, "hqt %s %s took %lld ms", args[0], args[1] ? args[1] : "", took);
}

/* No byte a terminal acts on: C0 controls but newline and tab, DEL, and C1
 * controls (raw, or UTF-8 encoded). */
static bool
clean_text(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
		if ((*p < ' ' && *p != '\n' && *p != '\t') || *p == 0x7f)
			return false;
		if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f)
			return false;
		if (*p >= 0x80 && *p <= 0x9f && (p == (const unsigned char *)s || p[-1] < 0xc0))
			return false;
	}
	return true;
}

/* The files under dir/objects (names and sizes), as one text, to compare. */
static char *
objects_of(const char *common)
{
	return sh(common, "find objects -type f -printf '%P %s\\n' | sort");
}

/* No file left of a refused import in the repository's objects. */
static void
expect_no_tmp(void)
{
	char *t = sh(proj, "find .git/objects -name 'tmp_*' -o -name '*.keep' | head -5");

	cr_expect_str_eq(t, "", "left behind: %s", t);
	free(t);
}

static int
marks_count(void)
{
	DIR *d = opendir(marks);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.') {
			cr_log_warn("marker: %s", de->d_name);
			n++;
		}
	closedir(d);
	return n;
}

/* The pid of the session's pane (hqt-launch), for waiting on its end. */
static pid_t
pane_pid(const struct sess *s)
{
	struct run r;
	pid_t pid;

	run_tmux(&r, &te, "list-panes", "-t", fmt("hqt-%ld", s->id), "-F", "#{pane_pid}", NULL);
	cr_assert_eq(r.code, 0, "%s", r.err);
	pid = (pid_t)strtol(r.out, NULL, 10);
	run_free(&r);
	cr_assert_gt(pid, 1);
	return pid;
}

/* hqt kill, then wait until the launcher is gone: it imports at the end. */
static void
kill_and_wait(const struct sess *s)
{
	pid_t pid = pane_pid(s);
	int i;

	run_ok(&te, "kill", s->ids, NULL);
	for (i = 0; i < 1500 && kill(pid, 0) == 0; i++)
		sleep_ms(20);
	cr_assert_neq(kill(pid, 0), 0, "the launcher %d did not end", (int)pid);
}

/*
 * Proof 1 (T8, T10, T9, T15): the agent commits, amends, rebases (rebase
 * -i), branches, stashes and gc's inside; `hqt sync` gives the session's
 * branch exactly the agent's tip and `git status` on the host stays clean.
 * Then its own rewrite (amend) of a branch the user left alone moves it
 * ("rewritten", the old tip in the reflog); the user committing on the
 * branch and the agent rewriting it again: "diverged", nothing moves, and
 * rm refuses.  Messages and a ref name with escape sequences print no raw
 * control character through sync and show.
 */
Test(gitstore, commits_inside_reach_the_branch_exactly)
{
	struct sess s;
	struct run r;
	char *tip, *out, *userc;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	agent("case \"$g\" in \"$c\"*) echo STORE IS REPO;; esac\n"
	      "try COMMIT sh -c 'echo two >> a.txt && git commit -qam two'\n"
	      "try AMEND sh -c 'echo amend >> a.txt && git commit -q --amend -am two-amended'\n"
	      "try BRANCH sh -c 'git checkout -qb side && echo s > s.txt && git add s.txt && "
	      "git commit -qm side && git checkout -q \"$0\"' \"$b\"\n"
	      "try C3 sh -c 'echo 3 > b.txt && git add b.txt && git commit -qm three'\n"
	      "try C4 sh -c 'echo 4 > c.txt && git add c.txt && git commit -qm four'\n"
	      /* rebase -i: the editor swaps the two picks, a real rewrite */
	      "try REBASE env GIT_SEQUENCE_EDITOR='sed -i -e 1h -e 1d -e 2G' git rebase -q -i HEAD~2\n"
	      "test \"$(git log -2 --format=%s | tr '\\n' ,)\" = three,four, && echo ORDER ok\n"
	      "try STASH sh -c 'echo dirty >> a.txt && git stash -q && test -z \"$(git status "
	      "--porcelain)\" && git stash pop -q && git commit -qam stashed'\n"
	      "try GC git gc -q\n"
	      "test -f \"$g/packed-refs\" && echo PACKED ok\n"
	      "try ESC git commit -q --allow-empty -m $'esc \\e[31mred\\e]52;c;aGk=\\a\\rCR \\xc2\\x9b2J'\n"
	      "git rev-parse HEAD > .t/tip1\n"
	      "try ODDHEAD git checkout -q -b $'odd\\xc2\\x9b31m'\n"
	      "step 1\n"
	      "git checkout -q \"$b\"\n"
	      "try REWRITE git commit -q --amend --allow-empty -m rewritten-by-agent\n"
	      "git rev-parse HEAD > .t/tip2\n"
	      "step 2\n"
	      "try AGAIN git commit -q --amend --allow-empty -m again\n"
	      "git rev-parse HEAD > .t/tip3\n"
	      "step 3\n");
	start(&s);
	wait_step(&s, 1);
	{
		char *log = agent_log(&s);
		static const char *const want[] = { "COMMIT ok", "AMEND ok", "BRANCH ok", "C3 ok",
						    "C4 ok", "REBASE ok", "ORDER ok", "STASH ok",
						    "GC ok", "PACKED ok", "ESC ok", "ODDHEAD ok" };
		cr_log_info("the agent:\n%s", log);
		for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
			cr_expect(strstr(log, want[i]) != NULL, "%s:\n%s", want[i], log);
		cr_expect(strstr(log, "STORE IS REPO") == NULL, "%s", log);
		free(log);
	}
	tip = sh(s.wt, "cat .t/tip1");
	/* nothing reached the repository by itself */
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), sh(proj, "git rev-parse main"));
	run_hqt(&r, &te, "list", NULL);
	cr_expect(strstr(r.out, "(commits to sync)") != NULL, "%s", r.out);
	run_free(&r);

	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "5 commits imported") != NULL, "%s", r.out);
	cr_expect(clean_text(r.out) && clean_text(r.err), "sync printed a control character:\n%s",
		  r.out);
	cr_expect(strstr(r.out, "esc ") != NULL, "the escaped subject: %s", r.out);
	run_free(&r);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), tip);
	cr_expect_str_eq(sh(proj, fmt("git log --format=%%s main..%s | tail -n +2 | tr '\\n' ,",
				     s.branch)), "stashed,three,four,two-amended,");
	cr_expect_str_eq(sh(proj, "git log -1 --format=%s main"), "one", "main never moves");
	cr_expect_str_eq(sh(proj, "git for-each-ref --format='%(refname)' refs/heads/side"), "",
			 "only the session's branch is imported");
	cr_expect_str_eq(sh(s.wt, "git status --porcelain"), "", "the host's view of the worktree");
	cr_expect_str_eq(sh(s.wt, "git rev-parse --git-dir"),
			 sh(proj, fmt("cd .git/worktrees/%s && pwd", strrchr(s.wt, '/') + 1)),
			 "the worktree's .git on the host names the repository");
	run_hqt(&r, &te, "show", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(clean_text(r.out), "show printed a control character:\n%s", r.out);
	cr_expect(strstr(r.out, "agent's HEAD") != NULL, "the store's HEAD elsewhere: %s", r.out);
	cr_expect(strstr(r.out, "5 commits, fast-forward") != NULL, "%s", r.out);
	run_free(&r);
	run_hqt(&r, &te, "show", "--json", s.ids, NULL);
	cr_expect(clean_text(r.out), "show --json: %s", r.out);
	run_free(&r);
	/* the control: git itself prints them raw */
	out = sh(proj, fmt("git log -1 --format=%%s %s", s.branch));
	cr_expect(!clean_text(out), "control: the subject has no control character");
	free(out);

	/* the agent amends: its own rewrite of a branch nobody else touched */
	go_step(&s, 1);
	wait_step(&s, 2);
	cr_expect(logged(&s, "REWRITE ok"));
	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "rewrote it") != NULL, "%s", r.out);
	run_free(&r);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), sh(s.wt, "cat .t/tip2"));
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s@{1}", s.branch)), tip, "the reflog");
	cr_expect_str_eq(sh(s.wt, "git status --porcelain"), "");

	/* the user commits on the branch, the agent rewrites it: diverged */
	sh(s.wt, "git -c user.name=u -c user.email=u@u commit -q --allow-empty -m user");
	userc = sh(proj, fmt("git rev-parse %s", s.branch));
	go_step(&s, 2);
	wait_step(&s, 3);
	cr_expect(logged(&s, "AGAIN ok"));
	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_neq(r.code, 0, "%s", r.out);
	cr_expect(strstr(r.out, "diverged") != NULL, "%s%s", r.out, r.err);
	run_free(&r);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), userc, "nothing moves");
	cr_expect_str_eq(sh(proj, fmt("git rev-parse refs/hqt/%s/heads/%s",
				     strrchr(s.store, '/') + 1, s.branch)),
			 sh(s.wt, "cat .t/tip3"), "the agent's tip is in the mirror ref");
	run_hqt(&r, &te, "show", s.ids, NULL);
	cr_expect(strstr(r.out, "diverged") != NULL, "%s", r.out);
	run_free(&r);
	run_hqt(&r, &te, "list", NULL);
	cr_expect(strstr(r.out, "(diverged)") != NULL, "%s", r.out);
	run_free(&r);
	/* rm never drops it silently */
	run_hqt(&r, &te, "rm", s.ids, NULL);
	cr_expect_eq(r.code, 1, "rm dropped diverged commits: %s", r.out);
	cr_expect(strstr(r.err, "diverged") != NULL, "%s", r.err);
	run_free(&r);
	struct stat st;
	cr_expect_eq(stat(s.git, &st), 0, "the store is kept");
	cr_expect_eq(stat(s.wt, &st), 0, "the worktree is kept");
	free(userc);
	free(tip);
	sess_free(&s);
}

/*
 * T14: strace -f over an hqt command: no git outside a bwrap (a host git)
 * has its working directory, --git-dir, -C or GIT_DIR in the store, and no
 * program under the store runs outside one.  Prints "violation ..." lines
 * and "inside N": how many gits ran in the store inside bwrap (the serve
 * sandbox's upload-pack, which shows the check sees them).
 */
static const char T14_PY[] =
	"import re,sys,os\n"
	"store=os.path.realpath(sys.argv[1]); log=sys.argv[2]\n"
	"def under(p):\n"
	"  p=os.path.normpath(p); return p==store or p.startswith(store+'/')\n"
	"parent={}; cwd={}; inside=set(); n=0; bad=[]; root=None\n"
	"spawn=re.compile(r'^(\\d+) +(?:<\\.\\.\\. )?(?:clone3?|v?fork)\\b.*= (\\d+)$')\n"
	"exe=re.compile(r'^(\\d+) +execve\\(\"([^\"]*)\", \\[(.*?)\\], \\[(.*?)\\]')\n"
	"cd=re.compile(r'^(\\d+) +chdir\\(\"([^\"]*)\"\\) = 0$')\n"
	"strs=re.compile(r'\"((?:[^\"\\\\]|\\\\.)*)\"')\n"
	"for line in open(log, errors='replace'):\n"
	"  line=line.rstrip('\\n')\n"
	"  if root is None: root=line.split()[0]\n"
	"  m=spawn.match(line)\n"
	"  if m:\n"
	"    p,c=m.group(1),m.group(2); parent[c]=p; cwd[c]=cwd.get(p)\n"
	"    if p in inside: inside.add(c)\n"
	"    continue\n"
	"  m=cd.match(line)\n"
	"  if m:\n"
	"    p=m.group(1); d=m.group(2)\n"
	"    cwd[p]=d if d.startswith('/') else os.path.join(cwd.get(p) or '/', d)\n"
	"    continue\n"
	"  m=exe.match(line)\n"
	"  if not m: continue\n"
	"  p,path=m.group(1),m.group(2)\n"
	"  argv=strs.findall(m.group(3)); env=strs.findall(m.group(4))\n"
	"  base=os.path.basename(path)\n"
	"  if base=='bwrap': inside.add(p)\n"
	"  isgit=base=='git' or base.startswith('git-')\n"
	"  hit=[]\n"
	"  if under(path): hit.append('program '+path)\n"
	"  if isgit:\n"
	"    if cwd.get(p) and under(cwd[p]): hit.append('cwd '+cwd[p])\n"
	"    for i,a in enumerate(argv):\n"
	"      if a.startswith('--git-dir=') and under(a[10:]): hit.append(a)\n"
	"      if a in ('--git-dir','-C') and i+1<len(argv) and under(argv[i+1]): hit.append(a+' '+argv[i+1])\n"
	"      if a in ('upload-pack','receive-pack','upload-archive') and any(under(x) for x in argv[i+1:] if x.startswith('/')): hit.append(a+' in the store')\n"
	"    for e in env:\n"
	"      if e.startswith('GIT_DIR=') and under(e[8:]): hit.append(e)\n"
	"  if not hit: continue\n"
	"  if p in inside or (p not in parent and p!=root): n+=1\n"
	"  else: bad.append('violation pid %s %s: %s' % (p, ' '.join(argv)[:300], '; '.join(hit)))\n"
	"for b in bad: print(b)\n"
	"print('inside %d' % n)\n";

static bool
have_strace(void)
{
	int code;
	char *v = sh_rc(te.root, "strace -f -qq -o /dev/null true 2>&1", &code);

	free(v);
	return code == 0;
}

/* prog ARGS (prog NULL: hqt) under strace; the T14 verdict ("inside N"
 * alone when clean). */
static char *
t14(const char *store, const char *prog, const char *const *args, int *code)
{
	static int n;
	char *log = fmt("%s/strace-%d.log", te.root, n++), *py = fmt("%s/t14.py", te.root);
	const char *argv[32] = { "strace", "-f", "-qq", "-v", "-s", "4096", "-e",
				 "trace=execve,chdir,clone,clone3,fork,vfork", "-o", log,
				 prog != NULL ? prog : hqt_bin() };
	size_t i = 11;
	struct run r;
	char *verdict;

	for (; *args != NULL && i < 31; args++)
		argv[i++] = *args;
	argv[i] = NULL;
	/* LeakSanitizer cannot run under ptrace (an ASan build) */
	tenv_put(&te, "ASAN_OPTIONS", "detect_leaks=0");
	run_argv(&r, &te, argv, NULL);
	tenv_put(&te, "ASAN_OPTIONS", getenv("ASAN_OPTIONS"));
	*code = r.code;
	run_free(&r);
	write_file(py, T14_PY, 0644);
	verdict = sh(te.root, fmt("python3 '%s' '%s' '%s'", py, store, log));
	free(py);
	free(log);
	return verdict;
}

/* What both sessions of hostile_store_runs_nothing_on_the_host do. */
static const char HOSTILE[] =
	"role=$(cat \"$(dirname \"$0\")/role\")\n"
	"try INSIDE touch \"$M/inside\"\n"
	"if [ \"$role\" = hostile ]; then\n"
	"  try C1 sh -c 'echo h1 > h.txt && git add h.txt && git commit -qm hostile-1'\n"
	"  mkdir -p \"$g/hooks\" \"$g/evilhooks\"\n"
	"  for h in applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit "
	"prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push "
	"pre-receive update proc-receive post-receive post-update reference-transaction "
	"push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman "
	"post-index-change; do\n"
	"    for d in hooks evilhooks; do\n"
	"      printf '#!/bin/sh\\ntouch \"%s/hook-%s-%s\"\\nexit 0\\n' \"$M\" $d $h > \"$g/$d/$h\"\n"
	"      chmod +x \"$g/$d/$h\"\n"
	"    done\n"
	"  done\n"
	"  cat >> \"$g/config\" <<EOF\n"
	"[core]\n"
	"\tfsmonitor = \"touch $M/fsmonitor; false\"\n"
	"\thooksPath = $g/evilhooks\n"
	"\tpager = \"touch $M/pager; cat\"\n"
	"\tsshCommand = \"touch $M/ssh; false\"\n"
	"\talternateRefsCommand = \"touch $M/altrefs; true\"\n"
	"\teditor = \"touch $M/editor; true\"\n"
	"\tgitProxy = \"touch $M/gitproxy; false\"\n"
	"\taskPass = \"touch $M/askpass; false\"\n"
	"[uploadpack]\n"
	"\tpackObjectsHook = \"touch $M/pohook; false\"\n"
	"[include]\n"
	"\tpath = extra.cfg\n"
	"[credential]\n"
	"\thelper = \"!touch $M/cred\"\n"
	"[diff]\n"
	"\texternal = \"touch $M/diffext; true\"\n"
	"[gc]\n"
	"\tauto = 1\n"
	"[pack]\n"
	"\tthreads = 1\n"
	"EOF\n"
	"  printf '[uploadpack]\\n\\tpackObjectsHook = \"touch %s/pohook-include; false\"\\n"
	"[core]\\n\\tpager = \"touch %s/pager-include; cat\"\\n' \"$M\" \"$M\" > \"$g/extra.cfg\"\n"
	"  git config --get-all uploadpack.packObjectsHook >/dev/null && echo PLANTED ok\n"
	"  step 1\n"
	/* everything still planted: the import at the end brings this one */
	"  try C2 git -c core.hooksPath=/dev/null -c core.fsmonitor=false commit -q --allow-empty -m hostile-2\n"
	"  git rev-parse HEAD > .t/tip2\n"
	"  step 2\n"
	"else\n"
	/* E3: a partial clone whose promisor remote's upload-pack is the
	 * payload, and a blob the branch needs gone */
	"  try LAZY sh -c 'echo lazy-$$-$RANDOM > lazy.txt && git add lazy.txt && git commit -qm lazy'\n"
	"  blob=$(git rev-parse HEAD:lazy.txt)\n"
	"  try DELETED rm \"$g/objects/${blob:0:2}/${blob:2}\"\n"
	"  git config core.repositoryformatversion 1 && git config extensions.partialClone evil &&\n"
	"  git config remote.evil.url /nonexistent-evil && git config remote.evil.promisor true &&\n"
	"  git config remote.evil.uploadpack \"touch $M/lazy; git-upload-pack\" && echo TRAP ok\n"
	"  step 1\n"
	"fi\n";

/*
 * Proof 2 (T1, T2, T14): a store whose configuration and hooks set
 * everything git would run, and a promisor-remote lazy-fetch trap; hqt's
 * sync, show, list, rm and the import at kill run none of it (marker
 * files), with GIT_NO_LAZY_FETCH=0 in hqt's environment, and no host git
 * runs in the store (strace).  The controls: a plain host git status in the
 * store runs the fsmonitor payload; a plain host fetch from the trap, with
 * that environment, runs the lazy-fetch payload.
 */
Test(gitstore, hostile_store_runs_nothing_on_the_host)
{
	struct sess a, l;
	struct run r;
	int code;
	bool strace = have_strace();
	char *role = fmt("%s/bin/role", te.root), *v;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	/* before anything starts: tmux's server and the launchers inherit it */
	tenv_put(&te, "GIT_NO_LAZY_FETCH", "0");
	agent(HOSTILE);
	write_file(role, "hostile\n", 0644);
	start(&a);
	wait_step(&a, 1);
	cr_expect(logged(&a, "C1 ok") && logged(&a, "PLANTED ok"), "%s", agent_log(&a));
	cr_expect(logged(&a, "INSIDE FAIL"), "the markers' directory is the host's only:\n%s",
		  agent_log(&a));

	{
		const char *args[] = { "sync", a.ids, NULL };
		if (strace) {
			v = t14(a.git, NULL, args, &code);
			cr_expect_eq(code, 0, "sync under strace");
			cr_expect(strstr(v, "violation") == NULL, "%s", v);
			cr_expect(strncmp(v, "inside 0", 8) != 0 && strncmp(v, "inside ", 7) == 0,
				  "control: strace saw no upload-pack in the store: %s", v);
			free(v);
		} else {
			run_hqtv(&r, &te, args);
			cr_expect_eq(r.code, 0, "%s", r.err);
			run_free(&r);
		}
	}
	cr_expect_str_eq(sh(proj, fmt("git log -1 --format=%%s %s", a.branch)), "hostile-1");
	{
		static const char *const verbs[][4] = { { "show", NULL }, { "show", "--json", NULL },
							{ "list", NULL }, { "list", "--json", NULL },
							{ "rm", NULL } };
		for (size_t i = 0; i < sizeof verbs / sizeof verbs[0]; i++) {
			const char *args[5] = { verbs[i][0], NULL, NULL, NULL, NULL };
			size_t n = 1;
			for (size_t k = 1; k < 4 && verbs[i][k] != NULL; k++)
				args[n++] = verbs[i][k];
			if (strcmp(args[0], "show") == 0 || strcmp(args[0], "rm") == 0)
				args[n++] = a.ids;
			if (strace) {
				v = t14(a.git, NULL, args, &code);
				cr_expect(strstr(v, "violation") == NULL, "%s: %s", args[0], v);
				free(v);
			} else {
				run_hqtv(&r, &te, args);
				code = r.code;
				run_free(&r);
			}
			/* rm: the imported commit is on no other branch */
			cr_expect_eq(code, strcmp(args[0], "rm") == 0 ? 1 : 0, "hqt %s", args[0]);
		}
	}
	cr_expect_eq(marks_count(), 0, "a plant ran on the host");

	/* the import at the end, by the launcher, in the same environment */
	go_step(&a, 1);
	wait_step(&a, 2);
	cr_expect(logged(&a, "C2 ok"), "%s", agent_log(&a));
	kill_and_wait(&a);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", a.branch)), sh(a.wt, "cat .t/tip2"),
			 "the import at kill brought the last commit");
	cr_expect_eq(marks_count(), 0, "a plant ran on the host");

	/* the lazy-fetch trap */
	write_file(role, "lazy\n", 0644);
	start(&l);
	wait_step(&l, 1);
	cr_expect(logged(&l, "LAZY ok") && logged(&l, "DELETED ok") && logged(&l, "TRAP ok"),
		  "%s", agent_log(&l));
	{
		const char *args[] = { "sync", l.ids, NULL };
		if (strace) {
			v = t14(l.git, NULL, args, &code);
			cr_expect(strstr(v, "violation") == NULL, "%s", v);
			free(v);
		} else {
			run_hqtv(&r, &te, args);
			code = r.code;
			run_free(&r);
		}
		cr_expect_neq(code, 0, "a store missing a blob imported");
	}
	run_hqt(&r, &te, "show", l.ids, NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "list", NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "rm", l.ids, NULL);
	cr_expect_eq(r.code, 1, "rm dropped commits it could not import: %s", r.err);
	cr_expect(strstr(r.err, "could not import") != NULL, "%s", r.err);
	run_free(&r);
	kill_and_wait(&l);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", l.branch)), sh(proj, "git rev-parse main"),
			 "nothing of the trap imported");
	cr_expect_eq(marks_count(), 0, "a plant ran on the host");

	/* the controls, from outside: the payloads are live */
	struct stat st;
	{
		char *gd = fmt("--git-dir=%s", a.git), *wt = fmt("--work-tree=%s", a.wt);
		const char *args[] = { gd, wt, "status", NULL };
		if (strace) {
			v = t14(a.git, "git", args, &code);
			cr_expect(strstr(v, "violation") != NULL,
				  "control: strace saw no host git in the store: %s", v);
			free(v);
		} else {
			sh(te.root, fmt("git '%s' '%s' status >/dev/null 2>&1; true", gd, wt));
		}
		free(gd);
		free(wt);
	}
	cr_expect_eq(stat(fmt("%s/fsmonitor", marks), &st), 0,
		     "control: a host git status in the store did not run its fsmonitor");
	sh(te.root, fmt("git init -q --bare ctl.git && GIT_NO_LAZY_FETCH=0 timeout 30 git -C ctl.git fetch -q "
			"'%s' refs/heads/%s >/dev/null 2>&1; true", l.git, l.branch));
	cr_expect_eq(stat(fmt("%s/lazy", marks), &st), 0,
		     "control: a plain fetch with GIT_NO_LAZY_FETCH=0 did not lazy-fetch");
	free(role);
	sess_free(&a);
	sess_free(&l);
}

/*
 * Proof 3 (T3, T4, T5, T12) and rm's refusal: the agent makes its branch a
 * commit with a .git entry, one with a ".." entry, one with a symbolic
 * link as .gitattributes, one with a bad email, one naming a blob whose
 * bytes are another's: each refused, nothing of it in the repository
 * (`git cat-file -e` fails there, its objects and refs as they were, no
 * temporary file left), and rm refuses to drop it.  A loose object of its
 * own under the name of a repository blob ("shadow") changes nothing of
 * the repository's.  A blob over the cap (HQT_GIT_IMPORT_MAX) is refused
 * before anything is fetched.  The controls: a plain fetch without fsck
 * takes the malformed commits, one with fsck but the symlink checks at
 * their default takes the symbolic .gitattributes, the agent's git reads
 * the forged bytes, the big commit imports without the cap.
 */
Test(gitstore, malformed_objects_are_refused_and_leave_nothing)
{
	struct sess s;
	struct run r;
	char *objs, *refs, *bad, *cs[5], *save = NULL;
	struct stat st;
	int code;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	agent("blob=$(git rev-parse HEAD:a.txt); tree=$(git rev-parse 'HEAD^{tree}')\n"
	      "mk() { git commit-tree \"$1\" -p \"$base\" -m \"$2\"; }\n"
	      "hk=$(printf '100755 blob %s\\tpost-checkout\\n' $blob | git mktree)\n"
	      "dg=$(printf '040000 tree %s\\thooks\\n' $hk | git mktree)\n"
	      "c1=$(mk $(printf '100644 blob %s\\ta.txt\\n040000 tree %s\\t.git\\n' $blob $dg | git mktree) dotgit)\n"
	      "c2=$(mk $(printf '100644 blob %s\\t..\\n100644 blob %s\\ta.txt\\n' $blob $blob | git mktree) dotdot)\n"
	      "lb=$(printf /etc/passwd | git hash-object -w --stdin)\n"
	      "c3=$(mk $(printf '120000 blob %s\\t.gitattributes\\n100644 blob %s\\ta.txt\\n' $lb $blob | git mktree) attrlink)\n"
	      "c4=$(printf 'tree %s\\nparent %s\\nauthor x <x<@x> 1700000000 +0000\\n"
	      "committer x <x@x> 1700000000 +0000\\n\\nbademail\\n' $tree $base | "
	      "git hash-object -t commit -w --stdin --literally)\n"
	      /* "good\n"'s name, "evil\n"'s bytes */
	      "good=$(echo good | git hash-object --stdin); evil=$(echo evil | git hash-object -w --stdin)\n"
	      "mkdir -p $g/objects/${good:0:2}\n"
	      "cp $g/objects/${evil:0:2}/${evil:2} $g/objects/${good:0:2}/${good:2}\n"
	      "test \"$(git cat-file -p $good)\" = evil && echo FORGED ok\n"
	      "c5=$(mk $(printf '100644 blob %s\\ta.txt\\n100644 blob %s\\tg.txt\\n' $blob $good | git mktree) mismatch)\n"
	      "echo $c1 $c2 $c3 $c4 $c5 > .t/bad\n"
	      "i=1; for x in $c1 $c2 $c3 $c4 $c5; do git update-ref refs/heads/bad-$i $x; i=$((i+1)); done\n"
	      "i=1; for x in $c1 $c2 $c3 $c4 $c5; do\n"
	      "  git update-ref refs/heads/$b $x && step $i; i=$((i+1))\n"
	      "done\n"
	      /* the shadow: its own loose object under the name of the
	       * repository's a.txt blob, used by a new commit */
	      "git update-ref refs/heads/$b $base\n"
	      "mkdir -p $g/objects/${blob:0:2}\n"
	      "cp $g/objects/${evil:0:2}/${evil:2} $g/objects/${blob:0:2}/${blob:2}\n"
	      "test \"$(git cat-file -p $blob)\" = evil && echo SHADOW ok\n"
	      "try SHADOWC sh -c 'echo n > n.txt && git add n.txt && git commit -qm shadow'\n"
	      "git rev-parse HEAD > .t/shadow\n"
	      "step 6\n"
	      "head -c 3000000 /dev/urandom > big.bin\n"
	      "try BIG sh -c 'git add big.bin && git commit -qm big'\n"
	      "git rev-parse HEAD > .t/big\n"
	      "step 7\n");
	start(&s);
	wait_step(&s, 1);
	cr_expect(logged(&s, "FORGED ok"), "control: the agent's git reads forged bytes:\n%s",
		  agent_log(&s));
	bad = sh(s.wt, "cat .t/bad");
	for (int i = 0; i < 5; i++)
		cs[i] = strdup(strtok_r(i == 0 ? bad : NULL, " ", &save));
	for (int i = 0; i < 5; i++) {
		if (i > 0) {
			go_step(&s, i);
			wait_step(&s, i + 1);
		}
		objs = objects_of(fmt("%s/.git", proj));
		refs = sh(proj, "git for-each-ref");
		run_hqt(&r, &te, "sync", s.ids, NULL);
		cr_expect_neq(r.code, 0, "malformed commit %d imported: %s", i + 1, r.out);
		cr_expect(clean_text(r.err), "%s", r.err);
		cr_log_info("commit %d: %s", i + 1, r.err);
		run_free(&r);
		sh_rc(proj, fmt("git cat-file -e %s", cs[i]), &code);
		cr_expect_neq(code, 0, "commit %d is in the repository", i + 1);
		cr_expect_str_eq(objects_of(fmt("%s/.git", proj)), objs, "commit %d", i + 1);
		cr_expect_str_eq(sh(proj, "git for-each-ref"), refs, "commit %d", i + 1);
		expect_no_tmp();
		free(objs);
		free(refs);
		if (i == 0) {
			run_hqt(&r, &te, "rm", s.ids, NULL);
			cr_expect_eq(r.code, 1, "rm dropped a commit it could not import");
			cr_expect(strstr(r.err, "could not import") != NULL, "%s", r.err);
			run_free(&r);
			cr_expect_eq(stat(s.git, &st), 0, "the store is kept");
			cr_expect_eq(stat(s.wt, &st), 0, "the worktree is kept");
		}
	}

	/* the shadow: imported, the repository's blob as it was */
	go_step(&s, 5);
	wait_step(&s, 6);
	cr_expect(logged(&s, "SHADOW ok") && logged(&s, "SHADOWC ok"),
		  "control: the agent's git reads the shadow:\n%s", agent_log(&s));
	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
	run_free(&r);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), sh(s.wt, "cat .t/shadow"));
	cr_expect_str_eq(sh(proj, fmt("git show %s:a.txt", s.branch)), "one");
	cr_expect_str_eq(sh(proj, "git show main:a.txt"), "one");
	sh(proj, "git fsck --no-dangling --no-progress 2>&1");

	/* over the cap: refused before anything is fetched */
	go_step(&s, 6);
	wait_step(&s, 7);
	cr_expect(logged(&s, "BIG ok"), "%s", agent_log(&s));
	objs = objects_of(fmt("%s/.git", proj));
	tenv_put(&te, "HQT_GIT_IMPORT_MAX", "1000000");
	run_hqt(&r, &te, "sync", s.ids, NULL);
	tenv_put(&te, "HQT_GIT_IMPORT_MAX", NULL);
	cr_expect_neq(r.code, 0, "a store over the cap imported");
	cr_expect(strstr(r.err, "HQT_GIT_IMPORT_MAX") != NULL, "%s", r.err);
	run_free(&r);
	cr_expect_str_eq(objects_of(fmt("%s/.git", proj)), objs, "something of it was kept");
	expect_no_tmp();
	free(objs);
	/* the control: without the cap it imports */
	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	cr_expect_str_eq(sh(proj, fmt("git rev-parse %s", s.branch)), sh(s.wt, "cat .t/big"));

	/* the controls: git takes the malformed ones when not asked to check */
	/* (the repository's objects first: the store's a.txt blob is the shadow) */
	sh(te.root, fmt("git init -q --bare ctl.git && git -C ctl.git fetch -q '%s' main && "
			"GIT_NO_LAZY_FETCH=1 git -C ctl.git "
			"-c fetch.fsckObjects=false -c transfer.fsckObjects=false fetch -q '%s' "
			"refs/heads/bad-1:refs/b1 refs/heads/bad-2:refs/b2 refs/heads/bad-4:refs/b4",
			proj, s.git));
	sh(te.root, fmt("GIT_NO_LAZY_FETCH=1 git -C ctl.git -c fetch.fsckObjects=true fetch -q '%s' "
			"refs/heads/bad-3:refs/b3 2>/dev/null", s.git));
	for (int i = 0; i < 4; i++) {
		sh_rc(fmt("%s/ctl.git", te.root), fmt("git cat-file -e %s", cs[i]), &code);
		cr_expect_eq(code, 0, "control: a plain fetch refused malformed commit %d", i + 1);
	}
	for (int i = 0; i < 5; i++)
		free(cs[i]);
	free(bad);
	sess_free(&s);
}

/*
 * Proof 4 (T6, T7) and 6 (T16): inside, the agent cannot write the
 * worktree's real .git file (nor remove, rename or unmount what is bound
 * over it), nor the repository's objects, refs or admin directory
 * (read-only), nor unshare itself a mount namespace to undo the binds;
 * the same writes into its own store (the control) work.  Its store shares
 * no inode with the repository's objects and a hard link across gives
 * EXDEV.  Then `rm --force` removes the store, whose objects/evil links to
 * a directory of the host's, without following it (the directory
 * survives), and the hidden refs.  The repository's core.hooksPath
 * (`.githooks`, relative: the worktree's own for a git run there) is
 * read-only in the worktree too, an existing hook and a new one.
 */
Test(gitstore, walls_hold_and_rm_force_follows_no_link)
{
	struct sess s;
	struct run r;
	char *dotgit, *before, *keep = fmt("%s/precious", te.root), *out;
	struct stat st;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	write_file(fmt("%s/keep.txt", keep), "keep\n", 0644);
	sh(proj, "git config core.hooksPath .githooks && mkdir .githooks && "
		 "printf '#!/bin/sh\\nexit 0\\n' > .githooks/pre-commit && "
		 "chmod +x .githooks/pre-commit && git add .githooks && "
		 "git -c user.name=t -c user.email=t@t commit -qm hooks");
	agent(fmt("d=$c/worktrees/${PWD##*/}; h=$(git rev-parse HEAD)\n"
		  "o=$(git rev-parse HEAD:a.txt); o=$c/objects/${o:0:2}/${o:2}\n"
		  "test -f $d/HEAD && test -f $o && echo FOUND ok\n"
		  "try HOOKW sh -c 'echo \"touch /tmp/x\" >> .githooks/pre-commit'\n"
		  "try HOOKNEW sh -c 'echo \"touch /tmp/x\" > .githooks/post-checkout'\n"
		  "try DOTGIT sh -c 'echo gitdir: /tmp > .git'\n"
		  "try RMDOTGIT rm -f .git\n"
		  "try MVDOTGIT mv .git .t/moved\n"
		  "try UMOUNT umount .git\n"
		  "try UMOUNTL umount -l .git\n"
		  "try UNSHARE unshare -Urm sh -c 'umount .git && echo gitdir: /tmp > .git'\n"
		  "try OBJ touch $c/objects/x\n"
		  "try OBJW sh -c \"chmod u+w $o; echo evil >> $o\"\n"
		  "try PACK touch $c/objects/pack/x\n"
		  "try REF sh -c \"echo $h > $c/refs/heads/evil\"\n"
		  "try PACKED sh -c \"echo $h refs/heads/evil >> $c/packed-refs\"\n"
		  "try ADMIN sh -c \"echo $h > $d/HEAD\"\n"
		  "try CONFIG sh -c \"echo '[core]' >> $c/config\"\n"
		  "try LINK ln $o $g/objects/linked\n"
		  /* the controls: the same into its own store, and a copy of .git */
		  "try OWNOBJ touch $g/objects/x\n"
		  "try OWNREF sh -c \"echo $h > $g/refs/heads/own\"\n"
		  "try OWNCOPY sh -c 'cp .git .t/dotgit && echo gitdir: /tmp > .t/dotgit'\n"
		  "ln -s '%s' $g/objects/evil && mkdir -p $g/deep/1/2/3/4/5/6/7/8 && "
		  "ln -s / $g/deep/1/2/3/4/5/6/7/8/root && echo PLANT ok\n"
		  "try COMMIT sh -c 'echo two >> a.txt && git commit -qam two'\n"
		  "step 1\n", keep));
	start(&s);
	dotgit = fmt("%s/.git", s.wt);
	before = slurp(dotgit);
	wait_step(&s, 1);
	out = agent_log(&s);
	cr_log_info("the agent:\n%s", out);
	{
		static const char *const ok[] = { "FOUND ok", "OWNOBJ ok", "OWNREF ok", "OWNCOPY ok",
						  "PLANT ok", "COMMIT ok" };
		static const char *const refused[] = { "DOTGIT", "RMDOTGIT", "MVDOTGIT", "UMOUNT",
						       "UMOUNTL", "UNSHARE", "OBJ", "OBJW", "PACK",
						       "REF", "PACKED", "ADMIN", "CONFIG", "LINK",
						       "HOOKW", "HOOKNEW" };
		static const char *const erofs[] = { "OBJ", "PACK", "REF", "PACKED", "ADMIN",
						     "CONFIG", "HOOKW", "HOOKNEW" };
		for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++)
			cr_expect(strstr(out, ok[i]) != NULL, "control %s:\n%s", ok[i], out);
		for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
			cr_expect(strstr(out, fmt("\n%s FAIL", refused[i])) != NULL,
				  "%s was not refused:\n%s", refused[i], out);
		for (size_t i = 0; i < sizeof erofs / sizeof erofs[0]; i++) {
			char *line = strstr(out, fmt("\n%s FAIL", erofs[i]));
			cr_expect(line != NULL && strstr(line, "Read-only file system") != NULL &&
					  strstr(line, "Read-only file system") < strchr(line + 1, '\n'),
				  "%s: not EROFS:\n%s", erofs[i], out);
		}
		char *line = strstr(out, "\nLINK FAIL");
		cr_expect(line != NULL && strstr(line, "cross-device") != NULL, "LINK: %s", out);
	}
	/* where it would land */
	cr_expect_str_eq(slurp(dotgit), before, "the worktree's .git changed");
	cr_expect_str_eq(slurp(fmt("%s/.githooks/pre-commit", s.wt)), "#!/bin/sh\nexit 0\n",
			 "the worktree's hook changed");
	cr_expect_neq(stat(fmt("%s/.githooks/post-checkout", s.wt), &st), 0,
		      "a hook was planted in the worktree");
	cr_expect_str_eq(sh(s.wt, "git status --porcelain --untracked-files=no"), " M a.txt");
	cr_expect_str_eq(sh(proj, "git cat-file -p HEAD:a.txt"), "one");
	cr_expect_str_eq(sh(proj, "git for-each-ref --format='%(refname)' refs/heads"),
			 fmt("refs/heads/%s\nrefs/heads/main", s.branch));
	cr_expect_str_eq(sh(proj, "git fsck --no-dangling --no-progress 2>&1"), "");
	/* no inode shared between the store and the repository's objects */
	cr_expect_str_eq(sh(te.root, fmt("find '%s' -type f -links +1 | head -3", s.git)), "");

	/* rm --force: the store goes, what its links point to stays */
	cr_expect_neq(strstr(sh(te.root, fmt("find -L '%s/objects' -name keep.txt 2>/dev/null",
					     s.git)), "keep.txt"), NULL,
		      "control: a walk that follows links reaches the host's directory");
	run_hqt(&r, &te, "rm", "--force", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	cr_expect_neq(lstat(s.store, &st), 0, "the store is still there");
	cr_expect_str_eq(slurp(fmt("%s/keep.txt", keep)), "keep\n", "rm --force followed a link");
	cr_expect_eq(stat("/usr/bin", &st), 0);
	cr_expect_str_eq(sh(proj, "git for-each-ref refs/hqt/"), "", "hidden refs left");
	cr_expect_neq(stat(s.wt, &st), 0, "the worktree is still there");
	free(out);
	free(before);
	free(dotgit);
	free(keep);
	sess_free(&s);
}

/*
 * A gitlink the import brings, over a directory where the agent made a git
 * of its own with a core.fsmonitor: the worktree's index does not follow
 * (with the gitlink in it, `git status` in the worktree runs the
 * submodule's git and its fsmonitor on the host), sync says so, and the
 * user's `git status` there runs nothing.  Control: with the index moved
 * as before (read-tree), the same `git status` runs the payload.  A hook
 * of the repository's core.hooksPath that the agent committed (the file is
 * read-only in the worktree, its blob is not) is among what to look at.
 */
Test(gitstore, a_gitlink_brought_in_leaves_the_worktree_index)
{
	struct sess s;
	struct run r;
	char *out, *base;
	int code;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	sh(proj, "git config core.hooksPath ./.githooks/ && mkdir .githooks && "
		 "printf '#!/bin/sh\\nexit 0\\n' > .githooks/pre-push && "
		 "chmod +x .githooks/pre-push && git add .githooks && "
		 "git -c user.name=t -c user.email=t@t commit -qm hooks");
	agent("try HOOK sh -c 'o=$(printf \"#!/bin/sh\\\\ntouch $M/hook\\\\n\" | "
	      "git hash-object -w --stdin) && "
	      "git update-index --cacheinfo 100755,$o,.githooks/pre-push && git commit -qm hook'\n"
	      "mkdir -p vendor/lib && (cd vendor/lib && git init -q && "
	      "git commit -q --allow-empty -m v && "
	      "git config core.fsmonitor \"touch $M/fsmonitor-ran; false\") && echo SUB ok\n"
	      "try GITLINK git update-index --add --cacheinfo "
	      "160000,$(git -C vendor/lib rev-parse HEAD),vendor/lib\n"
	      "try COMMIT git -c core.fsmonitor=false commit -qm 'vendor lib'\n"
	      "step 1\n");
	start(&s);
	wait_step(&s, 1);
	out = agent_log(&s);
	cr_assert(strstr(out, "SUB ok") && strstr(out, "COMMIT ok") && strstr(out, "HOOK ok"),
		  "the agent:\n%s", out);
	base = sh(proj, fmt("git rev-parse %s", s.branch));
	run_hqt(&r, &te, "sync", s.ids, NULL);
	cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
	cr_expect(strstr(r.out, "a submodule (gitlink)") != NULL, "%s", r.out);
	cr_expect(strstr(r.out, "index was left at the old tip") != NULL, "%s", r.out);
	cr_expect(strstr(r.out, ".githooks/pre-push: a hook your git runs") != NULL, "%s", r.out);
	run_free(&r);
	/* the branch moved, the worktree's index did not */
	cr_expect_str_eq(sh(proj, fmt("git log -1 --format=%%s %s", s.branch)), "vendor lib");
	cr_expect_str_eq(sh(s.wt, "git ls-files -s vendor/lib"), "");
	/* where it would land: the user's git status in the worktree */
	sh_rc(s.wt, "git status --porcelain >/dev/null 2>&1", &code);
	cr_expect_eq(marks_count(), 0, "git status in the worktree ran the agent's fsmonitor");
	/* control: the index moved as before, the same status runs it */
	sh(s.wt, fmt("git read-tree -m -i %s %s", base, s.branch));
	sh_rc(s.wt, "git status --porcelain >/dev/null 2>&1", &code);
	{
		/* (not marks_count: its warning is for a plant that ran) */
		char *m = fmt("%s/fsmonitor-ran", marks);
		struct stat st;

		cr_expect_eq(stat(m, &st), 0, "control: git status did not run the submodule's "
			     "fsmonitor");
		unlink(m);
		free(m);
	}
	run_hqt(&r, &te, "rm", "--force", s.ids, NULL);
	run_free(&r);
	free(base);
	free(out);
	sess_free(&s);
}

/*
 * A commit of 20000 symbolic links out of the tree (half a megabyte, far
 * under the cap): sync reads their targets in one git call, not one each
 * (that took six minutes), and says a bounded "look" list.
 */
Test(gitstore, a_flood_of_links_is_looked_at_promptly)
{
	struct sess s;
	struct run r;
	char *out;
	const char *args[] = { "sync", NULL, NULL };
	size_t lines = 0;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	agent("lb=$(printf /etc/passwd | git hash-object -w --stdin)\n"
	      "t=$(for i in $(seq -w 1 20000); do printf '120000 blob %s\\tl%s\\n' $lb $i; done | "
	      "git mktree)\n"
	      "try LINKS sh -c \"git update-ref refs/heads/$b $(git commit-tree $t -p $base -m links)\"\n"
	      "step 1\n");
	start(&s);
	wait_step(&s, 1);
	out = agent_log(&s);
	cr_assert(strstr(out, "LINKS ok") != NULL, "the agent:\n%s", out);
	args[1] = s.ids;
	hqt_timed(&r, 30000, args);
	cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
	for (const char *p = r.out; *p != '\0'; p++)
		lines += *p == '\n';
	cr_expect(strstr(r.out, "l00001: a symbolic link to /etc/passwd, outside the tree") != NULL,
		  "%.2000s", r.out);
	cr_expect(strstr(r.out, "more like these") != NULL, "%.2000s", r.out);
	cr_expect_lt(lines, 60, "sync printed %zu lines", lines);
	run_free(&r);
	run_hqt(&r, &te, "rm", "--force", s.ids, NULL);
	run_free(&r);
	free(out);
	sess_free(&s);
}

/*
 * Proof 7 (T13): the agent makes its store's HEAD or branch ref a FIFO, a
 * link to /dev/zero or to a file of the host's, a huge file, its
 * packed-refs, config or a loose object a FIFO, or its config including
 * /dev/stdin, /dev/ptmx or /proc/self/fd/0: `hqt list`, `show` (and their --json) and `sync`
 * return promptly and print nothing of it.  The control: before, its commit
 * reads as one to sync.  Then (T11) a flood of 5000 loose and 100000
 * packed refs, names git refuses (an escape, "..", a space, "-dash",
 * ".lock") and a tag beside its branch: the branch imports, no other ref
 * reaches the repository.
 */
Test(gitstore, odd_refs_in_the_store_read_as_unreadable_promptly)
{
	static const char *const phases[] = {
		"rm -f $r && mkfifo $r",
		"rm -f $g/HEAD && mkfifo $g/HEAD",
		"ln -sf /dev/zero $r",
		"ln -sf /dev/zero $g/HEAD",
		"echo SECRETSECRET > $r && truncate -s 200M $r",
		"ln -sf \"$SECRET\" $r",
		"ln -sf \"$SECRET\" $g/HEAD",
		"rm -f $r && mkfifo $g/packed-refs",   /* 8: hqt reads it */
		"printf 'ref: refs/heads/%s\\n' \"$b\" > $g/HEAD && truncate -s 200M $g/HEAD",
		/* what upload-pack opens beside the refs hqt reads */
		"mkfifo $g/packed-refs",
		"rm -f $g/config && mkfifo $g/config",
		"mkdir -p $g/info && ln -sf /dev/zero $g/info/grafts",
		"mkdir -p $g/objects/ff && mkfifo $g/objects/ff/$(printf %038d 0)",
		/* what the serve sandbox shows: its config may include any path */
		"printf '[include]\\n\\tpath = /dev/stdin\\n' >> $g/config",
		"printf '[include]\\n\\tpath = /dev/ptmx\\n' >> $g/config",
		"printf '[include]\\n\\tpath = /proc/self/fd/0\\n' >> $g/config",
	};
	const size_t n = sizeof phases / sizeof phases[0];
	char *body = strdup(""), *secret = fmt("%s/secret", te.root);
	struct sess s;
	struct run r;

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	write_file(secret, "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef\n", 0644);
	for (size_t i = 0; i < n; i++) {
		char *next = fmt("%s%s && echo PHASE%zu ok\nstep %zu\nrestore\n", body, phases[i], i + 1,
				 i + 2);
		free(body);
		body = next;
	}
	/* T11: then a flood of refs and odd names beside the branch, a tag */
	{
		char *next = fmt("%s"
				 "mkdir -p $g/refs/heads/flood && for i in $(seq 1 5000); do "
				 "echo $base > $g/refs/heads/flood/$i; done\n"
				 "seq 1 100000 | sed \"s|.*|$base refs/heads/packed/&|\" > $g/packed-refs\n"
				 "for n in $'ctl\\e[31m' 'x..y' -dash 'bad name' 'a.lock'; do "
				 "echo $base > \"$g/refs/heads/$n\"; done\n"
				 "git tag -f v1 && git commit -q --allow-empty -m after-flood && "
				 "echo FLOOD ok\nstep %zu\n", body, n + 2);
		free(body);
		body = next;
	}
	agent(fmt("SECRET='%s'; r=$g/refs/heads/$b\n"
		  "try COMMIT git commit -q --allow-empty -m mine\n"
		  "cp $g/HEAD .t/HEAD.save && cp $r .t/ref.save && cp $g/config .t/config.save\n"
		  "restore() { rm -f $g/HEAD $r $g/packed-refs $g/config $g/info/grafts "
		  "$g/objects/ff/$(printf %%038d 0); cp .t/HEAD.save $g/HEAD; cp .t/ref.save $r; "
		  "cp .t/config.save $g/config; }\n"
		  "step 1\n%s", secret, body));
	start(&s);
	wait_step(&s, 1);
	/* the control: a normal ref reads as commits to sync */
	run_hqt(&r, &te, "list", NULL);
	cr_expect(strstr(r.out, "(commits to sync)") != NULL, "control: %s", r.out);
	run_free(&r);
	for (size_t i = 0; i < n; i++) {
		const char *list[] = { "list", NULL }, *listj[] = { "list", "--json", NULL };
		const char *show[] = { "show", s.ids, NULL }, *showj[] = { "show", "--json", s.ids, NULL };
		const char *sync[] = { "sync", s.ids, NULL };
		const char *const *cmds[] = { list, listj, show, showj, sync };
		/* the refs hqt reads are the branch's (and packed-refs without it) */
		bool head = strstr(phases[i], "$r") == NULL && i != 7;

		go_step(&s, (int)i + 1);
		wait_step(&s, (int)i + 2);
		cr_expect(logged(&s, fmt("PHASE%zu ok", i + 1)), "%s", agent_log(&s));
		for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
			if ((k == 1 || k == 3) && i > 1)
				continue;  /* --json reads the same, once is enough */
			hqt_timed(&r, 5000, cmds[k]);
			cr_log_info("phase %zu: hqt %s: %d %s%s", i + 1, cmds[k][0], r.code, r.out, r.err);
			cr_expect(strstr(r.out, "SECRET") == NULL && strstr(r.out, "deadbeef") == NULL &&
					  strstr(r.err, "SECRET") == NULL && strstr(r.err, "deadbeef") == NULL,
				  "phase %zu: hqt %s printed it: %s%s", i + 1, cmds[k][0], r.out, r.err);
			cr_expect(clean_text(r.out) && clean_text(r.err), "phase %zu", i + 1);
			if (k == 0 && !head)
				cr_expect(strstr(r.out, "(git store unreadable)") != NULL,
					  "phase %zu: %s", i + 1, r.out);
			/* refused, but for the includes, which the serve sandbox
			 * does not have (git skips a missing one) */
			if (k == 4 && strstr(phases[i], "[include]") == NULL)
				cr_expect_neq(r.code, 0, "phase %zu: sync", i + 1);
			run_free(&r);
		}
	}
	/* the flood: the branch imports, nothing else comes */
	go_step(&s, (int)n + 1);
	wait_step(&s, (int)n + 2);
	cr_expect(logged(&s, "FLOOD ok"), "%s", agent_log(&s));
	{
		const char *sync[] = { "sync", s.ids, NULL }, *list[] = { "list", NULL };
		hqt_timed(&r, 10000, sync);
		cr_expect_eq(r.code, 0, "%s%s", r.out, r.err);
		cr_expect(clean_text(r.out) && clean_text(r.err), "%s%s", r.out, r.err);
		run_free(&r);
		hqt_timed(&r, 5000, list);
		cr_expect(clean_text(r.out), "%s", r.out);
		run_free(&r);
	}
	cr_expect_str_eq(sh(proj, fmt("git log -1 --format=%%s %s", s.branch)), "after-flood");
	{
		char *want = fmt("refs/heads/%s\nrefs/heads/main\nrefs/hqt/%s/base\n"
				 "refs/hqt/%s/heads/%s\nrefs/hqt/%s/promoted",
				 s.branch, strrchr(s.store, '/') + 1, strrchr(s.store, '/') + 1,
				 s.branch, strrchr(s.store, '/') + 1);
		cr_expect_str_eq(sh(proj, "git for-each-ref --format='%(refname)'"), want);
		free(want);
	}
	free(body);
	free(secret);
	sess_free(&s);
}
