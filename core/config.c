/* config.c: hqt.ini looked up, parsed with inih and validated into struct config (SPEC §5). */
#include "config.h"
#include "util.h"
#include "version.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Limits.  They keep every vector far below STRV_MAX and every quadratic
 * lookup cheap, whatever the file holds; each one is reported, never applied
 * silently.
 */
#define CONFIG_MAX_FILE     (1u << 20) /* bytes */
#define CONFIG_MAX_LINE     65536      /* bytes per line, where inih lets us choose */
#define CONFIG_MAX_SECTIONS 1024       /* [harness.*] sections */
#define CONFIG_MAX_KEYS     1024       /* keys per [harness.*] section */
#define CONFIG_MAX_ITEMS    1024       /* items per list */
#define CONFIG_MAX_WARNINGS 50
#define TMUX_NAME_MAX       64
/* inih copies section names into a 50-byte buffer and cuts longer ones
 * silently; a name that reaches the cut is refused instead. */
#define INIH_SECTION_MAX    48 /* characters */

#define HARNESS_PREFIX "harness."

/* Every .so in the plugin directory: a plugin dropped there is picked up
 * (the directory and each file must pass the owner and mode checks). */
static const char *const default_plugins[] = { "*", NULL };

/* The second entry, the installation's own file, is filled in at first use
 * (installation_file). */
static const char *default_system_files[] = {
	"/etc/hqt/hqt.ini",
	NULL,
	NULL,
};
const char *const *config_system_files = default_system_files;

/*
 * Debian's libinih turns inih's compile-time options into variables.  Where
 * they exist (weak references: other builds lack them and the pointers are
 * NULL) a heap line buffer of CONFIG_MAX_LINE is asked for and the syntax
 * is pinned: no continuation lines, so an indented "key = value" (git-config
 * style) is a key of its own instead of being glued to the key above it.
 * Elsewhere the library's compiled-in options apply: the reader reports a
 * line longer than its buffer instead of letting inih split it in two, and
 * the handler refuses what inih reads as a continuation.
 */
extern int ini_max_line __attribute__((weak));
extern int ini_initial_alloc __attribute__((weak));
extern bool ini_use_stack __attribute__((weak));
extern bool ini_allow_realloc __attribute__((weak));
extern bool ini_allow_multiline __attribute__((weak));
extern bool ini_allow_no_value __attribute__((weak));
extern bool ini_stop_on_first_error __attribute__((weak));

struct inih_knobs {
	int max_line, initial_alloc;
	bool use_stack, allow_realloc, allow_multiline, allow_no_value, stop_on_first_error;
};

#define KNOB_SET(k, field, var, val)               \
	do {                                       \
		if (&(var) != NULL) {              \
			(k)->field = (var);        \
			(var) = (val);             \
		}                                  \
	} while (0)
#define KNOB_RESTORE(k, field, var)                \
	do {                                       \
		if (&(var) != NULL)                \
			(var) = (k)->field;        \
	} while (0)

static void
knobs_set(struct inih_knobs *k)
{
	KNOB_SET(k, max_line, ini_max_line, CONFIG_MAX_LINE);
	KNOB_SET(k, initial_alloc, ini_initial_alloc, CONFIG_MAX_LINE);
	KNOB_SET(k, use_stack, ini_use_stack, false);
	KNOB_SET(k, allow_realloc, ini_allow_realloc, false);
	KNOB_SET(k, allow_multiline, ini_allow_multiline, false);
	KNOB_SET(k, allow_no_value, ini_allow_no_value, false);
	KNOB_SET(k, stop_on_first_error, ini_stop_on_first_error, true);
}

static void
knobs_restore(const struct inih_knobs *k)
{
	KNOB_RESTORE(k, max_line, ini_max_line);
	KNOB_RESTORE(k, initial_alloc, ini_initial_alloc);
	KNOB_RESTORE(k, use_stack, ini_use_stack);
	KNOB_RESTORE(k, allow_realloc, ini_allow_realloc);
	KNOB_RESTORE(k, allow_multiline, ini_allow_multiline);
	KNOB_RESTORE(k, allow_no_value, ini_allow_no_value);
	KNOB_RESTORE(k, stop_on_first_error, ini_stop_on_first_error);
}

/* Whether inih reads an indented line after a key as a continuation. */
static bool
continuations(void)
{
	return &ini_allow_multiline == NULL; /* pinned off where it can be */
}

/* The keys of [hqt], [plugins], [sandbox] and [sessions], and where each one lands. */
enum kind {
	K_PATH,         /* one path; empty: the built-in default */
	K_TMUX_SOCKET,  /* a tmux name, or empty */
	K_TMUX_SESSION, /* a tmux name */
	K_LOAD,         /* "*" or plugin names */
	K_BOOL,
	K_FS,           /* rw | ro, into a bool "rw" */
	K_PATHS,        /* a list of paths */
	K_ENV,          /* a list of variable names */
	K_WORKTREE,     /* never | ask | always */
	K_NET,          /* on | off | allow[:LIST], into sandbox.net, net_allow, net_list */
	K_STRING,       /* kept as written (a command line split later) */
};

struct known_key {
	const char *section;
	const char *name;
	enum kind kind;
	size_t off; /* of the member in struct config */
};

