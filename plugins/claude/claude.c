/* claude.c: the Claude Code harness plugin. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/common.h"

/*
 * Claude Code facts, all in one place (SPEC §4; the CLI reference at
 * code.claude.com/docs/en/cli-reference for the flags; the root guard that
 * IS_SANDBOX=1 lifts is quoted from cli.js in anthropics/claude-code#58150).
 * hqt picks the session id, so a spawn can be resumed by the same id.
 */
static const char PROGRAM[] = "claude";
static const char SESSION_ID_FLAG[] = "--session-id";
static const char RESUME_FLAG[] = "--resume";
static const char MODEL_FLAG[] = "--model";
static const char *const SKIP_FLAGS[] = {"--dangerously-skip-permissions", NULL};
/* Settings for one launch (inline JSON); with this key the Bypass
 * Permissions warning is not shown (observed with 2.1.328: what accepting
 * it writes to ~/.claude/settings.json). */
static const char SETTINGS_FLAG[] = "--settings";
static const char BYPASS_ACCEPTED_KEY[] = "skipDangerousModePermissionPrompt";
/*
 * Its hooks, given per launch in the same --settings JSON (merged by
 * claude with the user's own settings and hooks, which still run): each
 * runs hqt's helper, named by the environment the host sets, so the
 * command claude hands to its shell is this constant text (tests/e2e
 * README has the payloads, observed with 2.1.328).  All carry session_id.
 */
static const char HOOK_COMMAND[] = "\"$" HQT_EVENT_COMMAND_ENV "\"";
static const char *const HOOK_EVENTS[] = {
	"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest",
	"Notification", "Stop", "SessionEnd", NULL,
};
#define HOOK_TIMEOUT_S 10
/* Without it, root is refused the skip flag even in a sandbox. */
static const char ROOT_SANDBOX_ENV[] = "IS_SANDBOX";
/* Its state: login, transcripts (projects/<dir>/<id>.jsonl), history,
 * shell snapshots, todos.  Sandboxed, the session's own (HQT_BIND_STATE). */
static const char STATE_DIR[] = "~/.claude";
static const char TRANSCRIPTS_DIR[] = "~/.claude/projects";
/* Main state, rewritten by rename beside ~/.claude: seeded, never bound. */
static const char STATE_FILE[] = "~/.claude.json";
/*
 * What the user set up, shown read-only on top of a sandboxed session's
 * own ~/.claude, so the agent behaves as configured: settings, the user's
 * memory (CLAUDE.md) and rules, installed plugins, commands, agents,
 * skills, output styles, hooks scripts, and the login (read-only: a
 * session must not swap the account the host's claude talks to).  A
 * missing one is skipped.
 */
static const char *const CONFIG[] = {
	"~/.claude/settings.json", "~/.claude/settings.local.json", "~/.claude/CLAUDE.md",
	"~/.claude/rules/", "~/.claude/hooks/", "~/.claude/plugins/", "~/.claude/commands/",
	"~/.claude/agents/", "~/.claude/skills/", "~/.claude/output-styles/",
	"~/.claude/keybindings.json", "~/.claude/.credentials.json", NULL,
};
static const char *const SETTINGS[] = {
	"~/.claude/settings.json", "~/.claude/settings.local.json", NULL,
};
/*
 * Keys of settings.json whose string is a command claude runs through the
 * shell: a hook's "command" and the status line's (statusLine.command),
 * the credential helpers.  The scripts they name inside ~/.claude (where
 * /statusline puts statusline-command.sh) are made read-only too.
 */
static const char *const COMMAND_KEYS[] = {
	"command", "apiKeyHelper", "awsAuthRefresh", "awsCredentialExport",
	"otelHeadersHelper", NULL,
};
/*
 * In the project, what claude run there later obeys: .claude/ holds
 * settings.json and settings.local.json (hooks, statusLine, MCP approval),
 * agents, commands and skills (whose scripts it runs); .mcp.json declares
 * MCP servers it starts; CLAUDE.local.md is private memory that git
 * usually ignores.  Read-only in a writable sandbox.
 */
