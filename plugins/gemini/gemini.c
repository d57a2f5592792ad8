/* gemini.c: the Gemini CLI harness plugin. */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

/*
 * Gemini CLI facts, all in one place (SPEC §4; shared/research/harnesses.md
 * §1, checked again with 0.61.0 in tests/e2e).  hqt picks the session id
 * (--session-id takes [A-Za-z0-9_-], and gemini exits when the id exists),
 * and gemini writes the transcript at launch, so a resume names the id.
 */
static const char PROGRAM[] = "gemini";
static const char SESSION_ID_FLAG[] = "--session-id";
static const char RESUME_FLAG[] = "--resume";
static const char MODEL_FLAG[] = "-m";
/* --yolo approves every tool; --skip-trust answers the folder-trust dialog
 * for this launch (nothing is written to trustedFolders.json). */
static const char *const SKIP_FLAGS[] = {"--yolo", "--skip-trust", NULL};
/* GEMINI_CLI_HOME relocates ~/.gemini to $GEMINI_CLI_HOME/.gemini. */
static const char HOME_ENV[] = "GEMINI_CLI_HOME";
static const char STATE_NAME[] = ".gemini";
/*
 * Its events, per launch, without touching the user's settings: gemini
 * reads a system-defaults settings file named by this variable (the lowest
 * layer; hook arrays are concatenated across layers, so the user's own hooks
 * still run), but only when the file and every directory above it belong to
 * root and no group or other may write them (else it warns on screen and
 * skips it).  So the file is constant text shipped beside the plugin
 * (installed root-owned), whose hooks run "$HQT_EVENT_COMMAND" (gemini
 * expands it when it loads settings).  Where it is not root-owned (a build
 * in a user's home), the screen alone tells the status; a private
 * GEMINI_CLI_HOME would have hidden the user's own login, settings and
 * history, so it is not used (docs/decisions.md).  No BeforeTool hook: a
 * hook before a tool may block it, and a helper that cannot run must never
 * stop the agent (copilot denies the tool when its preToolUse hook errors).
 */
static const char DEFAULTS_ENV[] = "GEMINI_CLI_SYSTEM_DEFAULTS_PATH";
/*
 * gemini runs headless whenever CI or GITHUB_ACTIONS is "true", whatever its
 * terminal: in a window it then prints "not running in a trusted directory"
 * or "No input provided via stdin" and exits.  A session is a person's
 * terminal, so both are "false" for gemini (and what it runs): a tmux server
 * started from a CI job or a shell that exports CI must not break it.
 */
static const char *const NOT_CI_ENV[] = {"CI", "GITHUB_ACTIONS", NULL};
static const char SETTINGS_FILE[] = "gemini-settings.json";
/* ~/.gemini/tmp/<project>/chats/session-<UTC minute>-<first 8 of id>.jsonl,
 * written at launch; line 1 {"sessionId": ...}.  A resume adds a second file
 * with the same id, so any file whose first line names the id will do. */
static const char CHATS_GLOB[] = "tmp/*/chats/session-*-";
#define ID8 8
/*
 * What the user set up, shown read-only on top of a sandboxed session's own
 * ~/.gemini: settings (hooks, MCP servers), memory (GEMINI.md), the .env it
 * loads, commands, skills, agents, extensions, policies, and the login
 * (OAuth credentials, the accounts file, MCP tokens, the file-stored keys).
 */
static const char *const CONFIG[] = {
	"settings.json", "GEMINI.md", ".env", "commands/", "skills/", "agents/",
	"extensions/", "policies/", "trustedFolders.json", "oauth_creds.json",
	"google_accounts.json", "mcp-oauth-tokens.json", "gemini-credentials.json", NULL,
};
static const char USER_SETTINGS[] = "settings.json";
/* Keys of settings.json whose strings are commands it runs (hooks, MCP). */
static const char *const COMMAND_KEYS[] = {"command", "args", NULL};
/*
 * In the project, what gemini run there later obeys: .gemini/ (settings
 * with hooks and MCP servers, commands, skills, agents, policies, its .env,
 * system.md), GEMINI.md and .geminiignore.  Not the project's own .env,
 * which gemini also loads: the host puts an empty directory where a
 * protected file is missing, and a directory named .env breaks every other
 * tool that reads one (docs/decisions.md).
 */