static const struct known_key known_keys[] = {
	{ "hqt", "plugin_dir", K_PATH, offsetof(struct config, plugin_dir) },
	{ "hqt", "db", K_PATH, offsetof(struct config, db_path) },
	{ "hqt", "tmux_socket", K_TMUX_SOCKET, offsetof(struct config, tmux_socket) },
	{ "hqt", "tmux_session", K_TMUX_SESSION, offsetof(struct config, tmux_session) },
	{ "plugins", "load", K_LOAD, offsetof(struct config, plugins_load) },
	{ "sandbox", "enabled", K_BOOL, offsetof(struct config, sandbox.enabled) },
	{ "sandbox", "fs", K_FS, offsetof(struct config, sandbox.fs_rw) },
	{ "sandbox", "net", K_NET, offsetof(struct config, sandbox) },
	{ "sandbox", "allow_ptrace", K_BOOL, offsetof(struct config, sandbox.allow_ptrace) },
	{ "sandbox", "ro_binds", K_PATHS, offsetof(struct config, sandbox.ro_binds) },
	{ "sandbox", "rw_binds", K_PATHS, offsetof(struct config, sandbox.rw_binds) },
	{ "sandbox", "env", K_ENV, offsetof(struct config, sandbox.env) },
	{ "sessions", "worktree", K_WORKTREE, offsetof(struct config, worktree) },
	{ "sessions", "worktree_dir", K_PATH, offsetof(struct config, worktree_dir) },
	{ "notify", "tmux", K_BOOL, offsetof(struct config, notify_tmux) },
	{ "notify", "desktop", K_BOOL, offsetof(struct config, notify_desktop) },
	{ "notify", "command", K_STRING, offsetof(struct config, notify_command) },
};

enum section_kind { SEC_NONE, SEC_KNOWN, SEC_HARNESS, SEC_UNKNOWN };

/* One parse: the text, where inih is in it, and what was found so far. */
struct parse {
	struct config *cfg;
	const char *name;        /* the file, for messages */
	char *base;              /* relative paths are relative to this, or the cwd */
	const char *text;
	size_t len, pos;
	int lineno;              /* the line inih is working on */
	int header_line;         /* the latest section header */
	bool indented;           /* the current line starts with a blank */
	bool have_key;           /* a key since the last header: inih's prev_name is set */
	char *section;           /* section of the latest key */
	enum section_kind skind;
	size_t sec;              /* index into cfg->sections for SEC_HARNESS */
	char *key;               /* the latest key */
	int seen[ARRAY_SIZE(known_keys)];
	int err_line;            /* line of *err, 0 while there is none */
	char *err;
	struct strv *warnings;
	size_t nwarnings;
};

/* s made safe and short for a one-line message. Caller frees. */
static char *
printable(const char *s)
{
	size_t n = strlen(s), max = 80, i;
	char *out;

	if (n > max)
		n = max;
	out = xmalloc(n + 4);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		out[i] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	if (strlen(s) > max) {
		memcpy(out + i, "...", 3);
		i += 3;
	}
	out[i] = '\0';
	return out;
}

static void HQT_PRINTF(3, 4)
parse_error(struct parse *st, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (st->err != NULL)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	st->err = xasprintf("%s:%d: %s", st->name, line, msg);
	st->err_line = line;
	free(msg);
}

static void HQT_PRINTF(3, 4)
parse_warn(struct parse *st, int line, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (st->warnings == NULL)
		return;
	if (st->nwarnings++ == CONFIG_MAX_WARNINGS) {
		strv_pushf(st->warnings, "%s: more warnings not shown", st->name);
		return;
	}
	if (st->nwarnings > CONFIG_MAX_WARNINGS)
		return;
	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	strv_pushf(st->warnings, "%s:%d: %s", st->name, line, msg);
	free(msg);
}

static void
bad_value(struct parse *st, const char *section, const char *key, const char *value,
	  const char *accepted)
{
	char *v = printable(value), *s = printable(section), *k = printable(key);

	parse_error(st, st->lineno, "bad value '%s' for %s.%s (accepted: %s)", v, s, k, accepted);
	free(v);
	free(s);
	free(k);
}

/* ASCII only, whatever the locale (the TUI calls setlocale). */
static bool
is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool
is_alnum(char c)
{
	return is_alpha(c) || (c >= '0' && c <= '9');
}

/* tmux target syntax gives ':' '.' and leading '-' '$' '@' '%' '=' meanings,
 * and the socket name becomes a file name: only a safe alphabet passes. */
static bool
valid_tmux_name(const char *s)
{
	size_t n = 0;

	if (*s == '\0' || *s == '-')
		return false;
	for (; *s; s++, n++)
		if (!is_alnum(*s) && *s != '_' && *s != '-')
			return false;
	return n <= TMUX_NAME_MAX;
}

#define TMUX_NAME_ACCEPTED "letters, digits, '_' and '-', not starting with '-', at most 64 characters"

/* A key of a [harness.*] section: it ends up in plugins' messages. */
static bool
valid_key(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!is_alnum(*s) && *s != '_' && *s != '-' && *s != '.')
			return false;
	return true;
}

