/* cmd-new.c: hqt new PROJECT HARNESS [options]: start a session. */
#include "cmd.h"
#include "consent.h"
#include "db.h"
#include "project.h"
#include "session.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int cmd_new_exec(struct hqt_app *app, int argc, char **argv);
static int new_session(struct hqt_app *app, const struct session_request *r, bool dry,
		       bool attach);

const struct cmd_entry cmd_new_entry = {
	.name = "new",
	/* One line: usage errors quote it, and an error is one line. */
	.usage = "new PROJECT|. HARNESS [--nickname N] [--model M] [--sandbox|--no-sandbox] "
		 "[--fs ro|rw] [--net on|off|allow[:LIST]] [--worktree[=BRANCH]|--no-worktree] "
		 "[--attach] "
		 "[--dry-run]",
	.summary = "start a session; prints its number",
	.help = "Options:\n"
		"  -n, --nickname N  a name for the session, unique in its project\n"
		"  -m, --model M     the model the harness should use\n"
		"  --sandbox         run it in a bubblewrap sandbox (default: [sandbox] enabled)\n"
		"  --no-sandbox      run it without one\n"
		"  --fs ro|rw        the project read-only or writable inside the sandbox\n"
		"  --net on|off|allow[:LIST]\n"
		"                    the host network, none at all, or only the hosts of LIST\n"
		"                    through a proxy of the session's own (squid): LIST is comma\n"
		"                    separated, each entry a host name, *.domain (its\n"
		"                    subdomains) or + (the harness's own hosts: its model API\n"
		"                    and login), with an optional :PORT (default 443);\n"
		"                    allow alone is allow:+\n"
		"  --worktree[=BRANCH]  run it in a git worktree of its own, on a new branch\n"
		"                    (default hqt/<number>-<nickname>) from the project's HEAD\n"
		"  --no-worktree     run it in the project itself\n"
		"  --attach          attach to it once started (as hqt attach)\n"
		"  --dry-run         print the exact command that would run; start nothing\n"
		"                    (with a worktree to be made: the command in the project,\n"
		"                    the worktree does not exist yet)\n"
		"\n"
		"PROJECT '.' is the current directory: its project, or a new one named after\n"
		"it (registered as hqt project add would, with a line on stderr saying so).\n"
		"A sandbox that cannot be had is an error: nothing is written or started.\n"
		"Without --worktree/--no-worktree, [sessions] worktree decides (default ask:\n"
		"a sandboxed writable session in a git project gets a worktree: a checkout of\n"
		"its own, whose commits go to a git store of its own and reach its branch\n"
		"through hqt sync, checked by git's fsck; see hqt sync --help).\n"
		"Sandboxed sessions run with the harness's permission prompts skipped.\n",
	.exec = cmd_new_exec,
	.needs = CMD_DB,
};

/* A project name made of the directory's name: what project_name_valid
 * takes, and not one already used (by another directory). */
