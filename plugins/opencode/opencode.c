/* opencode.c: the opencode harness plugin. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

/*
 * opencode facts, all in one place (SPEC §4; shared/research/harnesses.md
 * §4, checked again with 1.18.33 in tests/e2e).  opencode picks its own id
 * (ses_...) when the first prompt creates the session; hqt learns it from
 * opencode's own event (session.created, of this session's process, in the
 * project's directory, after the spawn) and resumes with -s.
 */
static const char PROGRAM[] = "opencode";
static const char RESUME_FLAG[] = "-s";
static const char MODEL_FLAG[] = "-m";
static const char *const SKIP_FLAGS[] = {"--auto", NULL};
/*
 * Its events, per launch: a JS plugin shipped beside this one, named in
 * OPENCODE_CONFIG_CONTENT (a config layer of its own; a user's own content
 * there is kept, with the plugin added to its list).  The file:// form adds
 * no config directory, so no npm install of its own.
 */
static const char CONFIG_CONTENT_ENV[] = "OPENCODE_CONFIG_CONTENT";
static const char BRIDGE_FILE[] = "hqt-opencode.js";
static const char CREATED_EVENT[] = "session.created";
/*
 * Sandboxed, the project's opencode config is not read inside: opencode
 * writes .gitignore into every config directory it reads at start and dies
 * where it cannot ("Unexpected server error"), and npm-installs its plugin
 * package into each writable one; the project's .opencode/ is read-only
 * there (protected), and what it holds is not for an agent that runs with
 * every permission granted anyway.
 */
static const char NO_PROJECT_CONFIG_ENV[] = "OPENCODE_DISABLE_PROJECT_CONFIG";
/* Its state: config (it writes .gitignore there at start), data (the
 * sessions' SQLite, auth.json, snapshots), state, cache. */
static const char *const STATE_DIRS[] = {
	"~/.config/opencode", "~/.local/share/opencode", "~/.local/state/opencode",
	"~/.cache/opencode", NULL,
};
/*
 * What the user set up, shown read-only on top of the session's own config
 * and data: configs, instructions, agents, commands, plugins (and the
 * node_modules they run from), tools, skills, and the login (auth.json,
 * mcp-auth.json).
 */
static const char *const CONFIG[] = {
	"~/.config/opencode/opencode.json", "~/.config/opencode/opencode.jsonc",
	"~/.config/opencode/config.json", "~/.config/opencode/tui.json",
	"~/.config/opencode/AGENTS.md", "~/.config/opencode/agent/",
	"~/.config/opencode/agents/", "~/.config/opencode/command/",
	"~/.config/opencode/commands/", "~/.config/opencode/plugin/",
	"~/.config/opencode/plugins/", "~/.config/opencode/tool/", "~/.config/opencode/tools/",
	"~/.config/opencode/skill/", "~/.config/opencode/skills/",
	"~/.config/opencode/package.json", "~/.config/opencode/package-lock.json",
	"~/.config/opencode/node_modules/", "~/.local/share/opencode/auth.json",
	"~/.local/share/opencode/mcp-auth.json", NULL,
};
static const char *const JSON_CONFIG[] = {
	"~/.config/opencode/opencode.json", "~/.config/opencode/config.json", NULL,
};
static const char *const COMMAND_KEYS[] = {"command", NULL};
/*
 * In the project, what opencode run there later obeys: .opencode/ (agents,
 * commands, plugins, tools it runs).  Not opencode.json(c): the host puts an
 * empty directory where a protected file is missing, and opencode fails on
 * a directory by that name (EISDIR), inside and later outside; git shows
 * a planted opencode.json (docs/decisions.md).
 */