static int
parse_bool(const char *s, bool *out)
{
	static const char *const yes[] = { "true", "yes", "on", "1" };
	static const char *const no[] = { "false", "no", "off", "0" };

	for (size_t i = 0; i < ARRAY_SIZE(yes); i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
}

static char *
join_path(const char *dir, const char *rel)
{
	return xasprintf("%s/%s", strcmp(dir, "/") == 0 ? "" : dir, rel);
}

/*
 * path with ~ expanded; a relative one is taken relative to base (a
 * directory) and then to the current directory, so the result is absolute.
 * NULL for "~user/..." (not supported) or "~" without a home.
 */
static char *
resolve_path(const char *path, const char *base)
{
	char *p = expand_home(path), *q, *cwd;

	if (p[0] == '/')
		return p;
	if (p[0] == '~') {
		free(p);
		return NULL;
	}
	if (base != NULL && strcmp(base, ".") != 0) {
		q = join_path(base, p);
		free(p);
		p = q;
		if (p[0] == '/')
			return p;
	}
	cwd = getcwd(NULL, 0);
	if (cwd == NULL)
		return p; /* the cwd is gone; the relative path is the best left */
	q = join_path(cwd, p);
	free(cwd);
	free(p);
	return q;
}

/* The directory part of a file name; NULL when it has none. */
static char *
dir_of(const char *file)
{
	const char *slash = strrchr(file, '/');

	if (slash == NULL)
		return NULL;
	if (slash == file)
		return xstrdup("/");
	return xstrndup(file, (size_t)(slash - file));
}

/* A list key: items are validated one by one. */
static void
set_list(struct parse *st, const struct known_key *k, struct strv *list, const char *value)
{
	struct strv items = STRV_INIT;

	strv_clear(list);
	strv_split(&items, value, ',', 0);
	if (items.n > CONFIG_MAX_ITEMS) {
		parse_error(st, st->lineno, "too many items for %s.%s (at most %d)", k->section,
			    k->name, CONFIG_MAX_ITEMS);
		strv_clear(&items);
		return;
	}
	for (size_t i = 0; i < items.n && st->err == NULL; i++) {
		const char *item = items.v[i];
		char *path;

		switch (k->kind) {
		case K_LOAD:
			if (strcmp(item, "*") == 0 ? list->n > 0 :
			    !valid_name(item) || strv_find(list, "*") >= 0) {
				bad_value(st, k->section, k->name, item,
					  "* alone, or plugin names of a-z, 0-9, '_' and '-'");
				break;
			}
			if (strv_find(list, item) < 0)
				strv_push(list, item);
			break;
		case K_PATHS:
			path = resolve_path(item, st->base);
			if (path == NULL) {
				bad_value(st, k->section, k->name, item,
					  "absolute paths, ~/... or paths relative to the file's directory");
				break;
			}
			strv_take(list, path);
			break;
		case K_ENV:
			if (!env_name_valid(item, strlen(item))) {
				bad_value(st, k->section, k->name, item,
					  "variable names of A-Z, a-z, 0-9 and '_', not starting with a "
					  "digit, at most 255 long");
				break;
			}
			strv_push(list, item);
			break;
		default:
			abort();
		}
	}
	strv_clear(&items);
}

static void
set_known(struct parse *st, const struct known_key *k, const char *value)
{
	void *field = (char *)st->cfg + k->off;
	char **str = field;
	bool *flag = field;
	char *path;

	switch (k->kind) {
	case K_PATH:
		if (*value == '\0') {
			free(*str);
			*str = NULL;
			break;
		}
		path = resolve_path(value, st->base);
		if (path == NULL) {
			bad_value(st, k->section, k->name, value,
				  "an absolute path, ~/... or a path relative to the file's directory");
			break;
		}
		free(*str);
		*str = path;
		break;
	case K_TMUX_SOCKET:
	case K_TMUX_SESSION:
		if ((*value != '\0' || k->kind == K_TMUX_SESSION) && !valid_tmux_name(value)) {
			bad_value(st, k->section, k->name, value,
				  k->kind == K_TMUX_SOCKET ? "empty, or " TMUX_NAME_ACCEPTED
							   : TMUX_NAME_ACCEPTED);
			break;
		}
		free(*str);
		*str = xstrdup(value);
		break;
	case K_BOOL:
		if (parse_bool(value, flag) != 0)
			bad_value(st, k->section, k->name, value,
				  "true, false, yes, no, on, off, 1, 0");
		break;
	case K_FS:
		if (strcasecmp(value, "rw") == 0)
			*flag = true;
		else if (strcasecmp(value, "ro") == 0)
			*flag = false;
		else
			bad_value(st, k->section, k->name, value, "rw, ro");
		break;
	case K_LOAD:
	case K_PATHS:
	case K_ENV:
		set_list(st, k, field, value);
		break;
	case K_STRING:
		free(*str);
		*str = *value != '\0' ? xstrdup(value) : NULL;
		break;
	case K_NET: {
		struct sandbox_defaults *d = field;
		struct config_net net = { false, false, STRV_INIT };
		char *why = NULL;

		if (config_net_parse(value, &net, &why) != 0) {
			bad_value(st, k->section, k->name, value, why);
			free(why);
			break;
		}
		d->net = net.on;
		d->net_allow = net.allow;
		strv_clear(&d->net_list);
		d->net_list = net.list;
		break;
	}
	case K_WORKTREE: {
		int *w = field;
		if (strcasecmp(value, "never") == 0)
			*w = CONFIG_WORKTREE_NEVER;
		else if (strcasecmp(value, "ask") == 0)
			*w = CONFIG_WORKTREE_ASK;
		else if (strcasecmp(value, "always") == 0)
			*w = CONFIG_WORKTREE_ALWAYS;
		else
			bad_value(st, k->section, k->name, value, "never, ask, always");
		break;
	}
	}
}

static struct config_section *
harness_section(struct parse *st)
{
	return &st->cfg->sections[st->sec];
}

static void
set_harness(struct parse *st, const char *value)
{
	struct config_section *sec = harness_section(st);
	const char *key = st->key;
	int i;

	if (strcmp(key, "plugin") == 0) {
		if (!valid_name(value)) {
			char *section = xasprintf(HARNESS_PREFIX "%s", sec->name);
			bad_value(st, section, key, value, "a plugin name of a-z, 0-9, '_' and '-'");
			free(section);
			return;
		}
		free(sec->plugin);
		sec->plugin = xstrdup(value);
		return;
	}
	if (!valid_key(key)) {
		char *k = printable(key);
		parse_error(st, st->lineno,
			    "bad key name '%s' in [harness.%s] (accepted: letters, digits, '_', '-' and '.')",
			    k, sec->name);
		free(k);
		return;
	}
	i = strv_find(&sec->keys, key);
	if (i >= 0) {
		free(sec->values.v[i]);
		sec->values.v[i] = xstrdup(value);
		free(sec->lines.v[i]);
		sec->lines.v[i] = xasprintf("%s:%d", st->name, st->lineno);
		return;
	}
	if (sec->keys.n >= CONFIG_MAX_KEYS) {
		parse_error(st, st->lineno, "too many keys in [harness.%s] (at most %d)", sec->name,
			    CONFIG_MAX_KEYS);
		return;
	}
	strv_push(&sec->keys, key);
	strv_push(&sec->values, value);
	strv_pushf(&sec->lines, "%s:%d", st->name, st->lineno);
}

/* A key of a section other than the one before: learn what it is. */
static void
enter_section(struct parse *st, const char *section)
{
	struct config *cfg = st->cfg;
	const char *hname;
	size_t i;

	free(st->section);
	st->section = xstrdup(section);
	st->skind = SEC_UNKNOWN;
	if (*section == '\0') {
		st->skind = SEC_NONE;
		return;
	}
	if (strlen(section) > INIH_SECTION_MAX) {
		parse_error(st, st->header_line, "section name too long (at most %d characters)",
			    INIH_SECTION_MAX);
		return;
	}
	if (strcmp(section, "hqt") == 0 || strcmp(section, "plugins") == 0 ||
	    strcmp(section, "sandbox") == 0 || strcmp(section, "sessions") == 0 ||
	    strcmp(section, "notify") == 0) {
		st->skind = SEC_KNOWN;
		return;
	}
	if (strncmp(section, HARNESS_PREFIX, strlen(HARNESS_PREFIX)) != 0) {
		char *s = printable(section);
		parse_warn(st, st->header_line, "unknown section [%s]", s);
		free(s);
		return;
	}
	hname = section + strlen(HARNESS_PREFIX);
	if (!valid_name(hname)) {
		char *s = printable(section);
		parse_error(st, st->header_line,
			    "bad section name [%s] (harness names: a-z, 0-9, '_' and '-')", s);
		free(s);
		return;
	}
	st->skind = SEC_HARNESS;
	for (i = 0; i < cfg->nsections; i++)
		if (strcmp(cfg->sections[i].name, hname) == 0)
			break;
	st->sec = i;
	if (i < cfg->nsections)
		return; /* opened again further down: its keys join the first one */
	if (cfg->nsections >= CONFIG_MAX_SECTIONS) {
		parse_error(st, st->header_line, "too many [harness.*] sections (at most %d)",
			    CONFIG_MAX_SECTIONS);
		st->skind = SEC_UNKNOWN;
		return;
	}
	cfg->sections = xreallocarray(cfg->sections, cfg->nsections + 1, sizeof *cfg->sections);
	memset(&cfg->sections[i], 0, sizeof cfg->sections[i]);
	cfg->sections[i].name = xstrdup(hname);
	cfg->sections[i].where = xasprintf("%s:%d", st->name, st->header_line);
	cfg->nsections++;
}

static void handle_key(struct parse *st, const char *value);

static int
handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *st = user;
	/* An inih built with INI_ALLOW_MULTILINE and no knob to turn it off
	 * reads an indented line after a key as more of that key's value, and
	 * calls again with the previous name (cut at 49 characters). */
	bool cont = continuations() && st->indented && st->have_key &&
		    st->key != NULL && strncmp(st->key, name, strlen(name)) == 0;

	st->have_key = true;
	if (st->err != NULL)
		return 1;
	if (cont) {
		char *k = printable(st->key);
		parse_error(st, st->lineno,
			    "indented line read as a continuation of '%s' (not supported: "
			    "remove the indentation)", k);
		free(k);
		return 1;
	}
	if (*name == '\0') {
		parse_error(st, st->lineno, "syntax error: empty key");
		return 1;
	}
	if (st->section == NULL || strcmp(section, st->section) != 0) {
		enter_section(st, section);
		if (st->err != NULL)
			return 1;
	}
	free(st->key);
	st->key = xstrdup(name);
	handle_key(st, value);
	return 1;
}