static char *
name_for(struct db *db, const char *path)
{
	const char *base = strrchr(path, '/');
	char *stem, *name;

	base = base != NULL && base[1] != '\0' ? base + 1 : "project";
	stem = xstrndup(base, 60);
	for (char *p = stem; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
			*p = '-';
	while (stem[0] == '-' || stem[0] == '.')
		memmove(stem, stem + 1, strlen(stem));
	if (stem[0] == '\0') {
		free(stem);
		stem = xstrdup("project");
	}
	name = xstrdup(stem);
	for (int n = 2; n < 1000; n++) {
		struct db_project *p = NULL;
		if (db_project_get(db, name, &p, NULL) != 0)
			break;
		db_project_free(p);
		free(name);
		name = xasprintf("%s-%d", stem, n);
	}
	free(stem);
	return name;
}

/*
 * `new .`: the project whose directory is the current one, registered when
 * there is none (not for --dry-run, which writes nothing).  NULL after an
 * error.  Caller frees.
 */
static char *
here_project(struct hqt_app *app, bool dry)
{
	struct db_project_list *l = NULL;
	char cwd[PATH_MAX], *abs = NULL, *name = NULL, *err = NULL;
	long long id;

	if (getcwd(cwd, sizeof cwd) == NULL || (abs = realpath(cwd, NULL)) == NULL) {
		cmd_error("cannot tell the current directory: %s", strerror(errno));
		return NULL;
	}
	if (db_project_list(app->db, &l, &err) != 0)
		goto fail;
	for (size_t i = 0; i < l->n && name == NULL; i++)
		if (strcmp(l->v[i].path, abs) == 0)
			name = xstrdup(l->v[i].name);
	db_project_list_free(l);
	if (name != NULL) {
		free(abs);
		return name;
	}
	if (dry) {
		err = xasprintf("no project is %s yet; hqt new . without --dry-run registers it", abs);
		goto fail;
	}
	name = name_for(app->db, abs);
	char *checked = NULL;
	if (project_check(name, abs, &checked, &err) != 0 ||
	    db_project_add(app->db, name, checked, &id, &err) != 0) {
		free(checked);
		free(name);
		name = NULL;
		goto fail;
	}
	cmd_note("registered project '%s' for %s (hqt project rm %s forgets it)", name, checked,
		 name);
	free(checked);
	free(abs);
	return name;
fail:
	cmd_error("%s", err != NULL ? err : "cannot register the project");
	free(err);
	free(abs);
	return NULL;
}

/* --net's list: alive as long as the request that points to it (a
 * command's life), so kept beside it. */
static struct config_net net;

static int
cmd_new_exec(struct hqt_app *app, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nickname", required_argument, NULL, 'n' },
		{ "model", required_argument, NULL, 'm' },
		{ "sandbox", no_argument, NULL, 's' },
		{ "no-sandbox", no_argument, NULL, 'S' },
		{ "fs", required_argument, NULL, 'f' },
		{ "net", required_argument, NULL, 'N' },
		{ "dry-run", no_argument, NULL, 'd' },
		{ "worktree", optional_argument, NULL, 'w' },
		{ "no-worktree", no_argument, NULL, 'W' },
		{ "attach", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct session_request r = { NULL, NULL, NULL, NULL, -1, -1, -1, NULL, -1, NULL };
	bool dry = false, attach = false;
	char *here = NULL;
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "n:m:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': r.nickname = optarg; break;
		case 'm': r.model = optarg; break;
		case 's': r.sandbox = 1; break;
		case 'S': r.sandbox = 0; break;
		case 'f':
			if (strcmp(optarg, "ro") != 0 && strcmp(optarg, "rw") != 0)
				return cmd_usage_error(&cmd_new_entry, "--fs takes ro or rw");
			r.fs_rw = strcmp(optarg, "rw") == 0;
			break;
		case 'N': {
			char *why = NULL;
			if (config_net_parse(optarg, &net, &why) != 0) {
				rc = cmd_usage_error(&cmd_new_entry, "--net: %s", why);
				free(why);
				return rc;
			}
			r.net = net.allow ? CONFIG_NET_ALLOW : net.on ? CONFIG_NET_ON : CONFIG_NET_OFF;
			r.net_list = net.allow ? &net.list : NULL;
			break;
		}
		case 'd': dry = true; break;
		case 'w':
			r.worktree = 1;
			if (optarg != NULL && *optarg == '\0')
				return cmd_usage_error(&cmd_new_entry, "--worktree= needs a branch name");
			r.branch = optarg;
			break;
		case 'W': r.worktree = 0; break;
		case 'a': attach = true; break;
		case 'h': return cmd_print_help(&cmd_new_entry);
		default:
			return cmd_usage_error(&cmd_new_entry, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind != 2)
		return cmd_usage_error(&cmd_new_entry, "new needs PROJECT and HARNESS");
	r.project = argv[optind];
	r.harness = argv[optind + 1];
	/* --fs/--net imply --sandbox unless --no-sandbox said otherwise. */
	if (r.sandbox < 0 && (r.fs_rw >= 0 || r.net >= 0))
		r.sandbox = 1;
	if (r.sandbox == 0 && (r.fs_rw >= 0 || r.net >= 0))
		return cmd_usage_error(&cmd_new_entry, "--fs and --net need a sandbox");
	if (dry && attach)
		return cmd_usage_error(&cmd_new_entry, "--attach and --dry-run do not go together");
	/* The database first: `new .` looks its project up there.  The tmux
	 * client of the window starts before it, and connects while the
	 * database opens and the plan is made (tmux_prestart). */
	if (cmd_config(app) != 0)
		return EXIT_FAIL;
	if (!dry && cmd_tmux(app) == 0)
		tmux_prestart(&app->tmux);
	if (cmd_prepare(app, &cmd_new_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	if (strcmp(r.project, ".") == 0) {
		if ((here = here_project(app, dry)) == NULL)
			return EXIT_FAIL;
		r.project = here;
	}
	rc = new_session(app, &r, dry, attach);
	free(here);
	return rc;
}

/*
 * The first sandboxed session on a terminal asks, once (consent.h).  0 when
 * given (or not ours to ask: no terminal, where session_create says how to
 * give it), -1 when declined.
 */
static int
ask_consent(void)
{
	char answer[16], *err = NULL;

	if (!isatty(STDIN_FILENO) || !isatty(STDERR_FILENO))
		return 0;
	fprintf(stderr, "%s\nStart sandboxed sessions this way from now on? [y/N] ", consent_text);
	fflush(stderr);
	if (fgets(answer, sizeof answer, stdin) == NULL || (answer[0] != 'y' && answer[0] != 'Y')) {
		cmd_error("not started: sandboxed sessions need that consent (hqt consent gives it)");
		return -1;
	}
	if (consent_record(false, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return -1;
	}
	return 0;
}

/*
 * A sandboxed session with net = on gets the host network: said once (a
 * mark in hqt's data directory), as the user chose it, not at every start.
 */
static void
note_net_on(void)
{
	char *data = xdg_data_home(), *mark;
	int fd;

	if (data == NULL)
		return;
	mark = xasprintf("%s/hqt/net-on-said", data);
	fd = open(mark, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "hqt: note: with --net on a sandboxed session has the host's network: "
			"every host, and this machine's loopback services (--net allow: only the "
			"harness's own hosts; said once)\n");
	}
	free(mark);
	free(data);
}

static int
new_session(struct hqt_app *app, const struct session_request *rq, bool dry, bool attach)
{
	struct session_request r = *rq;
	char *err = NULL;
	long long id;
	int rc;

	if (dry) {
		struct strv out = STRV_INIT;
		if (session_dry_run(app, &r, &out, &err) != 0) {
			cmd_error("%s", err);
			free(err);
			return EXIT_FAIL;
		}
		char *line = strv_join_quoted(&out);
		printf("%s\n", line);
		free(line);
		strv_clear(&out);
		return EXIT_OK;
	}
	if ((r.sandbox > 0 || (r.sandbox < 0 && app->cfg.sandbox.enabled)) && !consent_given() &&
	    ask_consent() != 0)
		return EXIT_FAIL;
	rc = session_create(app, &r, &id, &err);
	if (id > 0)
		printf("%lld\n", id);
	if (rc == 0 && (r.sandbox > 0 || (r.sandbox < 0 && app->cfg.sandbox.enabled)) &&
	    (r.net >= 0 ? r.net == CONFIG_NET_ON : app->cfg.sandbox.net))
		note_net_on();
	if (rc != 0) {
		if (id > 0)
			cmd_error("session %lld did not start: %s", id, err);
		else
			cmd_error("%s", err);
		free(err);
		return EXIT_FAIL;
	}
	if (attach) {
		char name[32];
		session_window_name(id, name, sizeof name);
		return cmd_attach(app, name);
	}
	return EXIT_OK;
}