static const char *const PROJECT_PROTECTED[] = {".gemini/", "GEMINI.md", ".geminiignore", NULL};
/* Working: "⠸ Thinking... (esc to cancel, 3s)". */
static const char *const WORKING_MARKERS[] = {"(esc to cancel,", NULL};
/*
 * Needs you: the tool approval ("Allow execution of [Shell]?", "Apply this
 * change?" with "● 1. Allow once"), and the dialogs no event comes before:
 * folder trust, the auth choice.
 */
static const char *const NEEDS_MARKERS[] = {
	"Allow execution of", "Apply this change?", "● 1. Allow once",
	"Do you trust the files in this folder?",
	"How would you like to authenticate", NULL,
};
/* Idle: the input box (">" or "*" in yolo before it). */
static const char *const WAITING_MARKERS[] = {"Type your message or @path/to/file", NULL};

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "needs_markers",
					  NULL};

/* The directory gemini keeps its state in, on the host.  Caller frees. */
static char *
gemini_dir(const struct hqt_ctx *ctx)
{
	const char *env = getenv(HOME_ENV);

	if (env && env[0] == '/')
		return xasprintf("%s/%s", env, STATE_NAME);
	return xasprintf("%s/%s", ctx->home, STATE_NAME);
}

static void
skip_permission_flags(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	(void)ctx;
	list_words(out, SKIP_FLAGS);
}

/* The shipped settings file, when gemini will read it; else NULL. */
static char *
events_settings(void)
{
	char *f = plugin_file(SETTINGS_FILE);

	if (f && !root_owned_path(f)) {
		free(f);
		return NULL;
	}
	return f;
}

static void
sandbox_binds(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	char *dir = gemini_dir(ctx), *settings, *f;

	host->bind_add(out, dir, HQT_BIND_STATE);
	for (const char *const *p = CONFIG; *p; p++) {
		char *path = xasprintf("%s/%s", dir, *p);

		host->bind_add(out, path, HQT_BIND_RO);
		free(path);
	}
	settings = xasprintf("%s/%s", dir, USER_SETTINGS);
	protect_json_commands(ctx, out, dir, settings, COMMAND_KEYS);
	free(settings);
	/* the hooks file, where gemini inside finds it */
	if ((f = events_settings()) != NULL)
		host->bind_add(out, f, HQT_BIND_RO);
	free(f);
	free(dir);
	bind_project(out, PROJECT_PROTECTED);
}

static bool
wants_events(const struct hqt_request *req)
{
	return req->struct_size >= offsetof(struct hqt_request, event_command) +
					   sizeof req->event_command &&
	       req->event_file != NULL && req->event_command != NULL;
}

static int
build(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *id_flag,
      struct hqt_cmd *out, struct hqt_error *err)
{
	const char *home = getenv(HOME_ENV);

	if (check_request(req, err) < 0)
		return HQT_ERROR;
	if (!id_ok(req->harness_session_id) || strchr(req->harness_session_id, '.')) {
		host->set_error(err, "gemini needs a session id of [A-Za-z0-9_-], not '%s'",
				req->harness_session_id ? req->harness_session_id : "");
		return HQT_ERROR;
	}
	host->argv_push(out, PROGRAM);
	host->argv_push(out, id_flag);
	host->argv_push(out, req->harness_session_id);
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	if (wants_events(req)) {
		const char *own = getenv(DEFAULTS_ENV);
		char *f = events_settings();

		/* A defaults file the user chose stays theirs. */
		if (own && own[0])
			host->log(ctx, "%s is set: gemini's events are off, its screen tells",
				  DEFAULTS_ENV);
		else if (f)
			host->env_set(out, DEFAULTS_ENV, f);
		else
			host->log(ctx, "no root-owned %s beside the plugin: gemini's events are "
				  "off, its screen tells", SETTINGS_FILE);
		free(f);
	}
	for (size_t i = 0; NOT_CI_ENV[i] != NULL; i++)
		host->env_set(out, NOT_CI_ENV[i], "false");
	/* A sandbox starts from a cleared environment. */
	if (home && home[0] == '/')
		host->env_set(out, HOME_ENV, home);
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	return build(ctx, req, SESSION_ID_FLAG, out, err);
}