/* st->key = value in the current section. */
static void
handle_key(struct parse *st, const char *value)
{
	struct config_section *sec;
	char *k;
	int dup;

	switch (st->skind) {
	case SEC_NONE:
		k = printable(st->key);
		parse_warn(st, st->lineno, "key '%s' outside of any section", k);
		free(k);
		break;
	case SEC_UNKNOWN:
		break; /* the section was warned about once */
	case SEC_HARNESS:
		sec = harness_section(st);
		if ((dup = strv_find(&sec->keys, st->key)) >= 0) {
			k = printable(st->key);
			parse_warn(st, st->lineno,
				   "duplicate key '%s' in [harness.%s] (also on line %s; the last one wins)",
				   k, sec->name, strrchr(sec->lines.v[dup], ':') + 1);
			free(k);
		} else if (strcmp(st->key, "plugin") == 0 && sec->plugin != NULL) {
			parse_warn(st, st->lineno,
				   "duplicate key 'plugin' in [harness.%s] (the last one wins)",
				   sec->name);
		}
		set_harness(st, value);
		break;
	case SEC_KNOWN:
		for (size_t i = 0; i < ARRAY_SIZE(known_keys); i++) {
			const struct known_key *kk = &known_keys[i];
			if (strcmp(kk->section, st->section) != 0 || strcmp(kk->name, st->key) != 0)
				continue;
			if (st->seen[i] != 0)
				parse_warn(st, st->lineno,
					   "duplicate key '%s' in [%s] (also on line %d; the last one wins)",
					   kk->name, kk->section, st->seen[i]);
			st->seen[i] = st->lineno;
			set_known(st, kk, value);
			return;
		}
		k = printable(st->key);
		parse_warn(st, st->lineno, "unknown key '%s' in [%s]", k, st->section);
		free(k);
		break;
	}
}

