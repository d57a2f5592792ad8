/* cmd-list.c: hqt list [--json]: every session with its live status. */
#include "cmd.h"
#include "db.h"
#include "gitstore.h"
#include "remote.h"
#include "json-out.h"
#include "json-text.h"
#include "project.h"
#include "session.h"
#include "text.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_list_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_list_entry = {
	.name = "list",
	.usage = "list [--project P] [--status S] [--all] [--json]",
	.summary = "list sessions: number, nickname, project, harness, model, sandbox, status",
	.help = "Options:\n"
		"  -p, --project P  only the sessions of project P\n"
		"  -s, --status S   only those with status S (working, waiting, exited, gone)\n"
		"  --json           a JSON array\n"
		"  -a, --all        this machine and every host (hqt host), asked in parallel,\n"
		"                   with a HOST column (\"host\" in JSON; null: this machine)\n"
		"\n"
		"Status: working, waiting (needs you), exited (window kept), gone (no window;\n"
		"hqt resume brings it back); \"(commits to sync)\" after it: the sandboxed\n"
		"agent committed what hqt sync would bring into its branch, \"(diverged)\":\n"
		"the last import could not move the branch (hqt show).\n",
	.exec = cmd_list_exec,
	.needs = CMD_DB,
};

static const char *
sandbox_text(const struct db_session *s, char *buf, size_t len)
{
	bool fs_rw;
	int net;

	switch (session_sandbox(s, &fs_rw, &net)) {
	case 0: return "-";
	case 1:
		snprintf(buf, len, "%s/%s", fs_rw ? "rw" : "ro",
			 net == CONFIG_NET_ALLOW ? "allow" : net == CONFIG_NET_ON ? "net" : "nonet");
		return buf;
	default: return "?";
	}
}

/* A session's commits not on its branch yet, as the store's refs say
 * (read as data, gitstore.h): " (commits to sync)", " (diverged)". */
static const char *
git_text(const struct db_session *s)
{
	struct gitstore_at at = { s->project_path, s->worktree, s->git_store, s->branch, NULL };
	struct gitstore_look look;

	if (s->git_store == NULL || s->branch == NULL)
		return "";
	gitstore_look(&at, &look);
	switch (look.state) {
	case GITSTORE_UNIMPORTED: return " (commits to sync)";
	case GITSTORE_DIVERGED: return " (diverged)";
	case GITSTORE_UNREADABLE: return " (git store unreadable)";
	default: return "";
	}
}

/* A host's answer to list --json: an array of objects, strict and bounded
 * (REMOTE_OUTPUT_MAX), each kept with "host" set; -1 when it is not that. */
static int
take_remote(const char *host, const char *text, size_t len, json_t *into)
{
	json_error_t je;
	json_t *a = remote_json_small(text, len, REMOTE_JSON_CONTAINERS_MAX)
			    ? json_loadb(text, len, JSON_REJECT_DUPLICATES, &je) : NULL, *o;
	size_t i;

	if (!json_is_array(a)) {
		json_decref(a);
		return -1;
	}
	json_array_foreach(a, i, o) {
		if (!json_is_object(o) || !json_is_integer(json_object_get(o, "id"))) {
			json_decref(a);
			return -1;
		}
	}
	json_array_foreach(a, i, o) {
		json_object_set_new(o, "host", json_string(host));
		json_array_append(into, o);
	}
	json_decref(a);
	return 0;
}

/*
 * list --all: every host's `list --json` (with the same filters), asked in
 * parallel, started before this machine's own list is read (so that it
 * overlaps the hosts' instead of adding to the slowest), collected after.
 * A host that does not answer in time or answers nonsense is one line on
 * stderr and leaves the others alone.
 */
struct host_asks {
	struct db_host_list *l;
	struct spawn_pending *p;
	char **why;
	bool *started;
};

static int
hosts_start(struct hqt_app *app, int argc, char **argv, struct host_asks *h)
{
	struct strv args = STRV_INIT;

	memset(h, 0, sizeof *h);
	if (cmd_hosts(app, &h->l) != 0)
		return -1;
	strv_push(&args, "list");
	strv_push(&args, "--json");
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--all") != 0 && strcmp(argv[i], "-a") != 0 &&
		    strcmp(argv[i], "--json") != 0)
			strv_push(&args, argv[i]);
	h->p = xcalloc(h->l->n + 1, sizeof *h->p);
	h->why = xcalloc(h->l->n + 1, sizeof *h->why);
	h->started = xcalloc(h->l->n + 1, sizeof *h->started);
	for (size_t i = 0; i < h->l->n; i++) {
		struct remote r = { h->l->v[i].name, h->l->v[i].target, h->l->v[i].command };
		struct strv av = STRV_INIT;

		if (remote_argv(&r, strv_v(&args), false, &av, &h->why[i]) == 0 &&
		    spawn_start(strv_v(&av), NULL, &h->p[i], &h->why[i]) == 0)
			h->started[i] = true;
		strv_clear(&av);
	}
	strv_clear(&args);
	return 0;
}

