/* cmd.c: the command table and what every command shares: messages,
 * the app's loaders for a command (printing what they return), and the
 * set-up and session lookup the table declares (cmd_prepare). */
#include "cmd.h"
#include "db.h"
#include "text.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const struct cmd_entry cmd_tui_entry;
extern const struct cmd_entry cmd_new_entry;
extern const struct cmd_entry cmd_list_entry;
extern const struct cmd_entry cmd_show_entry;
extern const struct cmd_entry cmd_peek_entry;
extern const struct cmd_entry cmd_consent_entry;
extern const struct cmd_entry cmd_attach_entry;
extern const struct cmd_entry cmd_resume_entry;
extern const struct cmd_entry cmd_kill_entry;
extern const struct cmd_entry cmd_rm_entry;
extern const struct cmd_entry cmd_sync_entry;
extern const struct cmd_entry cmd_project_entry;
extern const struct cmd_entry cmd_host_entry;
extern const struct cmd_entry cmd_complete_entry;
extern const struct cmd_entry cmd_plugins_entry;
extern const struct cmd_entry cmd_doctor_entry;

const struct cmd_entry *const cmd_table[] = {
	&cmd_tui_entry,
	&cmd_new_entry,
	&cmd_list_entry,
	&cmd_show_entry,
	&cmd_peek_entry,
	&cmd_attach_entry,
	&cmd_resume_entry,
	&cmd_kill_entry,
	&cmd_rm_entry,
	&cmd_sync_entry,
	&cmd_project_entry,
	&cmd_host_entry,
	&cmd_complete_entry,
	&cmd_plugins_entry,
	&cmd_doctor_entry,
	&cmd_consent_entry,
	NULL,
};

#define MESSAGE_MAX 1024 /* bytes of one message line, before "…" */

/*
 * Whatever a message quotes (a name the user typed, a path, a harness's
 * output) is shown on one terminal line without control characters, and a
 * 100 KB argument pasted by mistake does not flood the screen: a long
 * message keeps its start and its end (where the reason is).  Caller frees.
 */
static char *
one_line(const char *msg)
{
	char *s = text_escape(msg, 0), *out;
	size_t len = strlen(s), head = MESSAGE_MAX * 3 / 4, tail;

	if (len <= MESSAGE_MAX)
		return s;
	tail = len - MESSAGE_MAX / 4;
	/* Cut between characters, not inside one. */
	while (head > 0 && ((unsigned char)s[head] & 0xc0) == 0x80)
		head--;
	while (tail < len && ((unsigned char)s[tail] & 0xc0) == 0x80)
		tail++;
	out = xasprintf("%.*s…%s", (int)head, s, s + tail);
	free(s);
	return out;
}

static void
vmessage(const char *prefix, const char *fmt, va_list ap)
{
	char *msg = xvasprintf(fmt, ap), *line = one_line(msg);

	fprintf(stderr, "hqt: %s%s\n", prefix, line);
	free(line);
	free(msg);
}

void
cmd_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

void
cmd_note(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

void
cmd_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmessage("warning: ", fmt, ap);
	va_end(ap);
}

int
cmd_usage_error(const struct cmd_entry *e, const char *fmt, ...)
{
	va_list ap;
	char *msg, *line;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	line = one_line(msg);
	if (e != NULL)
		fprintf(stderr, "hqt: %s (usage: hqt %s)\n", line, e->usage);
	else
		fprintf(stderr, "hqt: %s (see 'hqt --help')\n", line);
	free(line);
	free(msg);
	return EXIT_USAGE;
}

int
cmd_print_help(const struct cmd_entry *e)
{
	printf("usage: hqt %s\n\n%s\n", e->usage, e->summary);
	if (e->help != NULL)
		printf("\n%s", e->help);
	return EXIT_OK;
}

void
cmd_flush_warnings(struct hqt_app *app)
{
	struct strv w = STRV_INIT;

	app_take_warnings(app, &w);
	for (size_t i = 0; i < w.n; i++)
		cmd_warn("%s", w.v[i]);
	strv_clear(&w);
}