/*
 * inih's reader: one whole line per call, so that inih's line count and ours
 * agree.  It also notes what inih makes of the line: where a section header
 * is (inih only reports sections with their keys), and, for inih builds
 * with continuation lines, whether the line is indented after a key.
 */
static char *
reader(char *buf, int size, void *stream)
{
	struct parse *st = stream;
	const char *line = st->text + st->pos, *nl;
	size_t len, i = 0;

	if (st->err != NULL || st->pos >= st->len)
		return NULL;
	nl = memchr(line, '\n', st->len - st->pos);
	len = nl != NULL ? (size_t)(nl - line) + 1 : st->len - st->pos;
	st->pos += len;
	st->lineno++;
	if (memchr(line, '\0', len) != NULL) {
		parse_error(st, st->lineno, "syntax error: NUL byte");
		return NULL;
	}
	/* The line, its '\n' and a NUL must fit: inih would split a longer one. */
	if (size < 3 || len - (nl != NULL) > (size_t)size - 2) {
		parse_error(st, st->lineno, "line too long (at most %d bytes)", size - 2);
		return NULL;
	}
	memcpy(buf, line, len);
	buf[len] = '\0';

	if (st->lineno == 1 && len >= 3 && memcmp(line, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	while (i < len && isspace((unsigned char)line[i]))
		i++;
	st->indented = i > 0; /* inih's test, BOM included */
	if (i == len || line[i] == ';' || line[i] == '#')
		return buf; /* blank or comment */
	if (line[i] == '[' && !(continuations() && st->indented && st->have_key)) {
		const char *close = memchr(line + i, ']', len - i), *p;

		st->have_key = false;
		st->header_line = st->lineno;
		/* inih drops whatever follows the ']': "[sandbox] fs = ro" would
		 * lose its key without a word.  Only a comment may follow. */
		for (p = close != NULL ? close + 1 : line + len; p < line + len; p++)
			if (!isspace((unsigned char)*p))
				break;
		if (p < line + len && *p != ';') {
			parse_error(st, st->lineno, "syntax error: text after the section header");
			return NULL;
		}
	}
	return buf;
}

bool
config_net_host_valid(const char *name)
{
	size_t len = strlen(name), labels = 0;
	const char *last = name;

	if (len == 0 || len > 253)
		return false;
	for (const char *s = name; *s != '\0';) {
		size_t n = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789-");

		if (n == 0 || n > 63 || s[0] == '-' || s[n - 1] == '-' || (s[n] != '.' && s[n] != '\0'))
			return false;
		labels++;
		last = s;
		s += n;
		if (*s == '.' && *++s == '\0')
			return false; /* a trailing dot */
	}
	/* Two labels at least, and a last one that is no number: no IP
	 * literal (198.18.0.1, 2130706433) passes for a name. */
	return labels >= 2 && strspn(last, "0123456789") != strlen(last);
}

int
config_net_entry(const char *item, struct strv *out)
{
	char *e = xstrdup(item), *colon, *name;
	long port = 443;
	int rc = -1;

	for (char *c = e; *c != '\0'; c++)
		*c = (char)tolower((unsigned char)*c);
	if (strcmp(e, "+") == 0) {
		if (strv_find(out, "+") < 0)
			strv_push(out, "+");
		free(e);
		return 0;
	}
	if ((colon = strchr(e, ':')) != NULL) {
		*colon = '\0';
		if (parse_long(colon + 1, &port) != 0 || port < 1 || port > 65535 ||
		    colon[1] == '+' || colon[1] == '0')
			goto out;
	}
	name = strncmp(e, "*.", 2) == 0 ? e + 2 : e;
	if (config_net_host_valid(name)) {
		char *n = xasprintf("%s:%ld", e, port);
		if (strv_find(out, n) < 0)
			strv_push(out, n);
		free(n);
		rc = 0;
	}
out:
	free(e);
	return rc;
}

int
config_net_parse(const char *value, struct config_net *out, char **why)
{
	struct strv items = STRV_INIT, list = STRV_INIT;
	const char *rest = NULL;
	bool b;

	if (parse_bool(value, &b) == 0) {
		out->on = b;
		out->allow = false;
		strv_clear(&out->list);
		return 0;
	}
	if (strcasecmp(value, "allow") == 0)
		rest = "+";
	else if (strncasecmp(value, "allow:", 6) == 0)
		rest = value + 6;
	if (rest == NULL) {
		set_err(why, "%s", CONFIG_NET_FORMS);
		return -1;
	}
	strv_split(&items, rest, ',', 0);
	if (items.n == 0 || items.n > CONFIG_NET_MAX) {
		set_err(why, "%s entries after allow: (%s)", items.n == 0 ? "no" : "too many",
			CONFIG_NET_FORMS);
		strv_clear(&items);
		return -1;
	}
	for (size_t i = 0; i < items.n; i++)
		if (config_net_entry(items.v[i], &list) != 0) {
			char shown[81];
			size_t n = 0;

			/* shown as typed, but never a control character */
			for (const char *c = items.v[i]; *c != '\0' && n < sizeof shown - 1; c++)
				shown[n++] = (unsigned char)*c < 0x20 || *c == 0x7f ? '?' : *c;
			shown[n] = '\0';
			set_err(why, "'%s' is no allow entry (accepted: %s)", shown, CONFIG_NET_FORMS);
			strv_clear(&items);
			strv_clear(&list);
			return -1;
		}
	strv_clear(&items);
	out->on = false;
	out->allow = true;
	strv_clear(&out->list);
	out->list = list;
	return 0;
}

/* Defaults that need no lookup: everything but plugin_dir and db_path. */
static void
base_defaults(struct config *cfg)
{
	memset(cfg, 0, sizeof *cfg);
	cfg->tmux_socket = xstrdup("");
	cfg->tmux_session = xstrdup("hqt");
	strv_pushv(&cfg->plugins_load, default_plugins);
	cfg->sandbox.enabled = false;
	cfg->sandbox.fs_rw = true;
	/* net = allow:+ : the harness's own hosts through the session's proxy
	 * (docs/sandbox.md); on gives the host network, on purpose only. */
	cfg->sandbox.net = false;
	cfg->sandbox.net_allow = true;
	strv_clear(&cfg->sandbox.net_list);
	strv_push(&cfg->sandbox.net_list, "+");
	cfg->worktree = CONFIG_WORKTREE_ASK;
	cfg->notify_tmux = true;
	cfg->notify_desktop = true;
}

/* The plugins next to the executable: <bindir>/HQT_PLUGIN_RELDIR, resolved. */
static char *
default_plugin_dir(void)
{
	static const char *const reldirs[] = {
		HQT_PLUGIN_RELDIR,
#ifdef HQT_BUILD_PLUGIN_RELDIR
		HQT_BUILD_PLUGIN_RELDIR,
#endif
	};
	char *exe = self_exe(), *dir, *first = NULL;

	if (exe == NULL)
		return NULL;
	dir = dir_of(exe);
	free(exe);
	if (dir == NULL)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(reldirs); i++) {
		char *p = join_path(dir, reldirs[i]), *real = realpath(p, NULL);
		if (real != NULL) {
			free(p);
			free(first);
			free(dir);
			return real;
		}
		if (first == NULL)
			first = p;
		else
			free(p);
	}
	free(dir);
	return first; /* missing: the plugin host says so when it opens it */
}

static char *
default_db(void)
{
	char *data = xdg_data_home(), *db;

	if (data == NULL)
		return NULL;
	db = xasprintf("%s/hqt/hqt.db", data);
	free(data);
	return db;
}

/* The paths nothing else set. */
static int
finish(struct config *cfg, char **err)
{
	if (cfg->plugin_dir == NULL)
		cfg->plugin_dir = default_plugin_dir();
	if (cfg->db_path == NULL)
		cfg->db_path = default_db();
	if (cfg->plugin_dir == NULL) {
		set_err(err, "cannot find the plugin directory (/proc/self/exe is unreadable): "
			     "use --plugin-dir or $HQT_PLUGIN_DIR");
		return -1;
	}
	if (cfg->db_path == NULL) {
		set_err(err, "cannot find a place for the database (no home directory): "
			     "use --db or $HQT_DB");
		return -1;
	}
	return 0;
}

static void
describe_syntax_error(struct parse *st, int line)
{
	const char *p = st->text, *end = st->text + st->len;

	for (int i = 1; i < line && p < end; i++) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		p = nl != NULL ? nl + 1 : end;
	}
	while (p < end && isspace((unsigned char)*p) && *p != '\n')
		p++;
	if (p < end && *p == '[')
		parse_error(st, line, "syntax error: missing ']' in the section header");
	else
		parse_error(st, line, "syntax error: expected 'key = value'");
}

