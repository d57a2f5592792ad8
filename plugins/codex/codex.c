/* codex.c: the Codex CLI harness plugin. */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "../common/common.h"

/*
 * Codex CLI facts, all in one place (SPEC §4; the CLI reference at
 * developers.openai.com/codex/cli/reference for the flags, which `codex
 * resume` takes too; codex-rs's rollout recorder for the session files).
 * Codex picks its own id; hqt finds it in the rollout file codex writes at
 * the first turn.
 */
static const char PROGRAM[] = "codex";
static const char RESUME_COMMAND[] = "resume";
static const char MODEL_FLAG[] = "-m";
static const char *const SKIP_FLAGS[] = {"--dangerously-bypass-approvals-and-sandbox", NULL};
static const char HOME_ENV[] = "CODEX_HOME";
static const char DEFAULT_HOME[] = "~/.codex";
/*
 * Under the codex home: what the user set up, shown read-only on top of a
 * sandboxed session's own codex home (HQT_BIND_STATE), so the agent
 * behaves as configured: config (MCP servers, notify, profiles), the
 * user's instructions, rules, prompts, skills, and the login (read-only: a
 * session must not swap the key the host's codex uses).  Sessions,
 * history and logs stay the session's own.
 */
static const char *const CONFIG[] = {
	"config.toml", "AGENTS.md", "AGENTS.override.md", "rules", "prompts", "skills",
	"hooks.json", "auth.json", NULL,
};
/*
 * config.toml names programs codex runs: notify = ["python3",
 * "~/.codex/notify.py"], an MCP server's command and args.  The files it
 * names inside the codex home are made read-only too.  No TOML parser in
 * C is packaged, and this needs none: every word of the file that is a path
 * inside the home counts (a comment's too), which can only protect more.
 */
static const char CONFIG_FILE[] = "config.toml";
#define MAX_CONFIG ((size_t)1 << 20)
/* In the project: .codex/ (config.toml with notify and MCP servers, rules,
 * hooks), loaded when the project is trusted; AGENTS.override.md, which
 * wins over AGENTS.md and is seldom committed. */
static const char *const PROJECT_PROTECTED[] = {".codex/", "AGENTS.override.md", NULL};
/* <home>/sessions/YYYY/MM/DD/rollout-*.jsonl or .jsonl.zst; the first line is
 * {"type":"session_meta","payload":{"id","timestamp","cwd","source",...}}. */
static const char SESSIONS_DIR[] = "sessions";
static const char ROLLOUT_PREFIX[] = "rollout-";
static const char *const ROLLOUT_SUFFIXES[] = {".jsonl", ".jsonl.zst", NULL};
static const char META_TYPE[] = "session_meta";
/*
 * payload.source says who started the session, and its value moves: the
 * TUI alone writes "cli", the TUI behind codex's app-server daemon has
 * written "vscode" (0.169), a sub-agent an object ({"subagent": ...}).  So
 * no one value is ours; only these string values are known not to be a
 * user's TUI, and any non-string source is a sub-agent.
 */
static const char *const NOT_OURS_SOURCES[] = {"exec", "mcp", NULL};
static const char *const FORK_KEYS[] = {
	"forked_from_id", "parent_id", "parent_session_id", "parent_thread_id", NULL,
};
/*
 * Don't let codex start (or join) its shared app-server daemon: the
 * daemon outlives the TUI, so a killed session would leave it running
 * (0.169 starts it by default; `codex resume` takes the flag too).
 */
static const char NO_DAEMON_FLAG[] = "--no-daemon";
/*
 * Its events, per launch: `-c notify=[PROG]` makes codex run `PROG
 * '<json>'` at each turn's end ({"type": "agent-turn-complete",
 * "thread-id", "turn-id", "cwd", "input-messages", ...}, observed with
 * 0.169; tests/e2e README).  PROG is hqt's helper, run by argv (no shell).
 * It replaces a notify the user set in config.toml for this launch (codex
 * has one notify); codex's hooks are not used: enabling them per launch
 * would take --dangerously-bypass-hook-trust, which would also run the
 * user's untrusted hooks.  codex also notifies for its own title-naming
 * thread, with another thread-id: that one is not the session.
 */
