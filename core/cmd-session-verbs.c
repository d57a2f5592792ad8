/* cmd-session-verbs.c: the verbs that act on named sessions: attach, resume,
 * kill and rm.  Each is its own
 * table entry; they share the way a session is named and looked up. */
#include "cmd.h"
#include "gitstore.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int attach_exec(struct hqt_app *app, int argc, char **argv);
static int resume_exec(struct hqt_app *app, int argc, char **argv);
static int kill_exec(struct hqt_app *app, int argc, char **argv);
static int rm_exec(struct hqt_app *app, int argc, char **argv);
static int sync_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_attach_entry = {
	.name = "attach",
	.usage = "attach SESSION",
	.summary = "attach to a session's window (switch to it inside tmux)",
	.exec = attach_exec,
	.needs = CMD_TMUX,
	.target = CMD_TARGET_SESSION,
};
const struct cmd_entry cmd_resume_entry = {
	.name = "resume",
	.usage = "resume SESSION | --all",
	.summary = "bring a session back (resume, else a fresh start); --all: every stopped one",
	.help = "Rung 1 runs the harness's resume command and checks it stays up; when it\n"
		"does not, rung 2 starts the harness fresh (claude with the same session id).\n"
		"Both re-apply the session's stored sandbox.  --all brings back every session\n"
		"whose window is gone or exited, e.g. after a reboot or tmux kill-server.\n",
	.exec = resume_exec,
	.needs = CMD_DB | CMD_TMUX,
	.target = CMD_TARGET_SESSION,
};
const struct cmd_entry cmd_kill_entry = {
	.name = "kill",
	.usage = "kill SESSION...",
	.summary = "stop sessions' windows (hqt resume brings them back)",
	.help = "Several sessions: each is looked up first (an unknown one stops them all),\n"
		"then each is stopped on its own and reported (\"3 killed\"); exit 1 when any\n"
		"failed.\n",
	.exec = kill_exec,
	.needs = CMD_TMUX,
	.target = CMD_TARGET_SESSIONS,
	.done = "killed",
};
const struct cmd_entry cmd_rm_entry = {
	.name = "rm",
	.usage = "rm [--force] SESSION...",
	.summary = "forget sessions, stopping them first",
	.help = "Options:\n"
		"  -f, --force   remove a session's worktree and branch even when that loses\n"
		"                work (uncommitted changes, commits neither merged nor pushed)\n"
		"\n"
		"Several sessions: each is looked up first (an unknown one stops them all),\n"
		"then each is removed on its own and reported (\"3 removed\"); exit 1 when\n"
		"any failed.\n",
	.exec = rm_exec,
	.needs = CMD_TMUX,
	.target = CMD_TARGET_SESSIONS,
	.done = "removed",
};
const struct cmd_entry cmd_sync_entry = {
	.name = "sync",
	.usage = "sync SESSION... | --all",
	.summary = "import the commits a sandboxed session made into its branch",
	.help = "A sandboxed writable session in a worktree commits into a git store of its\n"
		"own; sync brings its branch into the project with git fetch (fsck on, the\n"
		"store served from a sandbox) and moves the session's branch when that is a\n"
		"fast-forward, or the agent's rewrite of a branch you have not committed on.\n"
		"Otherwise nothing moves and sync says \"diverged\" and where the agent's tip\n"
		"is.  It also happens when the harness ends or the session is killed, and\n"
		"before hqt rm.  --all: every session that has a store.  Exit 1 when any\n"
		"import failed or diverged.  docs/sandbox.md, \"Commits\".\n",
	.exec = sync_exec,
	.needs = CMD_DB,
	.target = CMD_TARGET_SESSIONS,
	.done = "synced",
};
/* The one SESSION operand of e, looked up; NULL after printing the error. */
static struct db_session *
one_session(struct hqt_app *app, const struct cmd_entry *e, int argc, char **argv, int *rc)
{
	struct cmd_sessions one;
	struct db_session *s;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		*rc = cmd_print_help(e);
		return NULL;
	}
	/* "--" lets a nickname that starts with '-' through. */
	if (argc == 3 && strcmp(argv[1], "--") == 0) {
		argc--;
		argv++;
	} else if (argc == 2 && argv[1][0] == '-' && argv[1][1] != '\0') {
		*rc = cmd_usage_error(e, "unknown option '%s'", argv[1]);
		return NULL;
	}
	if (argc != 2) {
		*rc = cmd_usage_error(e, "%s needs one SESSION (a number or a nickname)", e->name);
		return NULL;
	}
	*rc = EXIT_FAIL;
	if (cmd_prepare(app, e, argv + 1, 1, &one) != 0)
		return NULL;
	s = one.v[0];
	free(one.v);
	return s;
}

