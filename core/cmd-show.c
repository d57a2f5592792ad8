/* cmd-show.c: hqt show SESSION [--json]: one session in full, with the exact
 * command line its window runs. */
#include "cmd.h"
#include "gitstore.h"
#include "json-out.h"
#include "session.h"
#include "worktree.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmd_show_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_show_entry = {
	.name = "show",
	.usage = "show SESSION [--json]",
	.summary = "show one session in full, with the command it runs",
	.help = "SESSION is a number or a nickname.  The command is the one its window\n"
		"runs; for a window that is gone or exited, the one a resume would run now\n"
		"(the harness's resume command, else its spawn command).\n",
	.exec = cmd_show_exec,
	.needs = CMD_TMUX,
	.target = CMD_TARGET_SESSION,
};

/*
 * Was s's live window started by a resume rung?  Its window option
 * @hqt-start says (session/start.c sets it with the window); the database does
 * not record which command a window runs.
 */
static bool
window_resumed(struct hqt_app *app, const struct db_session *s)
{
	struct tmux_panes panes = { NULL, 0 };
	const struct tmux_pane *p;
	struct spawn_result r;
	struct strv a = STRV_INIT;
	char name[32];
	bool yes = false;

	session_window_name(s->id, name, sizeof name);
	if (cmd_tmux(app) != 0 || tmux_list_panes(&app->tmux, &panes, NULL) != 0)
		return false;
	if ((p = tmux_panes_find(&panes, name)) != NULL) {
		memset(&r, 0, sizeof r);
		tmux_argv_init(&app->tmux, &a);
		strv_push(&a, "display-message");
		strv_push(&a, "-p");
		strv_push(&a, "-t");
		strv_push(&a, p->pane_id);
		strv_push(&a, "#{@hqt-start}");
		if (tmux_run(&app->tmux, &a, &r, NULL) == 0 && r.out != NULL)
			yes = strncmp(r.out, "resume\n", 7) == 0;
		spawn_result_free(&r);
		strv_clear(&a);
	}
	tmux_panes_free(&panes);
	return yes;
}

static void
field(const char *name, const char *value)
{
	char *v = text_escape(value != NULL ? value : "-", 0);

	printf("%-19s %s\n", name, v);
	free(v);
}

/* The session's git store: where, what the agent has, what the last
 * import brought and what of it deserves a look (all escaped: an agent
 * wrote the messages, gitstore.c). */
static void
show_git_store(const struct db_session *s)
{
	struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch, NULL };
	struct gitstore_look look;
	struct gitstore_import im;
	char *line;

	gitstore_look(&at, &look);
	switch (look.state) {
	case GITSTORE_IMPORTED:
		line = xasprintf("%s (its commits are on %s)", s->git_store, s->branch);
		break;
	case GITSTORE_UNIMPORTED:
		line = xasprintf("%s (the agent's tip %.12s is not on %s yet: hqt sync %lld)",
				 s->git_store, look.tip, s->branch, s->id);
		break;
	case GITSTORE_DIVERGED:
	{
		char *mirror = gitstore_mirror_ref(s->git_store, s->branch);
		line = xasprintf("%s (diverged: you committed on %s; the agent's tip %.12s is "
				 "%s: merge it, or hqt rm --force %lld)", s->git_store, s->branch,
				 look.tip, mirror, s->id);
		free(mirror);
		break;
	}
	default:
		line = xasprintf("%s (unreadable: its refs are not what git writes)", s->git_store);
		break;
	}
	field("git store", line);
	free(line);
	if (look.head[0] != '\0') {
		line = xasprintf("on %s, not %s: only %s is imported", look.head, s->branch, s->branch);
		field("agent's HEAD", line);
		free(line);
	}
	if (gitstore_last(s->git_store, &im) != 0)
		return;
	line = xasprintf("%ld commit%s, %s", im.commits, im.commits == 1 ? "" : "s",
			 gitstore_how_name(im.how));
	field("last import", line);
	free(line);
	for (size_t i = 0; i < im.lines.n; i++)
		field("", im.lines.v[i]);
	for (size_t i = 0; i < im.flags.n; i++)
		field(i == 0 ? "look before use" : "", im.flags.v[i]);
	gitstore_import_clear(&im);
}