/* Whether the first line of path names id as its sessionId. */
static bool
names_session(const char *path, const char *id)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool yes = false;

	if (!f)
		return false;
	if (getline(&line, &cap, f) > 0) {
		json_t *v = json_loads(line, 0, NULL);
		const char *sid = json_string_value(json_object_get(v, "sessionId"));

		yes = sid && !strcmp(sid, id);
		json_decref(v);
	}
	free(line);
	fclose(f);
	return yes;
}

/* Whether gemini wrote a transcript for id (in the session's own state
 * when sandboxed). */
static bool
has_transcript(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *id)
{
	char *host_dir = gemini_dir(ctx), *dir = state_path(ctx, req, host_dir);
	char *pat = xasprintf("%s/%s%.*s.jsonl", dir, CHATS_GLOB, ID8, id);
	glob_t g;
	bool found = false;

	if (glob(pat, 0, NULL, &g) == 0)
		for (size_t i = 0; !found && i < g.gl_pathc; i++)
			found = names_session(g.gl_pathv[i], id);
	globfree(&g);
	free(pat);
	free(dir);
	free(host_dir);
	return found;
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	/* Written at launch; none means gemini never started with this id:
	 * the host spawns again with the same --session-id. */
	if (id_ok(req->harness_session_id) && !has_transcript(ctx, req, req->harness_session_id))
		return HQT_FRESH;
	return build(ctx, req, RESUME_FLAG, out, err);
}

static int
generate_session_id(const struct hqt_ctx *ctx, char *buf, size_t len,
		    struct hqt_error *err)
{
	(void)ctx;
	return uuid_v4(buf, len, err);
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen, size_t len)
{
	return markers_status(ctx, screen, len, WORKING_MARKERS, WAITING_MARKERS, NEEDS_MARKERS);
}

/*
 * One line of hqt-event's (a hook's payload, shrunk; observed with 0.61.0):
 * {session_id, transcript_path, cwd, hook_event_name, timestamp, ...}.
 * SessionStart (source startup|resume|clear) fires at the prompt, after
 * the trust dialog; BeforeAgent at a prompt's submit, AfterAgent at the
 * turn's end; Notification {notification_type: "ToolPermission"} when the
 * approval box shows.
 */
static enum hqt_status
parse_event(const struct hqt_ctx *ctx, const char *line, size_t len, char *id, size_t id_len)
{
	json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *name, *kind;
	enum hqt_status st = HQT_STATUS_UNKNOWN;

	(void)ctx;
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return st;
	}
	name = json_string_value(json_object_get(v, "hook_event_name"));
	kind = json_string_value(json_object_get(v, "notification_type"));
	if (name == NULL) {
		json_decref(v);
		return st;
	}
	if (!strcmp(name, "BeforeAgent") || !strcmp(name, "BeforeTool") ||
	    !strcmp(name, "AfterTool"))
		st = HQT_STATUS_WORKING;
	else if (!strcmp(name, "AfterAgent") || !strcmp(name, "SessionStart"))
		st = HQT_STATUS_WAITING;
	else if (!strcmp(name, "Notification") && kind && !strcmp(kind, "ToolPermission"))
		st = HQT_STATUS_NEEDS_INPUT;
	event_id(json_string_value(json_object_get(v, "session_id")), id, id_len);
	json_decref(v);
	return st;
}

/*
 * With net = allow: the Gemini API (an API key), Code Assist (a Google
 * login) and Google's OAuth token refresh.  From the CLI's sources; a turn
 * with an API key at the Gemini API's default host was seen through the
 * proxy in e2e-net (the login's two hosts were not exercised).  Usage
 * statistics (play.googleapis.com) and the update check
 * (registry.npmjs.org), refused there without harm to the turn, are left
 * out.
 */
static const char *const NET_ALLOW[] = {"generativelanguage.googleapis.com",
					"cloudcode-pa.googleapis.com", "oauth2.googleapis.com",
					NULL};

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
	.name = "gemini",
	.display_name = "Gemini CLI",
	.flags = 0,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.generate_session_id = generate_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "0.61.0",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
