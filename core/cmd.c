/* cmd.c: the command table and what every command shares: messages, lazy
 * loading of the configuration, the plugin registry and the database. */
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
extern const struct cmd_entry cmd_project_entry;
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
	&cmd_project_entry,
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

int
cmd_config(struct cmd_ctx *ctx)
{
	struct strv warnings = STRV_INIT;
	char *err = NULL;

	if (ctx->cfg_loaded)
		return 0;
	if (config_load(&ctx->cfg, &ctx->ov, &warnings, &err) != 0) {
		for (size_t i = 0; i < warnings.n; i++)
			cmd_warn("%s", warnings.v[i]);
		strv_clear(&warnings);
		cmd_error("%s", err);
		free(err);
		return -1;
	}
	for (size_t i = 0; i < warnings.n; i++)
		cmd_warn("%s", warnings.v[i]);
	strv_clear(&warnings);
	ctx->cfg_loaded = true;
	return 0;
}

/* The registry's warnings, each once (a partial load, then a whole one,
 * may both have it). */
static void
reg_warnings(struct cmd_ctx *ctx)
{
	for (size_t i = 0; i < ctx->reg.warnings.n; i++) {
		if (strv_find(&ctx->reg_warned, ctx->reg.warnings.v[i]) >= 0)
			continue;
		cmd_warn("%s", ctx->reg.warnings.v[i]);
		strv_push(&ctx->reg_warned, ctx->reg.warnings.v[i]);
	}
}

int
cmd_registry(struct cmd_ctx *ctx)
{
	char *err = NULL;

	if (ctx->reg_loaded && !ctx->reg.partial)
		return 0;
	if (cmd_config(ctx) != 0)
		return -1;
	if (ctx->reg_loaded)
		registry_free(&ctx->reg);
	if (registry_load(&ctx->reg, &ctx->cfg, &err) != 0) {
		/* Commands still run; they see no harnesses, doctor says why. */
		cmd_warn("%s", err);
		free(err);
	}
	reg_warnings(ctx);
	ctx->reg_loaded = true;
	return 0;
}

int
cmd_registry_for(struct cmd_ctx *ctx, char *const names[], size_t n)
{
	size_t found = 0;

	if (ctx->reg_loaded) {
		for (size_t i = 0; i < n; i++)
			found += registry_harness(&ctx->reg, names[i]) != NULL;
		if (found == n || !ctx->reg.partial)
			return 0;
		return cmd_registry(ctx);
	}
	if (cmd_config(ctx) != 0)
		return -1;
	if (registry_load_for(&ctx->reg, &ctx->cfg, names, n, NULL) != 0)
		return cmd_registry(ctx);
	reg_warnings(ctx);
	ctx->reg_loaded = true;
	return 0;
}

int
cmd_db(struct cmd_ctx *ctx)
{
	char *err = NULL;

	if (ctx->db != NULL)
		return 0;
	if (cmd_config(ctx) != 0)
		return -1;
	if (db_open(ctx->cfg.db_path, &ctx->db, &err) != 0) {
		cmd_error("%s", err);
		free(err);
		return -1;
	}
	return 0;
}

int
cmd_tmux(struct cmd_ctx *ctx)
{
	if (ctx->tmux_ready)
		return 0;
	if (cmd_config(ctx) != 0)
		return -1;
	tmux_init(&ctx->tmux, ctx->cfg.tmux_socket, ctx->cfg.tmux_session);
	ctx->tmux_ready = true;
	return 0;
}

void
cmd_ctx_free(struct cmd_ctx *ctx)
{
	db_close(ctx->db);
	ctx->db = NULL;
	if (ctx->tmux_ready)
		tmux_free(&ctx->tmux);
	ctx->tmux_ready = false;
	registry_free(&ctx->reg);
	ctx->reg_loaded = false;
	strv_clear(&ctx->reg_warned);
	config_free(&ctx->cfg);
	ctx->cfg_loaded = false;
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
