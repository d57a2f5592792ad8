/* test-worktrees.c: a session's own git worktree (SPEC §8.3, §12), with the
 * real git and the real tmux: made on a branch of its own, commits from a
 * sandboxed agent land on that branch and nowhere else, and `hqt rm` never
 * loses work unless forced.  The harness is a generic one running a script
 * the test writes: it records where it runs and does what each test says. */
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <jansson.h>
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
static char *script;  /* what the harness runs, rewritten by each test */

/* The harness: `agent` is $ROOT/bin/agent, a script the test writes. */
static void
agent(const char *body)
{
	write_file(script, fmt("#!/bin/bash\n%s", body), 0755);
}

static void
setup(void)
{
	char *ini;

	tenv_init(&te, "");
	/* alone in its directory: a sandbox shows the harness's directory */
	script = fmt("%s/bin/agent", te.root);
	ini = fmt("[sessions]\nworktree_dir = %s/wt\n"
		  "[harness.agent]\nplugin = generic\ncommand = %s\n", te.root, script);
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("%s[hqt]\ntmux_socket = %s\n", ini, te.socket), 0644);
	free(ini);
	proj = fmt("%s/proj", te.root);
	mkdir(proj, 0755);
	struct run r;
	const char *init[] = { "sh", "-c",
			       "cd \"$1\" && git init -q -b main && echo one > a.txt && "
			       "git add a.txt && git -c user.name=t -c user.email=t@t commit -qm one",
			       "sh", proj, NULL };
	run_argv(&r, &te, init, NULL);
	cr_assert_eq(r.code, 0, "git init: %s", r.err);
	run_free(&r);
	run_ok(&te, "project", "add", "p", proj, NULL);
	/* by default the agent records where it runs (outside the worktree,
	 * whose changes are what rm weighs), then idles */
	agent("pwd > \"$HOME/where-${PWD##*/}.txt\"; sleep 1000\n");
}

static void
teardown(void)
{
	tenv_free(&te);
	free(proj);
	free(script);
}

TestSuite(worktrees, .init = setup, .fini = teardown, .timeout = 60);

/* sh -c CMD in dir; its stdout (trimmed), asserting success. */
static char *
sh(const char *dir, const char *cmd)
{
	struct run r;
	const char *argv[] = { "sh", "-c", cmd, "sh", NULL };
	char *out;

	{
		char *full = fmt("cd '%s' && %s", dir, cmd);
		argv[2] = full;
		run_argv(&r, &te, argv, NULL);
		free(full);
	}
	cr_assert_eq(r.code, 0, "%s: %s", cmd, r.err);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	for (size_t n = strlen(out); n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' ');)
		out[--n] = '\0';
	return out;
}

/* doctor's word on bubblewrap.  With no harness on PATH: doctor runs each
 * one it finds with --version, and the machine's are not this test's. */
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

static const char *
str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* The file the agent wrote in dir, once it is there. */
static char *
wait_file(const char *path)
{
	char *text = NULL;

	for (int i = 0; i < 200 && (text = slurp(path)) == NULL; i++)
		sleep_ms(25);
	cr_assert_not_null(text, "no %s", path);
	return text;
}