/* Parse text (len bytes) named `name` into a fresh *out (only on success). */
static int
parse_text(struct config *out, const char *text, size_t len, const char *name,
	   struct strv *warnings, char **err)
{
	struct parse st;
	struct inih_knobs knobs;
	struct config cfg;
	int r;

	if (len >= CONFIG_MAX_FILE) {
		set_err(err, "%s: too large (more than %u bytes)", name, CONFIG_MAX_FILE - 1);
		return -1;
	}
	base_defaults(&cfg);
	memset(&st, 0, sizeof st);
	st.cfg = &cfg;
	st.name = name;
	st.base = dir_of(name);
	st.text = text;
	st.len = len;
	st.warnings = warnings;

	knobs_set(&knobs);
	r = ini_parse_stream(reader, &st, handler, &st);
	knobs_restore(&knobs);

	if (r == -2) {
		static const char msg[] = "hqt: out of memory\n";
		(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
		abort();
	}
	if (r > 0 && (st.err == NULL || r < st.err_line)) {
		free(st.err);
		st.err = NULL;
		describe_syntax_error(&st, r);
	}
	free(st.base);
	free(st.section);
	free(st.key);
	if (st.err != NULL) {
		set_err(err, "%s", st.err);
		free(st.err);
		config_free(&cfg);
		return -1;
	}
	*out = cfg;
	return 0;
}

int
config_parse_string(struct config *cfg, const char *text, const char *name,
		    struct strv *warnings, char **err)
{
	struct config tmp;