/* After a loader: its warnings, then its error when it failed. */
static int
loaded(struct hqt_app *app, int rc, char *err)
{
	cmd_flush_warnings(app);
	if (rc != 0) {
		cmd_error("%s", err != NULL ? err : "cannot set up");
		free(err);
		return -1;
	}
	return 0;
}

int
cmd_config(struct hqt_app *app)
{
	char *err = NULL;
	int rc = app_config(app, &err);

	return loaded(app, rc, err);
}

int
cmd_registry(struct hqt_app *app)
{
	char *err = NULL;
	int rc = app_registry(app, &err);

	return loaded(app, rc, err);
}

int
cmd_registry_for(struct hqt_app *app, char *const names[], size_t n)
{
	char *err = NULL;
	int rc = app_registry_for(app, names, n, &err);

	return loaded(app, rc, err);
}

int
cmd_db(struct hqt_app *app)
{
	char *err = NULL;
	int rc = app_db(app, &err);

	return loaded(app, rc, err);
}

int
cmd_tmux(struct hqt_app *app)
{
	char *err = NULL;
	int rc = app_tmux(app, &err);

	return loaded(app, rc, err);
}

void
cmd_sessions_free(struct cmd_sessions *targets)
{
	for (size_t k = 0; k < targets->n; k++)
		db_session_free(targets->v[k]);
	free(targets->v);
	targets->v = NULL;
	targets->n = 0;
}

/*
 * Every name is looked up first, and one that names nothing stops them all
 * before anything is done (a typo in `hqt rm 3 4 5x` must not leave 3 and
 * 4 deleted and the user guessing).  A session named twice is acted on
 * once.
 */
static int
lookup(struct hqt_app *app, const struct cmd_entry *e, char *const operands[], int n,
       struct cmd_sessions *out)
{
	bool failed = false;
	char *err = NULL;

	out->v = xcalloc((size_t)n + 1, sizeof *out->v);
	out->n = 0;
	for (int i = 0; i < n; i++) {
		struct db_session *s = NULL;
		bool dup = false;
		if (db_session_find(app->db, operands[i], &s, &err) != 0) {
			cmd_error("%s", err);
			free(err);
			err = NULL;
			failed = true;
			continue;
		}
		for (size_t k = 0; k < out->n; k++)
			dup = dup || out->v[k]->id == s->id;
		if (dup)
			db_session_free(s);
		else
			out->v[out->n++] = s;
	}
	if (!failed)
		return 0;
	if (n > 1)
		cmd_error("nothing %s: name only sessions that exist",
			  e->done != NULL ? e->done : "done");
	cmd_sessions_free(out);
	return -1;
}

int
cmd_prepare(struct hqt_app *app, const struct cmd_entry *e, char *const operands[], int n,
	    struct cmd_sessions *targets)
{
	unsigned needs = e->needs;

	if (e->target != CMD_TARGET_NONE)
		needs |= CMD_DB;
	if (needs != 0 && cmd_config(app) != 0)
		return -1;
	/* The database before the registry: a plugin's warnings are not
	 * what a user whose database cannot be opened needs to read first. */
	if ((needs & CMD_DB) && cmd_db(app) != 0)
		return -1;
	if ((needs & CMD_TMUX) && cmd_tmux(app) != 0)
		return -1;
	if ((needs & CMD_REGISTRY) && cmd_registry(app) != 0)
		return -1;
	if (e->target == CMD_TARGET_NONE || targets == NULL)
		return 0;
	return lookup(app, e, operands, n, targets);
}

int
cmd_json_args(const struct cmd_entry *e, int argc, char **argv, int operands, bool *json,
	      int *rc)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*json = false;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'j': *json = true; break;
		case 'h': *rc = cmd_print_help(e); return -1;
		default:
			*rc = cmd_usage_error(e, "unknown option '%s'", argv[optind - 1]);
			return -1;
		}
	}
	if (argc - optind > operands) {
		*rc = cmd_usage_error(e, "unexpected argument '%s'", argv[optind + operands]);
		return -1;
	}
	if (argc - optind < operands) {
		*rc = cmd_usage_error(e, "%s needs %s", e->name, operands == 1 ? "an operand" : "operands");
		return -1;
	}
	return optind;
}
