/* kiro.c: the Kiro CLI harness plugin. */
#include <dirent.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../common/common.h"

/*
 * Kiro CLI facts, all in one place (SPEC §4; kiro.dev/docs/cli/chat and its
 * session-management page for the flags and the sessions directory).  Kiro
 * picks its own id; hqt finds it in the session file kiro writes at start.
 */
static const char *const COMMAND[] = {"kiro-cli", "chat", NULL};
static const char MODEL_FLAG[] = "--model";
static const char RESUME_ID_FLAG[] = "--resume-id";
static const char RESUME_LATEST_FLAG[] = "--resume"; /* latest in the cwd */
static const char *const SKIP_FLAGS[] = {"--trust-all-tools", NULL};
/* Its state: sessions, history, caches.  Sandboxed, the session's own. */
static const char *const STATE_DIRS[] = {"~/.kiro", NULL};
/* Its data lives in $XDG_DATA_HOME/kiro-cli. */
static const char DATA_ENV[] = "XDG_DATA_HOME";
static const char DEFAULT_DATA_HOME[] = "~/.local/share";
static const char DATA_DIR[] = "kiro-cli";
/*
 * What the user set up, read-only on top of the session's own ~/.kiro:
 * settings (MCP), agents (with hooks and MCP servers), steering, prompts,
 * skills; and kiro's own login token, one file (never the whole
 * ~/.aws/sso/cache, which holds every AWS SSO token of the user).
 */
static const char *const PROTECTED[] = {"~/.kiro/settings/", "~/.kiro/agents/", NULL};
static const char *const CONFIG[] = {
	"~/.kiro/steering/", "~/.kiro/prompts/", "~/.kiro/skills/", "~/.kiro/hooks/",
	"~/.aws/sso/cache/kiro-auth-token.json", NULL,
};
/*
 * The JSON files in those directories name programs kiro runs: an agent's
 * hooks ("command"), an MCP server's "command" and "args".  The scripts
 * they name inside ~/.kiro are made read-only too.
 */
static const char KIRO_DIR[] = "~/.kiro";
static const char *const COMMAND_KEYS[] = {"command", "args", NULL};
static const char JSON_SUFFIX[] = ".json";
/* The workspace's own: .kiro/settings (mcp.json), .kiro/agents (local
 * agents, with hooks and MCP servers), .kiro/hooks (commands the IDE runs). */
static const char *const PROJECT_PROTECTED[] = {
	".kiro/settings/", ".kiro/agents/", ".kiro/hooks/", ".kiro/steering/", NULL,
};
/* <uuid>.json, holding the session's "cwd". */
static const char SESSIONS_DIR[] = "~/.kiro/sessions/cli";
static const char SESSION_SUFFIX[] = ".json";
static const char *const ID_KEYS[] = {"session_id", "id", NULL}; /* else the name */
static const char *const WORKING_MARKERS[] = {"Kiro is working", NULL};
static const char *const NEEDS_MARKERS[] = {"requires approval", NULL};
static const char *const WAITING_MARKERS[] = {"ask a question or describe a task", NULL};

static const char *const CONFIG_KEYS[] = {"working_markers", "waiting_markers", "needs_markers",
					  NULL};

static void
skip_permission_flags(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	(void)ctx;
	list_words(out, SKIP_FLAGS);
}

/* The scripts the *.json of the protected directories run. */
static void
protect_scripts(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	char *kiro = home_path(ctx, KIRO_DIR);

	for (const char *const *p = PROTECTED; *p; p++) {
		char *dir = home_path(ctx, *p);
		struct dirent **names = NULL;
		/* Sorted: the same binds, in the same order, at every start. */
		int n = scandir(dir, &names, NULL, alphasort);

		for (int i = 0; i < n; i++) {
			size_t len = strlen(names[i]->d_name), k = strlen(JSON_SUFFIX);

			if (len > k && !strcmp(names[i]->d_name + len - k, JSON_SUFFIX)) {
				char *file = xasprintf("%s/%s", dir, names[i]->d_name);
				protect_json_commands(ctx, out, kiro, file, COMMAND_KEYS);
				free(file);
			}
			free(names[i]);
		}
		free(names);
		free(dir);
	}
	free(kiro);
}