	memset(cfg, 0, sizeof *cfg);
	if (name == NULL)
		name = "<string>";
	if (parse_text(&tmp, text, strlen(text), name, warnings, err) != 0)
		return -1;
	if (finish(&tmp, err) != 0) {
		config_free(&tmp);
		return -1;
	}
	*cfg = tmp;
	return 0;
}

void
config_defaults(struct config *cfg)
{
	base_defaults(cfg);
	cfg->plugin_dir = default_plugin_dir();
	cfg->db_path = default_db();
}

static const char *
env_set(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/*
 * The hqt.ini this installation put down: <bindir>/HQT_SYSCONF_RELDIR/hqt,
 * so one installed with `cmake --install --prefix DIR` reads DIR/etc/hqt
 * (for /usr that is /usr/etc, never installed to: /etc comes first).  An
 * absolute sysconfdir, or no /proc/self/exe: HQT_SYSCONFDIR as configured.
 */
static const char *
installation_file(void)
{
	static char *file;
	char *exe, *dir;

	if (file != NULL)
		return file;
	if (HQT_SYSCONF_RELDIR[0] != '/' && (exe = self_exe()) != NULL) {
		dir = dir_of(exe);
		free(exe);
		if (dir != NULL) {
			file = xasprintf("%s/" HQT_SYSCONF_RELDIR "/hqt/hqt.ini",
					 strcmp(dir, "/") == 0 ? "" : dir);
			free(dir);
		}
	}
	if (file == NULL)
		file = xstrdup(HQT_SYSCONFDIR "/hqt/hqt.ini");
	return file;
}

/*
 * The file to read (SPEC §5): 0 with *path set, or NULL for the built-in
 * defaults; -1 with *err.  --config and $HQT_CONFIG must exist; the user's
 * and the system's file are used when they exist at all.
 */
static int
find_config(const struct config_overrides *ov, char **path, const char **origin, char **err)
{
	char *xdg;
	struct stat st;

	*path = NULL;
	*origin = NULL;
	if (ov != NULL && ov->config != NULL) {
		if (*ov->config == '\0') {
			set_err(err, "--config: empty file name");
			return -1;
		}
		*path = resolve_path(ov->config, NULL);
		*origin = "--config";
	} else if (env_set("HQT_CONFIG") != NULL) {
		*path = resolve_path(getenv("HQT_CONFIG"), NULL);
		*origin = "$HQT_CONFIG";
	}
	if (*origin != NULL) {
		if (*path == NULL) {
			set_err(err, "%s: cannot expand '%s'", *origin,
				ov != NULL && ov->config != NULL ? ov->config : getenv("HQT_CONFIG"));
			return -1;
		}
		return 0;
	}

	xdg = xdg_config_home();
	if (xdg != NULL) {
		*path = xasprintf("%s/hqt/hqt.ini", xdg);
		free(xdg);
		if (stat(*path, &st) == 0 || (errno != ENOENT && errno != ENOTDIR))
			return 0;
		free(*path);
		*path = NULL;
	}
	if (config_system_files == default_system_files && default_system_files[1] == NULL)
		default_system_files[1] = installation_file();
	for (size_t i = 0; config_system_files != NULL && config_system_files[i] != NULL; i++) {
		if (stat(config_system_files[i], &st) == 0 ||
		    (errno != ENOENT && errno != ENOTDIR)) {
			*path = xstrdup(config_system_files[i]);
			return 0;
		}
	}
	return 0;
}

/* An override or environment path: ~ expanded, made absolute against the cwd. */
static int
set_path(char **field, const char *value, const char *what, char **err)
{
	char *p;

	if (*value == '\0') {
		set_err(err, "%s: empty path", what);
		return -1;
	}
	p = resolve_path(value, NULL);
	if (p == NULL) {
		char *v = printable(value);
		set_err(err, "%s: cannot expand '%s'", what, v);
		free(v);
		return -1;
	}
	free(*field);
	*field = p;
	return 0;
}

static int
apply_env_and_overrides(struct config *cfg, const struct config_overrides *ov, char **err)
{
	const char *v;

	if ((v = env_set("HQT_PLUGIN_DIR")) != NULL &&
	    set_path(&cfg->plugin_dir, v, "$HQT_PLUGIN_DIR", err) != 0)
		return -1;
	if ((v = env_set("HQT_DB")) != NULL && set_path(&cfg->db_path, v, "$HQT_DB", err) != 0)
		return -1;
	if (ov == NULL)
		return 0;
	if (ov->plugin_dir != NULL && set_path(&cfg->plugin_dir, ov->plugin_dir, "--plugin-dir", err) != 0)
		return -1;
	if (ov->db != NULL && set_path(&cfg->db_path, ov->db, "--db", err) != 0)
		return -1;
	if (ov->tmux_socket != NULL) {
		if (*ov->tmux_socket != '\0' && !valid_tmux_name(ov->tmux_socket)) {
			char *s = printable(ov->tmux_socket);
			set_err(err, "bad value '%s' for --tmux-socket (accepted: empty, or "
				     TMUX_NAME_ACCEPTED ")", s);
			free(s);
			return -1;
		}
		free(cfg->tmux_socket);
		cfg->tmux_socket = xstrdup(ov->tmux_socket);
	}
	return 0;
}

int
config_load(struct config *cfg, const struct config_overrides *ov, struct strv *warnings,
	    char **err)
{
	struct config tmp;
	char *path, *real, *text;
	const char *origin;
	size_t len;

	memset(cfg, 0, sizeof *cfg);
	if (find_config(ov, &path, &origin, err) != 0)
		return -1;
	if (path == NULL) {
		base_defaults(&tmp);
	} else {
		/* Messages and relative paths in the file use its real name. */
		real = realpath(path, NULL);
		if (real != NULL) {
			free(path);
			path = real;
		}
		text = read_file(path, CONFIG_MAX_FILE, &len);
		if (text == NULL) {
			if (errno == EFBIG)
				set_err(err, "%s: too large (more than %u bytes)", path,
					CONFIG_MAX_FILE - 1);
			else if (origin != NULL)
				set_err(err, "cannot open '%s' (%s): %s", path, origin, strerror(errno));
			else
				set_err(err, "cannot open '%s': %s", path, strerror(errno));
			free(path);
			return -1;
		}
		if (parse_text(&tmp, text, len, path, warnings, err) != 0) {
			free(text);
			free(path);
			return -1;
		}
		free(text);
		tmp.path = path;
	}
	if (apply_env_and_overrides(&tmp, ov, err) != 0 || finish(&tmp, err) != 0) {
		config_free(&tmp);
		return -1;
	}
	*cfg = tmp;
	return 0;
}

void
config_free(struct config *cfg)
{
	if (cfg == NULL)
		return;
	free(cfg->path);
	free(cfg->plugin_dir);
	free(cfg->db_path);
	free(cfg->worktree_dir);
	free(cfg->notify_command);
	free(cfg->tmux_socket);
	free(cfg->tmux_session);
	strv_clear(&cfg->plugins_load);
	strv_clear(&cfg->sandbox.net_list);
	strv_clear(&cfg->sandbox.ro_binds);
	strv_clear(&cfg->sandbox.rw_binds);
	strv_clear(&cfg->sandbox.env);
	for (size_t i = 0; i < cfg->nsections; i++) {
		struct config_section *sec = &cfg->sections[i];
		free(sec->name);
		free(sec->plugin);
		strv_clear(&sec->keys);
		strv_clear(&sec->values);
		strv_clear(&sec->lines);
		free(sec->where);
	}
	free(cfg->sections);
	memset(cfg, 0, sizeof *cfg);
}

const struct config_section *
config_section(const struct config *cfg, const char *name)
{
	if (cfg == NULL || name == NULL)
		return NULL;
	for (size_t i = 0; i < cfg->nsections; i++)
		if (strcmp(cfg->sections[i].name, name) == 0)
			return &cfg->sections[i];
	return NULL;
}

const char *
config_section_get(const struct config_section *sec, const char *key)
{
	int i;

	if (sec == NULL || key == NULL)
		return NULL;
	if (strcmp(key, "plugin") == 0)
		return sec->plugin;
	i = strv_find(&sec->keys, key);
	return i >= 0 ? sec->values.v[i] : NULL;
}