static const char *const PROJECT_PROTECTED[] = {".opencode/", NULL};
/* Working: the footer "⬝⬝⬝⬝■  esc interrupt". */
static const char *const WORKING_MARKERS[] = {"esc interrupt", NULL};
/* Needs you: "△ Permission required", "Allow once   Allow always   Reject". */
static const char *const NEEDS_MARKERS[] = {"Permission required", "Allow once", NULL};
/* Idle: the same footer without "esc interrupt". */
static const char *const WAITING_MARKERS[] = {"ctrl+p commands", NULL};

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
	char *bridge;

	for (const char *const *p = STATE_DIRS; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_STATE);
	for (const char *const *p = CONFIG; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_RO);
	for (const char *const *p = JSON_CONFIG; *p; p++) {
		char *dir = home_path(ctx, STATE_DIRS[0]), *path = home_path(ctx, *p);

		protect_json_commands(ctx, out, dir, path, COMMAND_KEYS);
		free(path);
		free(dir);
	}
	if ((bridge = plugin_file(BRIDGE_FILE)) != NULL)
		host->bind_add(out, bridge, HQT_BIND_RO);
	free(bridge);
	bind_project(out, PROJECT_PROTECTED);
}

/* OPENCODE_CONFIG_CONTENT with the bridge in its plugin list: the user's
 * own content kept.  NULL when it cannot be had (logged).  Caller frees. */
static char *
config_content(const struct hqt_ctx *ctx)
{
	const char *own = getenv(CONFIG_CONTENT_ENV);
	char *bridge = plugin_file(BRIDGE_FILE), *url, *text = NULL;
	json_t *doc, *list;

	if (bridge == NULL) {
		host->log(ctx, "no %s beside the plugin: opencode's events are off", BRIDGE_FILE);
		return NULL;
	}
	doc = own && own[0] ? json_loads(own, JSON_REJECT_DUPLICATES, NULL) : json_object();
	if (!json_is_object(doc)) {
		host->log(ctx, "%s is not a JSON object: opencode's events are off",
			  CONFIG_CONTENT_ENV);
		json_decref(doc);
		free(bridge);
		return NULL;
	}
	list = json_object_get(doc, "plugin");
	if (!json_is_array(list)) {
		list = json_array();
		json_object_set_new(doc, "plugin", list);
	}
	url = xasprintf("file://%s", bridge);
	json_array_append_new(list, json_string(url));
	text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text == NULL)
		abort();
	json_decref(doc);
	free(url);
	free(bridge);
	return text;
}

static int
build(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *resume_id,
      struct hqt_cmd *out, struct hqt_error *err)
{
	if (check_request(req, err) < 0)
		return HQT_ERROR;
	host->argv_push(out, PROGRAM);
	if (resume_id) {
		host->argv_push(out, RESUME_FLAG);
		host->argv_push(out, resume_id);
	}
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	if (req->struct_size >= offsetof(struct hqt_request, event_command) +
				       sizeof req->event_command &&
	    req->event_file != NULL && req->event_command != NULL) {
		char *content = config_content(ctx);

		if (content)
			host->env_set(out, CONFIG_CONTENT_ENV, content);
		free(content);
	}
	if (req->sandboxed)
		host->env_set(out, NO_PROJECT_CONFIG_ENV, "1");
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	return build(ctx, req, NULL, out, err);
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	if (!req->harness_session_id)
		return HQT_FRESH;
	if (!id_ok(req->harness_session_id)) {
		host->set_error(err, "bad opencode session id '%s'", req->harness_session_id);
		return HQT_ERROR;
	}
	return build(ctx, req, req->harness_session_id, out, err);
}

/*
 * The session's id from its own event file (hqt_request.event_file, which
 * only this session's opencode writes): the first session.created of the
 * project's directory since the spawn.  The directory is left out of a
 * line when longer than hqt-event keeps; the bridge sends only its own
 * directory's sessions anyway.
 */