/* Each host waited for in turn (the slowest decides), its answer appended
 * to into (NULL: only ended).  EXIT_OK, or EXIT_FAIL when any host failed. */
static int
hosts_collect(struct host_asks *h, json_t *into)
{
	int rc = EXIT_OK;

	for (size_t i = 0; h->l != NULL && i < h->l->n; i++) {
		struct remote r = { h->l->v[i].name, h->l->v[i].target, h->l->v[i].command };
		struct spawn_opts o = { .timeout_ms = REMOTE_TIMEOUT_MS,
					.max_output = REMOTE_OUTPUT_MAX };
		struct spawn_result res;

		if (h->started[i]) {
			spawn_feed(&h->p[i], &o, &res);
			if (into != NULL && (h->why[i] = remote_failure(&r, &res)) == NULL &&
			    (res.status != 0 || res.out == NULL ||
			     take_remote(r.name, res.out, res.out_len, into) != 0)) {
				char *e = res.err != NULL ? remote_text(res.err, strcspn(res.err, "\n"))
							  : NULL;
				h->why[i] = xasprintf("host %s: its hqt's list did not answer a list%s%s",
						      r.name, e != NULL && *e ? ": " : "", e ? e : "");
				free(e);
			}
			spawn_result_free(&res);
		}
		if (into != NULL && h->why[i] != NULL) {
			cmd_error("%s", h->why[i]);
			rc = EXIT_FAIL;
		}
		free(h->why[i]);
	}
	free(h->started);
	free(h->why);
	free(h->p);
	db_host_list_free(h->l);
	memset(h, 0, sizeof *h);
	return rc;
}

/* The table of list --all: a HOST column first ("-": this machine). */
static void
print_all(json_t *a)
{
	json_t *o;
	size_t i;

	if (json_array_size(a) == 0) {
		printf("no sessions\n");
		return;
	}
	printf("%-10s %-4s %-16s %-12s %-8s %-9s %s\n", "HOST", "#", "NICKNAME", "PROJECT",
	       "HARNESS", "SANDBOX", "STATUS");
	json_array_foreach(a, i, o) {
		const char *host = json_string_value(json_object_get(o, "host"));
		const char *nick = json_string_value(json_object_get(o, "nickname"));
		const char *attention = json_string_value(json_object_get(o, "attention"));
		json_t *sb = json_object_get(o, "sandbox");
		char *h = text_cell(host != NULL ? host : "-", 10);
		char *n = text_cell(nick != NULL ? nick : "-", 16);
		char *p = text_cell(json_string_value(json_object_get(o, "project")) ?: "?", 12);
		char *hn = text_cell(json_string_value(json_object_get(o, "harness")) ?: "?", 8);
		char *s = text_cell(json_string_value(json_object_get(o, "status")) ?: "?", 12);
		char sbt[16];

		snprintf(sbt, sizeof sbt, "%s", !json_is_object(sb) ? "-"
			 : json_is_true(json_object_get(sb, "net")) ? "net"
			 : json_object_get(sb, "net_allow") != NULL ? "allow" : "nonet");
		printf("%s %-4lld %s %s %s %-9s %s\n", h,
		       (long long)json_integer_value(json_object_get(o, "id")), n, p, hn, sbt,
		       attention != NULL && strcmp(attention, "needs_input") == 0 ? "needs you" : s);
		free(h);
		free(n);
		free(p);
		free(hn);
		free(s);
	}
}

