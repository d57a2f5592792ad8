/* copilot.c: the GitHub Copilot CLI harness plugin. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

/*
 * Copilot CLI facts, all in one place (SPEC §4; shared/research/harnesses.md
 * §3, checked again with 1.0.102 in tests/e2e).  hqt picks the session id:
 * --session-id UUID starts a session with that id, or resumes it when it
 * exists (~/.copilot/session-state/<id>/ is written at launch), so spawn
 * and resume are the same command.  Never --continue: it takes the newest
 * session, which a parallel one may be ("Session in use").
 */
static const char PROGRAM[] = "copilot";
static const char SESSION_ID_FLAG[] = "--session-id";
static const char MODEL_FLAG[] = "--model";
/*
 * Sandboxed: --yolo approves every tool, path and URL, but the folder-trust
 * dialog still shows; COPILOT_ALLOW_ALL=true (exactly "true") answers it
 * too.  The variable goes into the sandbox only.
 */
static const char *const SKIP_FLAGS[] = {"--yolo", NULL};
static const char ALLOW_ALL_ENV[] = "COPILOT_ALLOW_ALL";
/* COPILOT_HOME names the directory that ~/.copilot is by default. */
static const char HOME_ENV[] = "COPILOT_HOME";
static const char DEFAULT_HOME[] = "~/.copilot";
/* Its first run unpacks ~150 MB here (pkg/<platform>/<version>/), and
 * writes a device id beside it: writable, the session's own. */
static const char CACHE_DIR[] = "~/.cache/copilot";
static const char DEVICE_DIR[] = "~/.cache/Microsoft";
/*
 * Its events, per launch, without touching the user's config: --plugin-dir
 * names a directory shipped beside the plugin (plugin.json, hooks.json), no
 * trust prompt asked.  The hooks are named in PascalCase, which gets Claude
 * Code's payloads (hook_event_name, session_id); each runs
 * "$HQT_EVENT_COMMAND" through bash.  No preToolUse hook: copilot denies
 * the tool when one errors ("Denied by preToolUse hook ... (hook
 * errored)"), so a helper that cannot run would stop every tool.
 */
static const char PLUGIN_DIR_FLAG[] = "--plugin-dir";
static const char HOOKS_DIR[] = "copilot-hooks";
static const char HOOKS_MANIFEST[] = "copilot-hooks/plugin.json";
/*
 * What the user set up, shown read-only on top of a sandboxed session's own
 * ~/.copilot: settings, MCP and LSP servers, hooks, agents, skills,
 * installed plugins.  config.json (trust, accounts, a plaintext token when
 * there is no keychain) it rewrites at launch: the session keeps its own.
 */
static const char *const CONFIG[] = {
	"settings.json", "mcp-config.json", "lsp-config.json", "hooks/", "agents/", "skills/",
	"installed-plugins/", "copilot-instructions.md", NULL,
};
static const char *const JSON_CONFIG[] = {"settings.json", "mcp-config.json", NULL};
static const char *const COMMAND_KEYS[] = {"command", "args", "bash", NULL};
/*
 * In the project, what copilot run there later obeys: its instructions,
 * hooks, settings (.github/copilot/settings.local.json), agents and skills,
 * and the MCP servers of .vscode/mcp.json.
 */
static const char *const PROJECT_PROTECTED[] = {
	".github/copilot-instructions.md", ".github/instructions/", ".github/hooks/",
	".github/copilot/", ".github/agents/", ".github/skills/", ".vscode/mcp.json", NULL,
};
/* Working: "○ Working · 15 B esc esc interrupt". */
static const char *const WORKING_MARKERS[] = {"esc interrupt", NULL};
/*
 * Needs you: its approval ("Do you want to run this command?") and the
 * folder-trust box, which share the footer "↑/↓ to navigate · enter to
 * select".
 */
static const char *const NEEDS_MARKERS[] = {
	"Do you want to run this command?", "Do you trust the files in this folder?",
	"to navigate · enter to select", NULL,
};
/* Idle: the empty prompt line "❯" between two rules, its footer below
 * ("· Interactive · Manual Approval · / commands", cut to the width). */
static const char *const WAITING_MARKERS[] = {"=❯", "· / commands", NULL};

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "needs_markers",
					  NULL};

static char *
copilot_dir(const struct hqt_ctx *ctx)
{
	const char *env = getenv(HOME_ENV);

	if (env && env[0] == '/')
		return xasprintf("%s", env);
	return home_path(ctx, DEFAULT_HOME);
}

