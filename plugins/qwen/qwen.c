/* qwen.c: the Qwen Code harness plugin. */
#include <glob.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

/*
 * Qwen Code facts, all in one place (SPEC §4; shared/research/harnesses.md
 * §2, checked again with 0.24.4 in tests/e2e).  A Gemini CLI fork whose
 * hooks take Claude Code's schema.  hqt picks the session id; qwen writes
 * the transcript at the first prompt (and exits when --session-id names a
 * session it has), so a resume names the id once the transcript is there,
 * else spawns again with it.  Never a positional prompt: that is one-shot.
 */
static const char PROGRAM[] = "qwen";
static const char SESSION_ID_FLAG[] = "--session-id";
static const char RESUME_FLAG[] = "--resume";
static const char MODEL_FLAG[] = "-m";
/* No dialog; folder trust is off by default. */
static const char *const SKIP_FLAGS[] = {"--yolo", NULL};
/* QWEN_HOME names the directory that ~/.qwen is by default. */
static const char HOME_ENV[] = "QWEN_HOME";
static const char DEFAULT_HOME[] = "~/.qwen";
/*
 * Its events, per launch, without touching the user's settings: a settings
 * file named by this variable, the lowest layer (hook arrays are merged
 * with the user's, whose own hooks still run), read from any path (no
 * ownership rule, unlike gemini's).  Constant text shipped beside the
 * plugin: each hook runs "$HQT_EVENT_COMMAND".  Not the system settings
 * path: that is the admin's, which would be replaced for the launch.
 */
static const char DEFAULTS_ENV[] = "QWEN_CODE_SYSTEM_DEFAULTS_PATH";
static const char SETTINGS_FILE[] = "qwen-settings.json";
/* <home>/projects/<cwd, '/' -> '-'>/chats/<id>.jsonl, at the first prompt. */
static const char CHATS_GLOB[] = "projects/*/chats/";
/*
 * What the user set up, shown read-only on top of a sandboxed session's
 * own ~/.qwen: settings (hooks, env, model providers), memory, the .env it
 * loads, the output language, agents, commands, skills, rules, extensions,
 * and the login (OAuth credentials).
 */
static const char *const CONFIG[] = {
	"settings.json", "QWEN.md", ".env", "output-language.md", "agents/", "commands/",
	"skills/", "rules/", "extensions/", "trustedFolders.json", "oauth_creds.json", NULL,
};
static const char USER_SETTINGS[] = "settings.json";
static const char *const COMMAND_KEYS[] = {"command", "args", NULL};
/*
 * In the project, what qwen run there later obeys: .qwen/ (settings with
 * hooks, agents, commands, skills, rules, hooks, .env), QWEN.md and
 * .qwenignore.
 */
static const char *const PROJECT_PROTECTED[] = {".qwen/", "QWEN.md", ".qwenignore", NULL};
/* Working: "⠸ <phrase>... (1s · esc to cancel)". */
static const char *const WORKING_MARKERS[] = {"esc to cancel", NULL};
/*
 * Needs you: its approval ("Allow execution of: 'touch'?", "› 1. Yes,
 * allow once", "Waiting for user confirmation..."), and auto mode's
 * question when its classifier cannot tell.
 */
static const char *const NEEDS_MARKERS[] = {
	"Allow execution of", "Yes, allow once", "Waiting for user confirmation",
	"Auto Mode couldn't classify", "Apply this change?", NULL,
};
static const char *const WAITING_MARKERS[] = {"Type your message or @path/to/file", NULL};

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "needs_markers",
					  NULL};

/* The directory qwen keeps its state in, on the host.  Caller frees. */
static char *
qwen_dir(const struct hqt_ctx *ctx)
{
	const char *env = getenv(HOME_ENV);

	if (env && env[0] == '/')
		return xasprintf("%s", env);
	return home_path(ctx, DEFAULT_HOME);
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
	char *dir = qwen_dir(ctx), *settings, *f;

	host->bind_add(out, dir, HQT_BIND_STATE);
	for (const char *const *p = CONFIG; *p; p++) {
		char *path = xasprintf("%s/%s", dir, *p);

		host->bind_add(out, path, HQT_BIND_RO);
		free(path);
	}
	settings = xasprintf("%s/%s", dir, USER_SETTINGS);
	protect_json_commands(ctx, out, dir, settings, COMMAND_KEYS);
	free(settings);
	/* the hooks file, where qwen inside finds it */
	if ((f = plugin_file(SETTINGS_FILE)) != NULL)
		host->bind_add(out, f, HQT_BIND_RO);
	free(f);
	free(dir);
	bind_project(out, PROJECT_PROTECTED);
}