static int
cmd_show_exec(struct hqt_app *app, int argc, char **argv)
{
	struct db_session_list one = { NULL, 1 };
	struct cmd_sessions target;
	struct db_session *s = NULL;
	struct strv cmdv = STRV_INIT;
	enum session_status st = SESSION_GONE;
	bool json = false;
	char *err = NULL, *cmd_err = NULL;
	int c, rc;

	if ((c = cmd_json_args(&cmd_show_entry, argc, argv, 1, &json, &rc)) < 0)
		return rc;
	if (cmd_prepare(app, &cmd_show_entry, argv + c, 1, &target) != 0)
		return EXIT_FAIL;
	s = one.v = target.v[0];
	free(target.v);
	if (session_status_all(app, &one, &st, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		db_session_free(s);
		return EXIT_FAIL;
	}
	/* A window that is gone or exited would run the resume command next; a
	 * live one runs what it was started with. */
	session_argv(app, s, st == SESSION_EXITED || st == SESSION_GONE || window_resumed(app, s),
		     &cmdv, NULL, &cmd_err);
	if (json) {
		json_t *o = json_session(s, session_status_name(st), session_attention_name(st),
					 strv_v(&cmdv));
		if (s->worktree != NULL) {
			char *stat = worktree_diffstat(s->worktree, s->base);
			json_object_set_new(o, "base", json_string_or_null(s->base));
			json_object_set_new(o, "diffstat", json_string_or_null(stat));
			free(stat);
		}
		if (s->sandbox_json != NULL) {
			char *state = session_state_dir(s);
			struct strv d = STRV_INIT;
			json_object_set_new(o, "state", json_string_or_null(state));
			free(state);
			if (session_net_denied(app, s, &d) >= 0) {
				json_t *a = json_array();
				for (size_t i = 0; i < d.n; i++)
					json_array_append_new(a, json_string_or_null(d.v[i]));
				json_object_set_new(o, "net_denied", a);
			}
			strv_clear(&d);
		}
		if (s->git_store != NULL) {
			struct gitstore_import im;
			json_t *g = json_object_get(o, "git_store");
			if (g != NULL && gitstore_last(s->git_store, &im) == 0) {
				json_t *li = json_object(), *cl = json_array(), *f = json_array();
				json_object_set_new(li, "how", json_string(gitstore_how_name(im.how)));
				json_object_set_new(li, "tip", json_string_or_null(im.tip));
				json_object_set_new(li, "commits", json_integer(im.commits));
				for (size_t i = 0; i < im.lines.n; i++)
					json_array_append_new(cl, json_string_or_null(im.lines.v[i]));
				for (size_t i = 0; i < im.flags.n; i++)
					json_array_append_new(f, json_string_or_null(im.flags.v[i]));
				json_object_set_new(li, "lines", cl);
				json_object_set_new(li, "flags", f);
				json_object_set_new(g, "last_import", li);
				gitstore_import_clear(&im);
			}
		}
		if (cmd_err != NULL)
			json_object_set_new(o, "argv_error", json_string_or_null(cmd_err));
		db_session_free(s);
		strv_clear(&cmdv);
		free(cmd_err);
		return json_print(o) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	char num[32], window[32], *line;
	bool fs_rw;
	int net;
	snprintf(num, sizeof num, "%lld", s->id);
	session_window_name(s->id, window, sizeof window);
	field("session", num);
	field("nickname", s->nickname);
	field("project", s->project);
	field("project path", s->project_path);
	field("harness", s->harness);
	field("model", s->model);
	field("harness session id", s->harness_session_id);
	field("status", st == SESSION_NEEDS ? "waiting (needs you)" : session_status_name(st));
	field("window", window);
	if (session_sandbox(s, &fs_rw, &net) == 1) {
		char sb[64];
		char *state = session_state_dir(s);
		snprintf(sb, sizeof sb, "fs %s, network %s", fs_rw ? "rw" : "ro",
			 session_net_name(net));
		field("sandbox", sb);
		if (net == CONFIG_NET_ALLOW) {
			struct strv l = STRV_INIT;
			char *joined;
			session_net_hosts(app, s, &l);
			joined = l.n > 0 ? strv_join_quoted(&l) : xstrdup("none (no way out)");
			field("allowed hosts", joined);
			free(joined);
			strv_clear(&l);
			if (session_net_denied(app, s, &l) >= 0) {
				joined = l.n > 0 ? strv_join_quoted(&l) : xstrdup("none");
				field("denied hosts", joined);
				free(joined);
			}
			strv_clear(&l);
		}
		field("private state", state);
		free(state);
	} else
		field("sandbox", "none");
	if (s->exit_message != NULL)
		field("exit message", s->exit_message);
	if (s->worktree != NULL) {
		struct stat wst;
		char *stat_line = worktree_diffstat(s->worktree, s->base);
		char *shown = stat(s->worktree, &wst) == 0
				      ? xasprintf("%s (branch %s)", s->worktree, s->branch)
				      : xasprintf("%s (branch %s; the directory is gone)", s->worktree,
						  s->branch);
		field("worktree", shown);
		field("changes", stat_line != NULL ? stat_line : "none");
		free(stat_line);
		free(shown);
	}
	if (s->git_store != NULL && s->branch != NULL)
		show_git_store(s);
	line = cmd_err != NULL ? xasprintf("(cannot build: %s)", cmd_err) : strv_join_quoted(&cmdv);
	field("command", line);
	free(line);
	free(cmd_err);
	strv_clear(&cmdv);
	db_session_free(s);
	return EXIT_OK;
}