static const char CONFIG_FLAG[] = "-c";
static const char NOTIFY_DONE[] = "agent-turn-complete";
static const char TITLE_PROMPT[] = "Generate a concise, single-line task title";
/*
 * Screens, as the real 0.169 TUI draws them (tests/unit fixtures copy
 * them).  While a turn waits for the model: "• Working (3s • esc to
 * interrupt)"; while the reply streams, no status line at all.  Idle: the
 * input box "› <placeholder>" with, just above it, the line codex draws
 * under a finished turn ("Worked for 6s • 19:04"), or nothing of a turn
 * yet (a fresh session).
 */
static const char *const WORKING_MARKERS[] = {"esc to interrupt", "Working (", NULL};
/* Its approval prompts: needs the user. */
static const char *const NEEDS_MARKERS[] = {
	"Would you like to run the following command?",
	"Would you like to make the following edits?",
	"› 1. Yes, proceed",
	/* before any notify: the model-migration dialog (tests/e2e README) */
	"› 1. Try new model", NULL,
};
/* The turn is done: told by the line above the input box (IDLE_MARKERS). */
static const char *const WAITING_MARKERS[] = {NULL};

/* A decompressed first line longer than this is a bomb, not a record. */
#define MAX_ZST_LINE ((size_t)64 << 20)

/* The line above the input box once a turn is over (ended or interrupted). */
static const char *const IDLE_MARKERS[] = {"Worked for *•", "■ Conversation interrupted", NULL};
/* The input box, and a turn's lines ("› prompt", "• reply"), at column 0. */
static const char PROMPT_MARK[] = "› ";
static const char TURN_MARK[] = "• ";

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "idle_markers",
					   "needs_markers", NULL};

static char *
codex_home(const struct hqt_ctx *ctx)
{
	const char *env = getenv(HOME_ENV);
	char *home = env && env[0] ? xasprintf("%s", env) : home_path(ctx, DEFAULT_HOME);
	size_t n = strlen(home);

	/* "/x/codex/" names what "/x/codex" does, and paths are compared to it */
	while (n > 1 && home[n - 1] == '/')
		home[--n] = '\0';
	return home;
}

static void
skip_permission_flags(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	(void)ctx;
	list_words(out, SKIP_FLAGS);
}

static void
sandbox_binds(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	char *home = codex_home(ctx);

	bind_path(ctx, out, home, HQT_BIND_STATE);
	for (const char *const *p = CONFIG; *p; p++) {
		char *path = xasprintf("%s/%s", home, *p);

		bind_path(ctx, out, path, HQT_BIND_RO);
		free(path);
	}
	char *config = xasprintf("%s/%s", home, CONFIG_FILE), *text = read_text(config, MAX_CONFIG);
	if (text)
		protect_named_files(ctx, out, home, text);
	free(text);
	free(config);
	free(home);
	bind_project(out, PROJECT_PROTECTED);
}

/* notify=["PROG"], PROG as a TOML basic string. */
static char *
notify_setting(const char *prog)
{
	size_t n = strlen(prog), o = 0;
	char *buf = xmalloc(n * 6 + 16);

	memcpy(buf, "notify=[\"", 9);
	o = 9;
	for (const unsigned char *p = (const unsigned char *)prog; *p; p++) {
		if (*p == '"' || *p == '\\') {
			buf[o++] = '\\';
			buf[o++] = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			o += (size_t)snprintf(buf + o, 7, "\\u%04x", *p);
		} else {
			buf[o++] = (char)*p;
		}
	}
	memcpy(buf + o, "\"]", 3);
	return buf;
}

static int
build(const struct hqt_request *req, const char *resume_id,
      struct hqt_cmd *out, struct hqt_error *err)
{
	const char *home = getenv(HOME_ENV);