static int
build(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *id_flag,
      struct hqt_cmd *out, struct hqt_error *err)
{
	const char *home = getenv(HOME_ENV);

	if (check_request(req, err) < 0)
		return HQT_ERROR;
	if (!is_uuid(req->harness_session_id)) {
		host->set_error(err, "qwen needs a uuid as its session id, not '%s'",
				req->harness_session_id ? req->harness_session_id : "");
		return HQT_ERROR;
	}
	host->argv_push(out, PROGRAM);
	host->argv_push(out, id_flag);
	host->argv_push(out, req->harness_session_id);
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	if (req->struct_size >= offsetof(struct hqt_request, event_command) +
				       sizeof req->event_command &&
	    req->event_file != NULL && req->event_command != NULL) {
		const char *own = getenv(DEFAULTS_ENV);
		char *f = plugin_file(SETTINGS_FILE);

		/* A defaults file the user chose stays theirs. */
		if (own && own[0])
			host->log(ctx, "%s is set: qwen's events are off, its screen tells",
				  DEFAULTS_ENV);
		else if (f)
			host->env_set(out, DEFAULTS_ENV, f);
		else
			host->log(ctx, "no %s beside the plugin: qwen's events are off",
				  SETTINGS_FILE);
		free(f);
	}
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

/* Whether qwen wrote a transcript for id (in the session's own state when
 * sandboxed). */
static bool
has_transcript(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *id)
{
	char *host_dir = qwen_dir(ctx), *dir = state_path(ctx, req, host_dir);
	char *pat = xasprintf("%s/%s%s.jsonl", dir, CHATS_GLOB, id);
	glob_t g;
	bool found = glob(pat, 0, NULL, &g) == 0 && g.gl_pathc > 0;

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
	if (is_uuid(req->harness_session_id) && !has_transcript(ctx, req, req->harness_session_id))
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
 * One line of hqt-event's (a hook's payload, shrunk; Claude Code's schema,
 * observed with 0.24.4): SessionStart at launch, UserPromptSubmit,
 * PermissionRequest and Notification permission_prompt at its approval,
 * Pre/PostToolUse, Stop at the turn's end, Notification idle_prompt after.
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
	if (!strcmp(name, "UserPromptSubmit") || !strcmp(name, "PreToolUse") ||
	    !strcmp(name, "PostToolUse"))
		st = HQT_STATUS_WORKING;
	else if (!strcmp(name, "PermissionRequest"))
		st = HQT_STATUS_NEEDS_INPUT;
	else if (!strcmp(name, "Stop") || !strcmp(name, "SessionStart"))
		st = HQT_STATUS_WAITING;
	else if (!strcmp(name, "Notification") && kind != NULL)
		st = !strcmp(kind, "permission_prompt") ? HQT_STATUS_NEEDS_INPUT
		     : !strcmp(kind, "idle_prompt")     ? HQT_STATUS_WAITING
							: HQT_STATUS_UNKNOWN;
	event_id(json_string_value(json_object_get(v, "session_id")), id, id_len);
	json_decref(v);
	return st;
}

/*
 * With net = allow: Alibaba Cloud Model Studio, the provider qwen's own
 * /auth offers (its presets in 0.24.4): the Coding Plan (China,
 * international), the Token Plan (China, international) and a standard
 * API key (Beijing, Singapore, Virginia, Hong Kong), all OpenAI-compatible.
 * A turn at the Coding Plan's international host was seen through the
 * proxy in e2e-net.  Another provider (qwen's `openai` auth goes to
 * api.openai.com without OPENAI_BASE_URL; its OpenRouter, DeepSeek, ...
 * presets) is the user's to add (`--net allow:+,their.host`).  Usage
 * statistics (*.rum.aliyuncs.com) and the update check
 * (registry.npmjs.org), refused in e2e-net without harm to the turn, are
 * left out.
 */
static const char *const NET_ALLOW[] = {"coding.dashscope.aliyuncs.com",
					"coding-intl.dashscope.aliyuncs.com",
					"token-plan.cn-beijing.maas.aliyuncs.com",
					"token-plan.ap-southeast-1.maas.aliyuncs.com",
					"dashscope.aliyuncs.com",
					"dashscope-intl.aliyuncs.com",
					"dashscope-us.aliyuncs.com",
					"cn-hongkong.dashscope.aliyuncs.com",
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
	.name = "qwen",
	.display_name = "Qwen Code",
	.flags = 0,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.generate_session_id = generate_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "0.24.4",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