Test(worktrees, new_runs_on_its_own_branch_and_rm_refuses_to_lose_work)
{
	long id = run_new(&te, "p", "agent", "--worktree", "--nickname", "fix it", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	const char *wt = str(s, "worktree");
	char *want = fmt("%s/wt/p/%ld-fix-it", te.root, id);

	cr_assert_str_eq(wt, want);
	cr_assert_str_eq(str(s, "branch"), fmt("hqt/%ld-fix-it", id));
	char *where = wait_file(fmt("%s/where-%ld-fix-it.txt", te.home, id));
	cr_expect_str_eq(where, fmt("%s\n", want), "the harness runs in its worktree");
	/* git itself knows it, on its branch from the project's HEAD */
	char *list = sh(proj, "git worktree list --porcelain");
	cr_expect(strstr(list, fmt("worktree %s", want)) != NULL, "%s", list);
	cr_expect(strstr(list, fmt("branch refs/heads/hqt/%ld-fix-it", id)) != NULL, "%s", list);
	cr_expect_str_eq(str(s, "base"), sh(proj, "git rev-parse HEAD"));
	json_decref(s);

	/* an uncommitted change: refused, and nothing is removed */
	write_file(fmt("%s/a.txt", want), "two\n", 0644);
	struct run r;
	run_hqt(&r, &te, "rm", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "uncommitted change") != NULL, "%s", r.err);
	cr_expect(strstr(r.err, "hqt rm --force") != NULL, "%s", r.err);
	run_free(&r);
	s = run_show(&te, fmt("%ld", id));
	cr_expect(strstr(str(s, "diffstat"), "1 file changed") != NULL, "%s", str(s, "diffstat"));
	json_decref(s);
	struct stat st;
	cr_expect_eq(stat(want, &st), 0, "the worktree is still there");

	/* committed but neither merged nor pushed: refused too */
	sh(want, "git -c user.name=t -c user.email=t@t commit -qam two");
	run_hqt(&r, &te, "rm", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "1 commit on hqt/") != NULL, "%s", r.err);
	run_free(&r);

	/* merged: removed, worktree and branch */
	sh(proj, fmt("git merge -q --ff-only hqt/%ld-fix-it", id));
	run_ok(&te, "rm", fmt("%ld", id), NULL);
	cr_expect_neq(stat(want, &st), 0, "the worktree is gone");
	cr_expect(strstr(sh(proj, "git branch --list 'hqt/*'"), "hqt/") == NULL, "the branch stays");
	cr_expect_str_eq(sh(proj, "git log -1 --format=%s"), "two", "the merged work is kept");
}

Test(worktrees, force_removes_and_a_vanished_directory_is_pruned)
{
	long a = run_new(&te, "p", "agent", "--worktree=mine/feature", NULL);
	long b = run_new(&te, "p", "agent", "--worktree", NULL);
	json_t *sa = run_show(&te, fmt("%ld", a)), *sb = run_show(&te, fmt("%ld", b));
	char *wa = strdup(str(sa, "worktree")), *wb = strdup(str(sb, "worktree"));

	cr_assert_str_eq(str(sa, "branch"), "mine/feature");
	json_decref(sa);
	json_decref(sb);
	write_file(fmt("%s/new.txt", wa), "unsaved\n", 0644);
	run_ok(&te, "rm", "--force", fmt("%ld", a), NULL);
	struct stat st;
	cr_expect_neq(stat(wa, &st), 0);
	cr_expect(strstr(sh(proj, "git branch --list mine/feature"), "mine") == NULL);

	/* the directory removed behind hqt's back: reported, then pruned */
	run_ok(&te, "kill", fmt("%ld", b), NULL);
	rm_rf(wb);
	struct run r;
	run_hqt(&r, &te, "show", fmt("%ld", b), NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "the directory is gone") != NULL, "%s", r.out);
	run_free(&r);
	run_ok(&te, "rm", fmt("%ld", b), NULL);
	cr_expect(strstr(sh(proj, "git worktree list"), wb) == NULL, "pruned");
	free(wa);
	free(wb);
}

Test(worktrees, hidden_edits_count_as_work)
{
	long id = run_new(&te, "p", "agent", "--worktree", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	char *wt = strdup(str(s, "worktree"));

	json_decref(s);
	/* an edit git status no longer shows */
	sh(wt, "echo hidden >> a.txt && git update-index --skip-worktree a.txt && "
	       "test -z \"$(git status --porcelain)\"");
	struct run r;
	run_hqt(&r, &te, "rm", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "hidden from git status") != NULL, "%s", r.err);
	run_free(&r);
	free(wt);
}

/*
 * A repository put where a submodule goes in a session's worktree, with a
 * core.fsmonitor that touches a marker: git at the worktree's top runs it
 * (the control), hqt's own git never does (show, show --json, list, rm),
 * and rm keeps the worktree, whose submodule directory holds what git was
 * not asked to look at, unless forced.  The plant is made from outside
 * here: the sandbox keeps a session from making it (attacks::
 * git_plants_never_run_on_the_host), and this holds where that is not in
 * the way (an unsandboxed session, a worktree of an older hqt).
 */