static int
attach_exec(struct hqt_app *app, int argc, char **argv)
{
	struct db_session *s;
	char *err = NULL, name[32];
	int rc;

	if ((s = one_session(app, &cmd_attach_entry, argc, argv, &rc)) == NULL)
		return rc;
	session_window_name(s->id, name, sizeof name);
	struct db_session_list one = { s, 1 };
	enum session_status st;
	if (session_status_all(app, &one, &st, &err) == 0 && st == SESSION_GONE) {
		cmd_error("session %lld has no window; bring it back with: hqt resume %lld", s->id,
			  s->id);
		db_session_free(s);
		return EXIT_FAIL;
	}
	free(err);
	err = NULL;
	db_session_free(s);
	return cmd_attach(app, name);
}

int
cmd_attach(struct hqt_app *app, const char *window)
{
	char *err = NULL;

	if (cmd_tmux(app) != 0)
		return EXIT_FAIL;
	/* Outside tmux the attach takes the terminal: the hqt session's status
	 * line says how to leave, with the server's own prefix.  (Inside, the
	 * client switches and the way back depends on where it came from.) */
	if (getenv("TMUX") == NULL || *getenv("TMUX") == '\0') {
		char *key = NULL, *hint;
		if (tmux_prefix(&app->tmux, &key, NULL) != 0)
			key = NULL;
		hint = xasprintf("%s d: detach", key != NULL ? key : "prefix");
		tmux_session_hint(&app->tmux, hint, NULL);
		free(hint);
		free(key);
	}
	/* Looked at: a mark of "needs you" ends (db.h seen_at). */
	if (strncmp(window, "hqt-", 4) == 0 && cmd_db(app) == 0) {
		char *ign = NULL;
		(void)db_session_set_seen(app->db, strtoll(window + 4, NULL, 10), (long long)time(NULL),
					 &ign);
		free(ign);
	}
	/* The attach may exec tmux: what is left to say is said first. */
	cmd_flush_warnings(app);
	fflush(stdout);
	if (tmux_attach(&app->tmux, window, false, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	return EXIT_OK;
}

static int
resume_one(struct hqt_app *app, struct db_session *s)
{
	const char *how = NULL;
	char *err = NULL;

	if (session_resume(app, s, &how, &err) != 0) {
		cmd_error("session %lld: %s", s->id, err);
		free(err);
		return EXIT_FAIL;
	}
	printf("%lld %s\n", s->id, how);
	return EXIT_OK;
}

static int
resume_exec(struct hqt_app *app, int argc, char **argv)
{
	struct db_session_list *l = NULL;
	enum session_status *st;
	struct db_session *s;
	char *err = NULL;
	int rc = EXIT_OK;

	if (argc != 2 || strcmp(argv[1], "--all") != 0) {
		if ((s = one_session(app, &cmd_resume_entry, argc, argv, &rc)) == NULL)
			return rc;
		rc = resume_one(app, s);
		db_session_free(s);
		return rc;
	}
	if (cmd_prepare(app, &cmd_resume_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (session_list_status(app, &l, &st, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < l->n; i++) {
		/* Every session whose window is gone or exited (SPEC §6), killed
		 * ones included: after a reboot the user wants them all back.
		 * One that cannot come back does not keep the others away. */
		if (st[i] == SESSION_GONE || st[i] == SESSION_EXITED)
			if (resume_one(app, &l->v[i]) != EXIT_OK)
				rc = EXIT_FAIL;
	}
	free(st);
	db_session_list_free(l);
	return rc;
}

/*
 * kill and rm of one session or several: every name is looked up first
 * (cmd_prepare: one that names nothing stops them all), then each is acted
 * on by itself, one failure not keeping the others from being done whole;
 * each is reported (a line on stdout, or its error).  Exit 1 when any
 * failed.
 */
static int
act(struct hqt_app *app, const struct cmd_entry *e, int argc, char **argv,
    int (*fn)(struct hqt_app *, const struct db_session *, char **))
{
	struct cmd_sessions v;
	char *err = NULL;
	int first = 1;
	bool failed = false;

	if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
		return cmd_print_help(e);
	if (argc >= 2 && strcmp(argv[1], "--") == 0)
		first = 2;
	else
		for (int i = 1; i < argc; i++)
			if (argv[i][0] == '-' && argv[i][1] != '\0')
				return cmd_usage_error(e, "unknown option '%s'", argv[i]);
	if (argc - first < 1)
		return cmd_usage_error(e, "%s needs a SESSION (a number or a nickname)", e->name);
	if (cmd_prepare(app, e, argv + first, argc - first, &v) != 0)
		return EXIT_FAIL;
	for (size_t k = 0; k < v.n; k++) {
		if (fn(app, v.v[k], &err) != 0) {
			cmd_error("session %lld: %s", v.v[k]->id, err);
			free(err);
			err = NULL;
			failed = true;
		} else if (argc - first > 1)
			printf("%lld %s\n", v.v[k]->id, e->done);
	}
	cmd_sessions_free(&v);
	return failed ? EXIT_FAIL : EXIT_OK;
}

static int
kill_exec(struct hqt_app *app, int argc, char **argv)
{
	return act(app, &cmd_kill_entry, argc, argv, session_kill);
}

static bool rm_force;

static int
rm_one(struct hqt_app *app, const struct db_session *s, char **err)
{
	return session_remove(app, s, rm_force, err);
}

static int
rm_exec(struct hqt_app *app, int argc, char **argv)
{
	int n = 0;

	/* --force / -f anywhere among the words; the rest as for kill. */
	rm_force = false;
	for (int i = 0; i < argc; i++) {
		if (i > 0 && (strcmp(argv[i], "--force") == 0 || strcmp(argv[i], "-f") == 0))
			rm_force = true;
		else
			argv[n++] = argv[i];
	}
	argv[n] = NULL;
	return act(app, &cmd_rm_entry, n, argv, rm_one);
}

/* One session's import, reported: what came, what deserves a look. */
static int
sync_one(struct hqt_app *app, const struct db_session *s, char **err)
{
	struct gitstore_import im;
	char *b;

	if (session_sync(app, s, &im, err) != 0)
		return -1;
	b = text_escape(s->branch, 80);
	switch (im.how) {
	case GITSTORE_NOTHING:
		printf("%lld: nothing new on %s\n", s->id, b);
		break;
	case GITSTORE_FAST_FORWARD:
	case GITSTORE_REWRITTEN:
		printf("%lld: %ld commit%s imported into %s%s\n", s->id, im.commits,
		       im.commits == 1 ? "" : "s", b,
		       im.how == GITSTORE_REWRITTEN ? " (the agent rewrote it; the old tip is "
						       "in its reflog)" : "");
		break;
	case GITSTORE_NOT_MOVED: {
		char *mirror = gitstore_mirror_ref(s->git_store, s->branch);
		char *m = text_escape(mirror, 200);
		printf("%lld: diverged: %s has commits the agent's branch lacks, so it did not "
		       "move; the agent's tip %.12s is %s (git merge it)\n", s->id, b, im.tip, m);
		free(m);
		free(mirror);
		break;
	}
	}
	for (size_t i = 0; i < im.lines.n; i++)
		printf("  %s\n", im.lines.v[i]);
	if (im.commits > (long)im.lines.n)
		printf("  ... and %ld more\n", im.commits - (long)im.lines.n);
	for (size_t i = 0; i < im.flags.n; i++)
		printf("  look: %s\n", im.flags.v[i]);
	free(b);
	if (im.how == GITSTORE_NOT_MOVED) {
		gitstore_import_clear(&im);
		set_err(err, "its branch diverged");
		return -1;
	}
	gitstore_import_clear(&im);
	return 0;
}

static int
sync_exec(struct hqt_app *app, int argc, char **argv)
{
	struct db_session_list *l = NULL;
	char *err = NULL;
	int rc = EXIT_OK;

	if (argc != 2 || strcmp(argv[1], "--all") != 0) {
		struct cmd_sessions v;
		int first = 1;

		if (argc == 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0))
			return cmd_print_help(&cmd_sync_entry);
		if (argc >= 2 && strcmp(argv[1], "--") == 0)
			first = 2;
		else
			for (int i = 1; i < argc; i++)
				if (argv[i][0] == '-' && argv[i][1] != '\0')
					return cmd_usage_error(&cmd_sync_entry, "unknown option '%s'",
							       argv[i]);
		if (argc - first < 1)
			return cmd_usage_error(&cmd_sync_entry, "sync needs a SESSION (a number or "
					       "a nickname), or --all");
		if (cmd_prepare(app, &cmd_sync_entry, argv + first, argc - first, &v) != 0)
			return EXIT_FAIL;
		for (size_t k = 0; k < v.n; k++)
			if (sync_one(app, v.v[k], &err) != 0) {
				cmd_error("session %lld: %s", v.v[k]->id, err);
				free(err);
				err = NULL;
				rc = EXIT_FAIL;
			}
		cmd_sessions_free(&v);
		return rc;
	}
	if (cmd_prepare(app, &cmd_sync_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (db_session_list(app->db, 0, &l, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].git_store != NULL && sync_one(app, &l->v[i], &err) != 0) {
			cmd_error("session %lld: %s", l->v[i].id, err);
			free(err);
			err = NULL;
			rc = EXIT_FAIL;
		}
	db_session_list_free(l);
	return rc;
}