static void
sandbox_binds(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	const char *data = getenv(DATA_ENV);
	char *dir = data && data[0] ? xasprintf("%s/%s", data, DATA_DIR)
				    : xasprintf("%s/%s", DEFAULT_DATA_HOME, DATA_DIR);

	for (const char *const *p = STATE_DIRS; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_STATE);
	bind_path(ctx, out, dir, HQT_BIND_STATE);
	for (const char *const *p = PROTECTED; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_RO);
	for (const char *const *p = CONFIG; *p; p++)
		bind_path(ctx, out, *p, HQT_BIND_RO);
	protect_scripts(ctx, out);
	bind_project(out, PROJECT_PROTECTED);
	free(dir);
}

static int
build(const struct hqt_request *req, const char *resume_flag,
      const char *resume_id, struct hqt_cmd *out, struct hqt_error *err)
{
	const char *data = getenv(DATA_ENV);

	if (check_request(req, err) < 0)
		return HQT_ERROR;
	push_words(out, COMMAND);
	if (resume_flag)
		host->argv_push(out, resume_flag);
	if (resume_id)
		host->argv_push(out, resume_id);
	push_tail(out, req, MODEL_FLAG, SKIP_FLAGS);
	/* A sandbox starts from a cleared environment. */
	if (data && data[0])
		host->env_set(out, DATA_ENV, data);
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	(void)ctx;
	return build(req, NULL, NULL, out, err);
}

/* Kiro resumes its latest session in the project even before hqt knows the id. */
static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	const char *id = req->harness_session_id;

	(void)ctx;
	if (!id)
		return build(req, RESUME_LATEST_FLAG, NULL, out, err);
	if (!id_ok(id)) {
		host->set_error(err, "bad kiro session id '%s'", id);
		return HQT_ERROR;
	}
	return build(req, RESUME_ID_FLAG, id, out, err);
}

/* The id of a session file: a field of the record, else the file's name. */
static char *
session_id(json_t *rec, const char *name)
{
	for (const char *const *k = ID_KEYS; *k; k++) {
		const char *v = json_string_value(json_object_get(rec, *k));

		if (v)
			return xasprintf("%s", v);
	}
	return xasprintf("%.*s", (int)(strlen(name) - strlen(SESSION_SUFFIX)), name);
}

/* The oldest session file born in the project since the spawn. */
static int
capture_session_id(const struct hqt_ctx *ctx, const struct hqt_request *req,
		   char *buf, size_t len, struct hqt_error *err)
{
	char *dir = state_path(ctx, req, SESSIONS_DIR);
	DIR *d = opendir(dir);
	struct dirent *e;
	char *best = NULL;
	int64_t best_born = 0;
	int ret = HQT_NOT_YET;

	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name), k = strlen(SESSION_SUFFIX);
		char *path, *id;
		int64_t mtime, born;
		json_t *rec;
		const char *cwd;

		if (n <= k || strcmp(e->d_name + n - k, SESSION_SUFFIX))
			continue;
		path = xasprintf("%s/%s", dir, e->d_name);
		if (file_times(path, &mtime, &born) < 0 ||
		    born < req->spawned_at - CAPTURE_SLACK ||
		    mtime < req->spawned_at - CAPTURE_SLACK || (best && born >= best_born)) {
			free(path);
			continue;
		}
		rec = json_load_file(path, 0, NULL);
		cwd = json_string_value(json_object_get(rec, "cwd"));
		id = rec ? session_id(rec, e->d_name) : NULL;
		if (cwd && same_dir(cwd, req->project_path) && id_ok(id)) {
			free(best);
			best = id;
			best_born = born;
		} else {
			free(id);
		}
		json_decref(rec);
		free(path);
	}
	if (d)
		closedir(d);
	if (best)
		ret = id_copy(best, buf, len, err);
	free(best);
	free(dir);
	return ret;
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen,
	     size_t len)
{
	return markers_status(ctx, screen, len, WORKING_MARKERS, WAITING_MARKERS, NEEDS_MARKERS);
}

static const struct hqt_plugin plugin = {
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
	.struct_size = sizeof(struct hqt_plugin),
	.name = "kiro",
	.display_name = "Kiro CLI",
	.flags = HQT_PLUGIN_CAPTURES_SESSION_ID,
	.config_keys = CONFIG_KEYS,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.capture_session_id = capture_session_id,
	.parse_status = parse_status,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