	if (check_request(req, err) < 0)
		return HQT_ERROR;
	host->argv_push(out, PROGRAM);
	if (resume_id) {
		host->argv_push(out, RESUME_COMMAND);
		host->argv_push(out, resume_id);
	}
	host->argv_push(out, NO_DAEMON_FLAG);
	if (req->struct_size >= offsetof(struct hqt_request, event_command) +
				       sizeof req->event_command &&
	    req->event_file != NULL && req->event_command != NULL) {
		char *notify = notify_setting(req->event_command);

		host->argv_push(out, CONFIG_FLAG);
		host->argv_push(out, notify);
		free(notify);
	}
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	/* A sandbox starts from a cleared environment. */
	if (home && home[0])
		host->env_set(out, HOME_ENV, home);
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	(void)ctx;
	return build(req, NULL, out, err);
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	(void)ctx;
	if (!req->harness_session_id)
		return HQT_FRESH;
	if (!id_ok(req->harness_session_id)) {
		host->set_error(err, "bad codex session id '%s'", req->harness_session_id);
		return HQT_ERROR;
	}
	return build(req, req->harness_session_id, out, err);
}

/* The first line of a plain file, of any length; NULL if none. */
static char *
first_line_plain(const char *path)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getline(&line, &cap, f) < 0) {
		free(line);
		line = NULL;
	}
	fclose(f);
	return line;
}

/* The first line of a zstd file, decompressing only as far as it goes. */
static char *
first_line_zst(const struct hqt_ctx *ctx, const char *path)
{
	FILE *f = fopen(path, "re");
	ZSTD_DCtx *dctx = ZSTD_createDCtx();
	size_t in_cap = ZSTD_DStreamInSize(), step = ZSTD_DStreamOutSize();
	char *in = xmalloc(in_cap), *line = NULL;
	size_t len = 0, cap = 0;
	const char *why = !f ? "cannot open" : !dctx ? "no zstd context" : NULL;
	bool done = false;

	while (!why && !done) {
		ZSTD_inBuffer ib = {in, fread(in, 1, in_cap, f), 0};
		ZSTD_outBuffer ob;

		if (ib.size == 0) {
			why = ferror(f) ? "read error" : NULL;
			break; /* a file of one line without a newline */
		}
		do {
			if (cap - len < step + 1) {
				if (len > MAX_ZST_LINE) {
					why = "first line longer than 64 MiB";
					break;
				}
				cap = cap * 2 + step + 1;
				line = realloc(line, cap);
				if (!line)
					abort();
			}
			ob = (ZSTD_outBuffer){line + len, cap - len - 1, 0};
			size_t r = ZSTD_decompressStream(dctx, &ob, &ib);
			if (ZSTD_isError(r)) {
				why = ZSTD_getErrorName(r);
				break;
			}
			char *nl = memchr(line + len, '\n', ob.pos);
			len = nl ? (size_t)(nl - line) : len + ob.pos;
			done = nl != NULL;
		} while (!done && (ib.pos < ib.size || ob.pos == ob.size));
	}
	if (why) {
		host->log(ctx, "skipping %s: %s", path, why);
		free(line);
		line = NULL;
	} else if (line) {
		line[len] = '\0';
	}
	free(in);
	ZSTD_freeDCtx(dctx);
	if (f)
		fclose(f);
	return line;
}

/* "2026-10-12T17:00:00.123Z" as unix time, or fallback. */
static int64_t
iso_time(const char *s, int64_t fallback)
{
	struct tm tm = {0};
	const char *rest = s ? strptime(s, "%Y-%m-%dT%H:%M:%S", &tm) : NULL;

	if (!rest)
		return fallback;
	if (rest[0] == '.')
		rest += 1 + strspn(rest + 1, "0123456789");
	return strcmp(rest, "Z") ? fallback : (int64_t)timegm(&tm);
}

/* A session started by a user at the prompt, not a sub-agent or a fork. */
static bool
from_user(json_t *payload)
{
	json_t *src = json_object_get(payload, "source");
	const char *source = json_string_value(src);

	if (src && !source)
		return false; /* {"subagent": ...} */
	for (const char *const *n = NOT_OURS_SOURCES; source && *n; n++)
		if (!strcmp(source, *n))
			return false;
	for (const char *const *k = FORK_KEYS; *k; k++) {
		json_t *v = json_object_get(payload, *k);

		if (v && !json_is_null(v))
			return false;
	}
	return true;
}

struct found {
	char *id;
	int64_t born; /* when the session started */
};