static const char *const PROJECT_PROTECTED[] = {".claude/", ".mcp.json", "CLAUDE.local.md", NULL};
static const char *const WORKING_MARKERS[] = {
	/* the spinner line "<glyph> <Gerund>… (<elapsed> · ..." */
	"· *… (", "✢ *… (", "✳ *… (", "✶ *… (", "✻ *… (", "✽ *… (",
	"esc to interrupt", NULL,
};
/*
 * Its permission prompt, and the dialogs it shows before any event (no
 * hook fires before them, and pane activity alone read them as working):
 * the auto-mode question of 2.1.328 ("Make auto mode your default
 * permission mode?"), the Bypass Permissions warning ("Yes, I accept"),
 * folder trust, a custom API key from the environment (tests/e2e README).
 * All need the user.
 */
static const char *const NEEDS_MARKERS[] = {
	"Do you want to proceed?", "❯ 1. Yes", "Make auto mode your default permission mode?",
	"Yes, I accept", "Do you trust the files in this folder?",
	"Detected a custom API key in your environment", NULL,
};
/* The turn is done: the empty input box. */
static const char *const WAITING_MARKERS[] = {"=❯", NULL};

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "needs_markers",
					  NULL};

static void
skip_permission_flags(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	(void)ctx;
	list_words(out, SKIP_FLAGS);
}

static void
sandbox_binds(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	char *dir = home_path(ctx, STATE_DIR);

	bind_path(ctx, out, STATE_DIR, HQT_BIND_STATE);
	bind_path(ctx, out, STATE_FILE, HQT_BIND_SEED | HQT_BIND_RW);
	for (const char *const *p = CONFIG; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_RO);
	for (const char *const *p = SETTINGS; *p; p++) {
		char *path = home_path(ctx, *p);
		protect_json_commands(ctx, out, dir, path, COMMAND_KEYS);
		free(path);
	}
	bind_project(out, PROJECT_PROTECTED);
	free(dir);
}

static int
build(const struct hqt_request *req, const char *id_flag,
      struct hqt_cmd *out, struct hqt_error *err)
{
	if (check_request(req, err) < 0)
		return HQT_ERROR;
	if (!is_uuid(req->harness_session_id)) {
		host->set_error(err, "claude needs a uuid as its session id, not '%s'",
				req->harness_session_id ? req->harness_session_id : "");
		return HQT_ERROR;
	}
	host->argv_push(out, PROGRAM);
	host->argv_push(out, id_flag);
	host->argv_push(out, req->harness_session_id);
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	{
		json_t *settings = json_object();
		bool events = req->struct_size >= offsetof(struct hqt_request, event_command) +
							   sizeof req->event_command &&
			      req->event_file != NULL && req->event_command != NULL;

		/* The acceptance of the Bypass Permissions warning, per launch:
		 * hqt asked the user once (hqt consent), and a sandboxed claude
		 * cannot save it in the settings it only reads. */
		if (req->sandboxed)
			json_object_set_new(settings, BYPASS_ACCEPTED_KEY, json_true());
		if (events) {
			json_t *hooks = json_object();

			for (const char *const *e = HOOK_EVENTS; *e; e++)
				json_object_set_new(hooks, *e, json_pack(
					"[{s:s, s:[{s:s, s:s, s:i}]}]", "matcher", "", "hooks",
					"type", "command", "command", HOOK_COMMAND, "timeout",
					HOOK_TIMEOUT_S));
			json_object_set_new(settings, "hooks", hooks);
		}
		if (json_object_size(settings) > 0) {
			char *text = json_dumps(settings, JSON_COMPACT | JSON_PRESERVE_ORDER);

			if (text == NULL) {
				json_decref(settings);
				host->set_error(err, "out of memory");
				return HQT_ERROR;
			}
			host->argv_push(out, SETTINGS_FLAG);
			host->argv_push(out, text);
			free(text);
		}
		json_decref(settings);
	}
	if (req->sandboxed && req->uid == 0)
		host->env_set(out, ROOT_SANDBOX_ENV, "1");
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	(void)ctx;
	return build(req, SESSION_ID_FLAG, out, err);
}