/* The hooks directory beside the plugin, or NULL.  Caller frees. */
static char *
hooks_dir(void)
{
	char *manifest = plugin_file(HOOKS_MANIFEST), *dir;

	if (manifest == NULL)
		return NULL;
	dir = xasprintf("%.*s%s", (int)(strlen(manifest) - strlen(HOOKS_MANIFEST)), manifest,
			HOOKS_DIR);
	free(manifest);
	return dir;
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
	char *dir = copilot_dir(ctx), *hooks;

	host->bind_add(out, dir, HQT_BIND_STATE);
	for (const char *const *p = CONFIG; *p; p++) {
		char *path = xasprintf("%s/%s", dir, *p);

		host->bind_add(out, path, HQT_BIND_RO);
		free(path);
	}
	for (const char *const *p = JSON_CONFIG; *p; p++) {
		char *path = xasprintf("%s/%s", dir, *p);

		protect_json_commands(ctx, out, dir, path, COMMAND_KEYS);
		free(path);
	}
	bind_path(ctx, out, CACHE_DIR, HQT_BIND_STATE);
	bind_path(ctx, out, DEVICE_DIR, HQT_BIND_STATE);
	if ((hooks = hooks_dir()) != NULL)
		host->bind_add(out, hooks, HQT_BIND_RO);
	free(hooks);
	free(dir);
	bind_project(out, PROJECT_PROTECTED);
}

static int
build(const struct hqt_ctx *ctx, const struct hqt_request *req, struct hqt_cmd *out,
      struct hqt_error *err)
{
	const char *home = getenv(HOME_ENV);

	(void)ctx;
	if (check_request(req, err) < 0)
		return HQT_ERROR;
	if (!is_uuid(req->harness_session_id)) {
		host->set_error(err, "copilot needs a uuid as its session id, not '%s'",
				req->harness_session_id ? req->harness_session_id : "");
		return HQT_ERROR;
	}
	host->argv_push(out, PROGRAM);
	host->argv_push(out, SESSION_ID_FLAG);
	host->argv_push(out, req->harness_session_id);
	if (req->struct_size >= offsetof(struct hqt_request, event_command) +
				       sizeof req->event_command &&
	    req->event_file != NULL && req->event_command != NULL) {
		char *hooks = hooks_dir();

		if (hooks) {
			host->argv_push(out, PLUGIN_DIR_FLAG);
			host->argv_push(out, hooks);
		} else {
			host->log(ctx, "no %s beside the plugin: copilot's events are off",
				  HOOKS_MANIFEST);
		}
		free(hooks);
	}
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	if (req->sandboxed)
		host->env_set(out, ALLOW_ALL_ENV, "true");
	/* A sandbox starts from a cleared environment. */
	if (home && home[0] == '/')
		host->env_set(out, HOME_ENV, home);
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	return build(ctx, req, out, err);
}

/* The same argv: --session-id resumes the session when it exists. */
static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	return build(ctx, req, out, err);
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
 * One line of hqt-event's (a hook's payload, shrunk; observed with
 * 1.0.102): PascalCase hooks give Claude Code's payloads.  SessionStart
 * fires at the first prompt (source "new" or "resume"), then
 * UserPromptSubmit, Pre/PostToolUse, Notification permission_prompt when
 * its approval shows, Stop at the turn's end.  permissionRequest (camelCase,
 * "hookName") fires before its rules, even under --yolo: it says nothing.
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
	    !strcmp(name, "PostToolUse") || !strcmp(name, "SessionStart"))
		st = HQT_STATUS_WORKING;
	else if (!strcmp(name, "Stop"))
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
 * With net = allow: GitHub's API and login, and Copilot's API hosts (which
 * GitHub's /copilot_internal/user names per plan: api.individual.,
 * api.business., ..., telemetry.<plan>.githubcopilot.com).  A signed-in
 * turn was seen through the proxy in e2e-net: api.github.com (the user,
 * managed settings, team customizations, the releases of its update
 * check) and api.individual.githubcopilot.com (models, agent session, MCP,
 * /chat/completions), telemetry.individual.githubcopilot.com by the
 * wildcard; github.com (the device-flow login) was not exercised.  A BYOK
 * provider (COPILOT_PROVIDER_BASE_URL) is the user's to add.
 */
static const char *const NET_ALLOW[] = {"api.github.com", "github.com", "*.githubcopilot.com",
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
	.name = "copilot",
	.display_name = "GitHub Copilot CLI",
	.flags = 0,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.generate_session_id = generate_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "1.0.102",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