static void
consider(const struct hqt_ctx *ctx, const struct hqt_request *req,
	 const char *path, bool zst, struct found *f)
{
	int64_t mtime, born;
	char *line;
	json_t *rec, *payload;
	const char *type, *id, *cwd;

	if (file_times(path, &mtime, &born) < 0 || mtime < req->spawned_at - CAPTURE_SLACK)
		return;
	line = zst ? first_line_zst(ctx, path) : first_line_plain(path);
	if (!line)
		return;
	rec = json_loads(line, 0, NULL);
	free(line);
	payload = json_object_get(rec, "payload");
	type = json_string_value(json_object_get(rec, "type"));
	id = json_string_value(json_object_get(payload, "id"));
	cwd = json_string_value(json_object_get(payload, "cwd"));
	if (type && !strcmp(type, META_TYPE) && from_user(payload) && id_ok(id) && cwd &&
	    same_dir(cwd, req->project_path)) {
		born = iso_time(json_string_value(json_object_get(payload, "timestamp")), born);
		if (born >= req->spawned_at - CAPTURE_SLACK && (!f->id || born < f->born)) {
			free(f->id);
			f->id = xasprintf("%s", id);
			f->born = born;
		}
	}
	json_decref(rec);
}

/* A name of exactly n digits as a number, else -1. */
static long
digits(const char *s, size_t n)
{
	if (strlen(s) != n || strspn(s, "0123456789") != n)
		return -1;
	return strtol(s, NULL, 10);
}

/* The rollout kind of a file name: 1 plain, 2 zstd, 0 not a rollout. */
static int
rollout_kind(const char *name)
{
	size_t n = strlen(name);

	if (strncmp(name, ROLLOUT_PREFIX, strlen(ROLLOUT_PREFIX)))
		return 0;
	for (int i = 0; ROLLOUT_SUFFIXES[i]; i++) {
		size_t k = strlen(ROLLOUT_SUFFIXES[i]);

		if (n > k && !strcmp(name + n - k, ROLLOUT_SUFFIXES[i]))
			return i + 1;
	}
	return 0;
}

/*
 * Walk sessions/YYYY/MM/DD (levels 0-2; date holds the digits so far),
 * skipping days before min_day (YYYYMMDD), and consider the rollout files of
 * every day left (level 3).
 */
static void
walk(const struct hqt_ctx *ctx, const struct hqt_request *req,
     const char *dir, int level, long date, long min_day, struct found *f)
{
	static const size_t width[] = {4, 2, 2};
	static const long scale[] = {10000, 100, 1};
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		char *path = xasprintf("%s/%s", dir, e->d_name);

		if (level == 3) {
			int kind = rollout_kind(e->d_name);

			if (kind)
				consider(ctx, req, path, kind == 2, f);
		} else {
			long v = digits(e->d_name, width[level]);
			long key = date * 100 + v;

			if (v >= 0 && key * scale[level] + scale[level] - 1 >= min_day)
				walk(ctx, req, path, level + 1, key, min_day, f);
		}
		free(path);
	}
	if (d)
		closedir(d);
}

/*
 * The oldest session of ours started in the project since the spawn.  Day
 * directories are named in local time; starting a day before the spawn's
 * UTC date covers every time zone.
 */
static int
capture_session_id(const struct hqt_ctx *ctx, const struct hqt_request *req,
		   char *buf, size_t len, struct hqt_error *err)
{
	char *host_home = codex_home(ctx), *home = state_path(ctx, req, host_home);
	char *sessions = xasprintf("%s/%s", home, SESSIONS_DIR);
	time_t t = (time_t)(req->spawned_at - 24 * 60 * 60);
	struct found f = {NULL, 0};
	struct tm tm;
	int ret = HQT_NOT_YET;

	if (gmtime_r(&t, &tm)) {
		long min_day = (tm.tm_year + 1900L) * 10000 + (tm.tm_mon + 1) * 100 + tm.tm_mday;

		walk(ctx, req, sessions, 0, 0, min_day, &f);
	}
	if (f.id)
		ret = id_copy(f.id, buf, len, err);
	free(f.id);
	free(sessions);
	free(home);
	free(host_home);
	return ret;
}