static int
cmd_list_exec(struct hqt_app *app, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "project", required_argument, NULL, 'p' },
		{ "status", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "all", no_argument, NULL, 'a' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const enum session_status all[] = { SESSION_WORKING, SESSION_WAITING,
						   SESSION_EXITED, SESSION_GONE };

	struct db_session_list *l = NULL;
	struct db_project *proj = NULL;
	enum session_status *st;
	const char *only_project = NULL;
	int status = -1;
	bool json = false, every_host = false;
	struct host_asks asks = { NULL, NULL, NULL, NULL };
	char *err = NULL;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "p:s:ah", opts, NULL)) != -1) {
		switch (c) {
		case 'p': only_project = optarg; break;
		case 's':
			status = -1;
			for (size_t i = 0; i < ARRAY_SIZE(all); i++)
				if (strcmp(optarg, session_status_name(all[i])) == 0)
					status = (int)all[i];
			if (strcmp(optarg, "needs_input") == 0)
				status = (int)SESSION_NEEDS;
			if (status < 0)
				return cmd_usage_error(&cmd_list_entry, "--status takes working, waiting, "
						       "needs_input, exited or gone, not '%s'", optarg);
			break;
		case 'j': json = true; break;
		case 'a': every_host = true; break;
		case 'h': return cmd_print_help(&cmd_list_entry);
		default:
			return cmd_usage_error(&cmd_list_entry, "bad option '%s'", argv[optind - 1]);
		}
	}
	if (optind < argc)
		return cmd_usage_error(&cmd_list_entry, "unexpected argument '%s'", argv[optind]);
	/* The tmux client of the status read starts first and connects while
	 * the database opens (tmux_prestart, as hqt new does). */
	if (cmd_config(app) != 0)
		return EXIT_FAIL;
	if (cmd_tmux(app) == 0)
		tmux_prestart(&app->tmux);
	if (cmd_prepare(app, &cmd_list_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	/* The hosts' ssh first: they work while this machine's list is read. */
	if (every_host && hosts_start(app, argc, argv, &asks) != 0)
		return EXIT_FAIL;
	if (only_project != NULL) {
		if (project_find(app->db, only_project, &proj, &err) != 0) {
			cmd_error("%s", err);
			free(err);
			(void)hosts_collect(&asks, NULL);
			return EXIT_FAIL;
		}
	}
	if (session_list_status(app, &l, &st, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		db_project_free(proj);
		(void)hosts_collect(&asks, NULL);
		return EXIT_FAIL;
	}
	/* Filtered after the status read: the read also records exits of the
	 * sessions not shown. */
	size_t *keep = xcalloc(l->n + 1, sizeof *keep), n = 0;
	for (size_t i = 0; i < l->n; i++)
		if ((proj == NULL || l->v[i].project_id == proj->id) &&
		    (status < 0 || st[i] == (enum session_status)status ||
		     (status == (int)SESSION_WAITING && st[i] == SESSION_NEEDS)))
			keep[n++] = i;
	db_project_free(proj);
	if (every_host) {
		json_t *a = json_array();
		int rc;
		for (size_t k = 0; k < n; k++) {
			json_t *o = json_session(&l->v[keep[k]], session_status_name(st[keep[k]]),
						 session_attention_name(st[keep[k]]), NULL);
			json_object_set_new(o, "host", json_null());
			json_array_append_new(a, o);
		}
		free(keep);
		free(st);
		db_session_list_free(l);
		rc = hosts_collect(&asks, a);
		if (json)
			return json_print_ascii(a) == 0 ? rc : EXIT_FAIL;
		print_all(a);
		json_decref(a);
		return rc;
	}
	if (json) {
		/* Written straight from the rows, no jansson tree (json-text.h). */
		struct json_writer w;

		jw_init(&w);
		jw_open(&w, '[');
		for (size_t k = 0; k < n; k++)
			json_session_write(&w, &l->v[keep[k]], session_status_name(st[keep[k]]),
					   session_attention_name(st[keep[k]]));
		jw_close(&w, ']');
		free(keep);
		free(st);
		db_session_list_free(l);
		return json_print_text(&w) == 0 ? EXIT_OK : EXIT_FAIL;
	}
	if (n > 0)
		printf("%-4s %-16s %-12s %-8s %-12s %-9s %s\n", "#", "NICKNAME", "PROJECT",
		       "HARNESS", "MODEL", "SANDBOX", "STATUS");
	for (size_t k = 0; k < n; k++) {
		size_t i = keep[k];
		const struct db_session *s = &l->v[i];
		char sb[32];
		char *nick = text_cell(s->nickname ? s->nickname : "-", 16);
		char *project = text_cell(s->project, 12);
		char *harness = text_cell(s->harness, 8);
		char *model = text_cell(s->model ? s->model : "-", 12);
		printf("%-4lld %s %s %s %s %-9s %s%s\n", s->id, nick, project, harness, model,
		       sandbox_text(s, sb, sizeof sb),
		       st[i] == SESSION_NEEDS ? "needs you" : session_status_name(st[i]),
		       git_text(s));
		free(nick);
		free(project);
		free(harness);
		free(model);
	}
	if (n == 0 && l->n > 0)
		printf("no sessions match\n");
	else if (n == 0)
		printf("no sessions; start one with: hqt new PROJECT HARNESS\n");
	free(keep);
	free(st);
	db_session_list_free(l);
	return EXIT_OK;
}