Test(worktrees, hqt_s_own_git_obeys_no_submodule_plant)
{
	char *src = fmt("%s/subsrc", te.root), *mark = fmt("%s/planted-ran", te.root);
	struct stat st;
	struct run r;

	sh(te.root, fmt("git init -q -b main subsrc && cd subsrc && echo s > s && git add s && "
			"git -c user.name=t -c user.email=t@t commit -qm s"));
	sh(proj, fmt("git -c protocol.file.allow=always submodule -q add '%s' sub && "
		     "git -c user.name=t -c user.email=t@t commit -qm sub", src));
	long id = run_new(&te, "p", "agent", "--worktree", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	char *wt = strdup(str(s, "worktree"));
	json_decref(s);
	sh(wt, fmt("test -d sub && git init -q sub && "
		   "git -C sub config core.fsmonitor 'touch %s #' && echo z > sub/z && "
		   "echo edit >> a.txt", mark));

	run_hqt(&r, &te, "show", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	cr_expect(strstr(r.out, "1 file changed") != NULL, "the diff stat: %s", r.out);
	run_free(&r);
	run_hqt(&r, &te, "show", "--json", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 0, "%s", r.err);
	run_free(&r);
	run_hqt(&r, &te, "list", NULL);
	run_free(&r);
	run_hqt(&r, &te, "rm", fmt("%ld", id), NULL);
	cr_expect_eq(r.code, 1, "rm dropped a worktree with an unknown submodule: %s", r.err);
	cr_expect(strstr(r.err, "submodule directory 'sub'") != NULL, "%s", r.err);
	run_free(&r);
	cr_expect_neq(stat(mark, &st), 0, "hqt's git ran the plant");
	cr_expect_eq(stat(wt, &st), 0, "the worktree is kept");

	/* the control: the user's git at the top runs it */
	sh(wt, "git status --porcelain >/dev/null");
	cr_assert_eq(stat(mark, &st), 0, "control: git status did not run the plant");
	unlink(mark);

	run_ok(&te, "rm", "--force", fmt("%ld", id), NULL);
	cr_expect_neq(stat(mark, &st), 0, "rm --force ran the plant");
	cr_expect_neq(stat(wt, &st), 0, "rm --force kept the worktree");
	free(wt);
	free(mark);
	free(src);
}

Test(worktrees, refused_outside_a_repository_and_off_when_asked)
{
	char *plain = fmt("%s/plain", te.root);
	struct run r;

	mkdir(plain, 0755);
	run_ok(&te, "project", "add", "plain", plain, NULL);
	run_hqt(&r, &te, "new", "plain", "agent", "--worktree", NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "not the top of a git repository") != NULL, "%s", r.err);
	run_free(&r);
	json_t *l = run_list(&te);
	cr_expect_eq(json_array_size(l), 0, "no row for a refused session");
	json_decref(l);
	/* unsandboxed without --worktree: the project itself ([sessions] ask) */
	long id = run_new(&te, "p", "agent", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	cr_expect(json_is_null(json_object_get(s, "worktree")));
	json_decref(s);
	free(plain);
}

/*
 * The empty .git the sandbox makes in a writable project without a
 * repository (so that a session cannot make one) is no repository: a
 * sandboxed start there neither gets a worktree nor runs git to ask (a
 * git process per start).  A git on PATH that logs its calls shows it.
 */
Test(worktrees, the_sandbox_s_empty_git_is_no_repository)
{
	char *plain = fmt("%s/plain", te.root), *dotgit = fmt("%s/.git", plain);
	char *bin = fmt("%s/gitlog", te.root), *log = fmt("%s/git.log", te.root);
	char *real = find_in_path("git", NULL);
	struct run r;

	cr_assert_not_null(real);
	mkdir(plain, 0755);
	mkdir(dotgit, 0755);
	mkdir(bin, 0755);
	write_file(fmt("%s/git", bin),
		   fmt("#!/bin/sh\necho \"$*\" >>'%s'\nexec '%s' \"$@\"\n", log, real), 0755);
	tenv_put(&te, "PATH", fmt("%s:%s", bin, getenv("PATH")));
	run_ok(&te, "project", "add", "plain", plain, NULL);
	run_hqt(&r, &te, "new", "plain", "agent", "--worktree", NULL);
	cr_expect_eq(r.code, 1);
	cr_expect(strstr(r.err, "not the top of a git repository") != NULL, "%s", r.err);
	run_free(&r);
	/* Unsandboxed, [sessions] worktree = always: still the project itself. */
	write_file(fmt("%s/.config/hqt/hqt.ini", te.home),
		   fmt("[sessions]\nworktree = always\nworktree_dir = %s/wt\n"
		       "[harness.agent]\nplugin = generic\ncommand = %s\n[hqt]\ntmux_socket = %s\n",
		       te.root, script, te.socket), 0644);
	long id = run_new(&te, "plain", "agent", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	cr_expect(json_is_null(json_object_get(s, "worktree")));
	json_decref(s);
	struct stat st;
	cr_expect_neq(stat(log, &st), 0, "git ran for an empty .git: %s", slurp(log));
	/* The control: the same start in the git project asks git. */
	run_new(&te, "p", "agent", NULL);
	cr_expect_eq(stat(log, &st), 0, "the logging git was not on PATH");
	free(real);
	free(plain);
	free(dotgit);
	free(bin);
	free(log);
}

/*
 * Sandboxed and writable in a git project: a worktree by default, and
 * nothing of the repository writable from inside.  In particular no
 * existing object can be rewritten: git does not check a loose object
 * against its name when it reads it, so a rewritten blob is what the
 * host's next checkout writes (the control shows it, from outside).
 */
Test(worktrees, sandboxed_agent_cannot_rewrite_history)
{
	char *marker = fmt("%s/PLANTED", te.root);

	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	/* a.txt's blob, zlib'd as "evil": what the agent would put in its place */
	static const char REWRITE[] =
		"o=$c/objects/$(git rev-parse HEAD:a.txt | sed 's|^..|&/|')\n"
		"chmod u+w $o 2>/dev/null; python3 -c 'import zlib,sys; d=b\"evil\\n\"; "
		"sys.stdout.buffer.write(zlib.compress(b\"blob %d\\0\" % len(d) + d))' > $o "
		"&& echo REWRITE ok\n";
	/* The agent's git is its own store (gitstore.h); what it attacks is
	 * the repository's, found through the store's alternates. */
	agent(fmt("exec >attack.txt 2>&1\n"
		  "c=$(sed 's|/objects$||' \"$(git rev-parse --git-dir)/objects/info/alternates\")\n"
		  "d=$c/worktrees/${PWD##*/}; test -f $d/HEAD && echo FOUND ok\n"
		  "echo changed >> a.txt && echo EDIT ok\n"
		  "git -c user.name=agent -c user.email=a@a commit -qam agent && echo COMMIT ok\n"
		  "echo gitdir: /tmp > .git && echo DOTGIT ok\n"
		  "%s"
		  "printf '[core]\\n\\tfsmonitor = touch %s\\n' >> $c/config && echo CONFIG ok\n"
		  "printf '[core]\\n\\tfsmonitor = touch %s\\n' > $d/config.worktree && echo WTCONFIG ok\n"
		  "echo /tmp > $c/objects/info/alternates && echo ALTERNATES ok\n"
		  "printf '#!/bin/sh\\ntouch %s\\n' > $c/hooks/post-checkout && echo HOOK ok\n"
		  "echo /elsewhere > $d/commondir && echo COMMONDIR ok\n"
		  "git --git-dir=$c update-ref refs/heads/main HEAD~0 && echo MAIN ok\n"
		  "echo DONE\nsleep 1000\n", REWRITE, marker, marker, marker));
	long id = run_new(&te, "p", "agent", "--sandbox", NULL);
	json_t *s = run_show(&te, fmt("%ld", id));
	const char *wt = str(s, "worktree");
	cr_assert_not_null(wt, "a sandboxed writable session in a git project gets a worktree");
	cr_assert(json_is_object(json_object_get(s, "sandbox")));
	char *out = NULL;
	for (int i = 0; i < 200; i++) {
		free(out);
		out = slurp(fmt("%s/attack.txt", wt));
		if (out != NULL && strstr(out, "DONE") != NULL)
			break;
		sleep_ms(25);
	}
	cr_assert(out != NULL && strstr(out, "DONE") != NULL, "%s", out ? out : "(none)");
	cr_log_info("the agent's attempts:\n%s", out);
	/* the control of the payload: its own checkout is writable, it
	 * commits into its own store, and it found the repository */
	cr_expect(strstr(out, "EDIT ok") != NULL, "%s", out);
	cr_expect(strstr(out, "COMMIT ok") != NULL, "%s", out);
	cr_expect(strstr(out, "FOUND ok") != NULL, "%s", out);
	static const char *const refused[] = { "DOTGIT ok", "REWRITE ok", "CONFIG ok", "WTCONFIG ok",
					       "ALTERNATES ok", "HOOK ok", "COMMONDIR ok", "MAIN ok" };
	for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
		cr_expect(strstr(out, refused[i]) == NULL, "%s:\n%s", refused[i], out);
	/* where it lands: history as it was, and the host's git runs nothing */
	cr_expect_str_eq(sh(proj, "git cat-file -p HEAD:a.txt"), "one");
	cr_expect_str_eq(sh(proj, "git log -1 --format=%s main"), "one");
	sh(proj, "git status >/dev/null && git checkout -q -b probe && git checkout -q main && "
		 "rm a.txt && git checkout -- a.txt");
	cr_expect_str_eq(sh(proj, "cat a.txt"), "one");
	sh(wt, "git status >/dev/null; git diff >/dev/null; true");
	struct stat st;
	cr_expect_neq(stat(marker, &st), 0, "a plant ran on the host");
	/* the commit reaches the session's branch, and only it, by an import */
	const char *branch = str(s, "branch");
	run_ok(&te, "kill", fmt("%ld", id), NULL);
	run_ok(&te, "sync", fmt("%ld", id), NULL);
	cr_expect_str_eq(sh(proj, fmt("git log -1 --format=%%s %s", branch)), "agent");
	cr_expect_str_eq(sh(proj, "git log -1 --format=%s main"), "one");
	cr_expect_str_eq(sh(wt, "git status --porcelain --untracked-files=no"), "");
	cr_expect_neq(stat(marker, &st), 0, "a plant ran on the host");

	/* controls, from outside: the rewrite reaches the host's checkout, and
	 * the fsmonitor plant runs */
	sh(proj, fmt("c=.git; %s rm a.txt && git checkout -- a.txt", REWRITE));
	cr_expect_str_eq(sh(proj, "cat a.txt"), "evil", "control: the rewrite changes nothing");
	sh(proj, fmt("printf '[core]\\n\\tfsmonitor = touch %s\\n' >> .git/config && "
		     "git status >/dev/null; git config --unset core.fsmonitor", marker));
	cr_expect_eq(stat(marker, &st), 0, "control: the plant does not run from outside");
	json_decref(s);
	free(out);
	free(marker);
}

/* --no-worktree: the project itself, with its .git read-only whole. */
Test(worktrees, sandboxed_without_worktree_cannot_commit)
{
	if (!bwrap_ok())
		cr_skip_test("no usable bubblewrap here");
	agent("exec >attack.txt 2>&1\necho changed >> a.txt && echo EDIT ok\n"
	      "git -c user.name=agent -c user.email=a@a commit -qam agent && echo COMMIT ok\n"
	      "echo DONE\nsleep 1000\n");
	long id = run_new(&te, "p", "agent", "--sandbox", "--no-worktree", NULL);
	char *out = NULL;
	for (int i = 0; i < 200; i++) {
		free(out);
		out = slurp(fmt("%s/attack.txt", proj));
		if (out != NULL && strstr(out, "DONE") != NULL)
			break;
		sleep_ms(25);
	}
	cr_assert(out != NULL && strstr(out, "DONE") != NULL, "%s", out ? out : "(none)");
	cr_expect(strstr(out, "EDIT ok") != NULL, "%s", out);
	cr_expect(strstr(out, "COMMIT ok") == NULL, "%s", out);
	cr_expect_str_eq(sh(proj, "git log -1 --format=%s"), "one");
	run_ok(&te, "kill", fmt("%ld", id), NULL);
	free(out);
}