static int
capture_session_id(const struct hqt_ctx *ctx, const struct hqt_request *req, char *buf,
		   size_t len, struct hqt_error *err)
{
	FILE *f;
	char *line = NULL;
	size_t cap = 0;
	int ret = HQT_NOT_YET;

	(void)ctx;
	if (req->struct_size < offsetof(struct hqt_request, event_file) + sizeof req->event_file ||
	    req->event_file == NULL || (f = fopen(req->event_file, "re")) == NULL)
		return HQT_NOT_YET;
	while (ret == HQT_NOT_YET && getline(&line, &cap, f) > 0) {
		json_t *v = json_loads(line, JSON_REJECT_DUPLICATES, NULL);
		const char *type = json_string_value(json_object_get(v, "type"));
		const char *id = json_string_value(json_object_get(v, "session_id"));
		const char *dir = json_string_value(json_object_get(v, "directory"));
		json_t *created = json_object_get(v, "created");

		if (type && !strcmp(type, CREATED_EVENT) && id_ok(id) &&
		    (dir == NULL || same_dir(dir, req->project_path)) && json_is_number(created) &&
		    json_number_value(created) / 1000 >= (double)(req->spawned_at - CAPTURE_SLACK))
			ret = id_copy(id, buf, len, err);
		json_decref(v);
	}
	free(line);
	fclose(f);
	return ret;
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen, size_t len)
{
	return markers_status(ctx, screen, len, WORKING_MARKERS, WAITING_MARKERS, NEEDS_MARKERS);
}

/*
 * One line of hqt-event's, from the bridge (observed with 1.18.33):
 * session.status {status: "busy"|"idle"}, permission.asked when its
 * approval shows, permission.replied, session.idle at the turn's end.
 */
static enum hqt_status
parse_event(const struct hqt_ctx *ctx, const char *line, size_t len, char *id, size_t id_len)
{
	json_t *v = json_loadb(line, len, JSON_REJECT_DUPLICATES, NULL);
	const char *type, *status;
	enum hqt_status st = HQT_STATUS_UNKNOWN;

	(void)ctx;
	(void)id;
	(void)id_len;
	if (v == NULL || !json_is_object(v)) {
		json_decref(v);
		return st;
	}
	type = json_string_value(json_object_get(v, "type"));
	status = json_string_value(json_object_get(v, "status"));
	if (type == NULL) {
		json_decref(v);
		return st;
	}
	if (!strcmp(type, "session.status") && status)
		st = !strcmp(status, "busy") ? HQT_STATUS_WORKING
		     : !strcmp(status, "idle") ? HQT_STATUS_WAITING
					       : HQT_STATUS_UNKNOWN;
	else if (!strcmp(type, "permission.asked"))
		st = HQT_STATUS_NEEDS_INPUT;
	else if (!strcmp(type, "permission.replied"))
		st = HQT_STATUS_WORKING;
	else if (!strcmp(type, "session.idle") || !strcmp(type, "session.error"))
		st = HQT_STATUS_WAITING;
	/* its ids (ses_...) are not the host's UUIDs: capture_session_id */
	json_decref(v);
	return st;
}

/*
 * With net = allow: opencode's own model gateway (OpenCode Zen,
 * https://opencode.ai/zen/v1: a turn and its title request) and its models
 * catalogue (models.opencode.ai since 1.x, no longer models.dev; without it
 * opencode runs on the catalogue it bundles).  Seen through the proxy in
 * e2e-net.  The providers a user configures are theirs to add to the list
 * (`--net allow:+,their.host`).
 */
static const char *const NET_ALLOW[] = {"opencode.ai", "models.opencode.ai", NULL};

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
	.name = "opencode",
	.display_name = "opencode",
	.flags = HQT_PLUGIN_CAPTURES_SESSION_ID,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.capture_session_id = capture_session_id,
	.parse_status = parse_status,
	/* tests/e2e/versions: what the e2e tests ran */
	.verified_versions = "1.18.33",
	.version_flag = "--version",
	.parse_event = parse_event,
	.net_allow = net_allow,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