/* Whether claude wrote a transcript for id in any project directory (of
 * the session's own state when sandboxed). */
static bool
has_transcript(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *id)
{
	char *dir = state_path(ctx, req, TRANSCRIPTS_DIR);
	DIR *d = opendir(dir);
	struct dirent *e;
	bool found = false;

	while (d && !found && (e = readdir(d))) {
		char *p;

		if (e->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s/%s.jsonl", dir, e->d_name, id);
		found = access(p, F_OK) == 0;
		free(p);
	}
	if (d)
		closedir(d);
	free(dir);
	return found;
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	/* No transcript until the first turn: claude would refuse --resume,
	 * so the host spawns again with the same --session-id. */
	if (is_uuid(req->harness_session_id) &&
	    !has_transcript(ctx, req, req->harness_session_id))
		return HQT_FRESH;
	return build(req, RESUME_FLAG, out, err);
}

static int
generate_session_id(const struct hqt_ctx *ctx, char *buf, size_t len,
		    struct hqt_error *err)
{
	(void)ctx;
	return uuid_v4(buf, len, err);
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen,
	     size_t len)
{
	return markers_status(ctx, screen, len, WORKING_MARKERS, WAITING_MARKERS, NEEDS_MARKERS);
}

/* One line of hqt-event's (a hook's payload, shrunk): status and id. */
static enum hqt_status
parse_event(const struct hqt_ctx *ctx, const char *line, size_t len, char *id, size_t id_len)
{
	/* strict: one object, no duplicate keys (a second "hook_event_name"
	 * must not win over the first) */
	json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *name, *sid, *kind, *source;
	enum hqt_status st = HQT_STATUS_UNKNOWN;

	(void)ctx;
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return st;
	}
	name = json_string_value(json_object_get(v, "hook_event_name"));
	sid = json_string_value(json_object_get(v, "session_id"));
	kind = json_string_value(json_object_get(v, "notification_type"));
	source = json_string_value(json_object_get(v, "source"));
	if (name == NULL) {
		json_decref(v);
		return st;
	}
	if (strcmp(name, "UserPromptSubmit") == 0 || strcmp(name, "PreToolUse") == 0 ||
	    strcmp(name, "PostToolUse") == 0)
		st = HQT_STATUS_WORKING;
	else if (strcmp(name, "PermissionRequest") == 0)
		st = HQT_STATUS_NEEDS_INPUT;
	else if (strcmp(name, "Stop") == 0)
		st = HQT_STATUS_WAITING;
	/* At the prompt, but not after a compaction, which can come mid-turn. */
	else if (strcmp(name, "SessionStart") == 0)
		st = source != NULL && strcmp(source, "compact") == 0 ? HQT_STATUS_UNKNOWN
								       : HQT_STATUS_WAITING;
	else if (strcmp(name, "Notification") == 0 && kind != NULL)
		st = strcmp(kind, "permission_prompt") == 0 || strcmp(kind, "elicitation_dialog") == 0
			? HQT_STATUS_NEEDS_INPUT
			: strcmp(kind, "idle_prompt") == 0 ? HQT_STATUS_WAITING : HQT_STATUS_UNKNOWN;
	/* SessionEnd: the pane's end tells. */
	if (sid != NULL && is_uuid(sid) && strlen(sid) < id_len)
		memcpy(id, sid, strlen(sid) + 1);
	json_decref(v);
	return st;
}

/*
 * With net = allow: the API (also /api/claude_code/settings, policy limits
 * and the OAuth profile), the OAuth token refresh (platform.claude.com is
 * the TOKEN_URL of 2.1.328) and claude.ai's account login.  Updates,
 * telemetry and error reports are left out: hqt sets
 * CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC in allow mode (plan.c).
 * Seen with 2.1.328 (shared/research/network.md).
 */
static const char *const NET_ALLOW[] = { "api.anthropic.com", "platform.claude.com", "claude.ai",
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
	.name = "claude",
	.display_name = "Claude Code",
	.flags = 0,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.generate_session_id = generate_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "2.1.328",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