/* The line before *end (exclusive) in screen: [*b, *e); false at the top. */
static bool
line_before(const char *screen, const char *at, const char **b, const char **e)
{
	if (at <= screen)
		return false;
	*e = at[-1] == '\n' ? at - 1 : at;
	*b = *e;
	while (*b > screen && (*b)[-1] != '\n')
		(*b)--;
	return true;
}

static bool
blank(const char *b, const char *e)
{
	for (; b < e; b++)
		if (*b != ' ' && *b != '\t')
			return false;
	return true;
}

static bool
starts(const char *b, const char *e, const char *prefix)
{
	size_t k = strlen(prefix);

	return (size_t)(e - b) >= k && !memcmp(b, prefix, k);
}

/*
 * Idle, when the markers cannot tell: find the input box (the lowest line
 * starting "› "); the first non-blank line above it is the end-of-turn
 * line, or there is no turn above it at all.  While a reply streams, that
 * line is the reply itself: unknown, and pane activity decides.
 */
static enum hqt_status
idle_status(const struct hqt_ctx *ctx, const char *screen, size_t len)
{
	const char *at = screen + len, *b, *e;
	char **own = markers_words(ctx, "idle_markers");
	const char *const *idle = own ? (const char *const *)own : IDLE_MARKERS;
	enum hqt_status st = HQT_STATUS_UNKNOWN;

	while (line_before(screen, at, &b, &e) && !starts(b, e, PROMPT_MARK))
		at = b;
	if (at > screen) {
		at = b;
		while (line_before(screen, at, &b, &e) && blank(b, e))
			at = b;
		if (at <= screen || markers_match(b, e, idle)) {
			st = HQT_STATUS_WAITING;
		} else {
			/* A fresh session: no prompt or reply above the box. */
			bool turn = false;

			for (; !turn && line_before(screen, at, &b, &e); at = b)
				turn = starts(b, e, PROMPT_MARK) || starts(b, e, TURN_MARK);
			st = turn ? HQT_STATUS_UNKNOWN : HQT_STATUS_WAITING;
		}
	}
	words_free(own);
	return st;
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen,
	     size_t len)
{
	enum hqt_status st = markers_status(ctx, screen, len, WORKING_MARKERS, WAITING_MARKERS,
					    NEEDS_MARKERS);

	return st != HQT_STATUS_UNKNOWN ? st : idle_status(ctx, screen, len);
}

/* One line of hqt-event's (a notify payload, shrunk): status and id. */
static enum hqt_status
parse_event(const struct hqt_ctx *ctx, const char *line, size_t len, char *id, size_t id_len)
{
	/* strict: one object, no duplicate keys (a second "hook_event_name"
	 * must not win over the first) */
	json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type, *thread, *first;
	enum hqt_status st = HQT_STATUS_UNKNOWN;

	(void)ctx;
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return st;
	}
	type = json_string_value(json_object_get(v, "type"));
	thread = json_string_value(json_object_get(v, "thread-id"));
	first = json_string_value(json_array_get(json_object_get(v, "input-messages"), 0));
	if (type != NULL && strcmp(type, NOTIFY_DONE) == 0 &&
	    (first == NULL || strncmp(first, TITLE_PROMPT, sizeof TITLE_PROMPT - 1) != 0)) {
		st = HQT_STATUS_WAITING;
		if (thread != NULL && id_ok(thread) && strlen(thread) < id_len)
			memcpy(id, thread, strlen(thread) + 1);
	}
	json_decref(v);
	return st;
}

/*
 * With net = allow: the ChatGPT-login backend (backend-api/codex, HTTP and
 * WebSocket), the OAuth refresh (auth.openai.com/oauth/token) and the API
 * of an API-key login.  The update check (api.github.com) and the
 * announcement tip (raw.githubusercontent.com) are left out.  Seen with
 * 0.169.0 (shared/research/network.md).
 */
static const char *const NET_ALLOW[] = { "chatgpt.com", "auth.openai.com", "api.openai.com",
					 NULL };

static void
net_allow(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	(void)ctx;
	list_words(out, NET_ALLOW);
}

static const struct hqt_plugin plugin = {
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
	.struct_size = sizeof(struct hqt_plugin),
	.name = "codex",
	.display_name = "Codex CLI",
	.flags = HQT_PLUGIN_CAPTURES_SESSION_ID,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.capture_session_id = capture_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "0.169.0",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
