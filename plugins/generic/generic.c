/* generic.c: serves every [harness.NAME] section with "plugin = generic", so
 * an admin can describe a harness in hqt.ini without writing C. */
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "../common/common.h"

/*
 * The keys of such a section:
 *   command                the program and its arguments (required)
 *   resume_command         how to resume; unset: resume spawns `command`
 *   skip_permission_flags  appended when sandboxed
 *   model_flag             e.g. --model; with a model, "<flag> <model>" is
 *                          appended (a model without it is an error)
 *   binds                  comma list of the paths the harness needs in a
 *                          sandbox: writable ones are the session's own (a
 *                          directory made private per harness and project,
 *                          a file under ~ copied into the private home once),
 *                          never the host's; a ":ro" suffix shows the host's
 *                          read-only instead (e.g. ~/.aider.conf.yml:ro)
 *   project_protect        comma list of names in the project that the
 *                          harness run there later obeys (".aider.conf.yml",
 *                          "hooks/" for a directory): read-only in every
 *                          writable sandboxed session of the project
 *   env                    comma list of NAME=VALUE set for the harness
 *   sandbox_env            the same, set only when the session is sandboxed
 *                          (a skip-permission switch that is a variable)
 *   working_markers, waiting_markers, needs_markers   screen markers (see common.h)
 * command, resume_command and skip_permission_flags are split on blanks into
 * argv words: no shell, no quoting, no expansion.  "{id}" in a word of
 * command or resume_command stands for the session's id: a fresh v4 UUID
 * that hqt picks when the session is made and keeps (for a CLI that takes
 * one, `gemini --session-id {id}`, `gemini --resume {id}`); a
 * resume_command with "{id}" and no id yet spawns instead.
 */
static const char *const CONFIG_KEYS[] = {
	"plugin", "command", "resume_command", "skip_permission_flags", "model_flag",
	"binds", "project_protect", "env", "sandbox_env", "working_markers", "waiting_markers",
	"needs_markers", "net_allow", NULL,
};
static const char ID_PLACEHOLDER[] = "{id}";
static const char BLANKS[] = " \t";
static const char RO_SUFFIX[] = ":ro";
/* No markers of its own: the INI gives them, else activity decides. */
static const char *const NO_MARKERS[] = {NULL};

static char **
conf_words(const struct hqt_ctx *ctx, const char *key, const char *seps)
{
	return words_split(host->conf_get(ctx, key), seps);
}

static bool
env_name_ok(const char *s, size_t n)
{
	static const char first[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_";

	if (n == 0 || !strchr(first, s[0]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!strchr(first, s[i]) && !strchr("0123456789", s[i]))
			return false;
	return true;
}

static int
configure(const struct hqt_ctx *ctx, struct hqt_error *err)
{
	const char *resume = host->conf_get(ctx, "resume_command");
	char **cmd = conf_words(ctx, "command", BLANKS);
	char **env = conf_words(ctx, "env", ",");
	char **sbx_env = conf_words(ctx, "sandbox_env", ",");
	char **protect = conf_words(ctx, "project_protect", ",");
	int ret = 0;

	if (!cmd[0]) {
		host->set_error(err, "needs 'command', the program to run");
		ret = HQT_ERROR;
	} else if (resume && !resume[strspn(resume, BLANKS)]) {
		host->set_error(err, "resume_command is empty");
		ret = HQT_ERROR;
	}
	for (char **e = env; !ret && *e; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !env_name_ok(*e, (size_t)(eq - *e))) {
			host->set_error(err, "env: '%s' is not NAME=VALUE", *e);
			ret = HQT_ERROR;
		}
	}
	for (char **e = sbx_env; !ret && *e; e++) {
		const char *eq = strchr(*e, '=');

		if (!eq || !env_name_ok(*e, (size_t)(eq - *e))) {
			host->set_error(err, "sandbox_env: '%s' is not NAME=VALUE", *e);
			ret = HQT_ERROR;
		}
	}
	for (char **p = protect; !ret && *p; p++) {
		if (**p == '~' || !path_plain(*p)) {
			host->set_error(err, "project_protect: '%s' is not a path inside the "
					"project (relative, without '.' or '..')", *p);
			ret = HQT_ERROR;
		}
	}
	words_free(cmd);
	words_free(env);
	words_free(sbx_env);
	words_free(protect);
	return ret;
}

/* Whether the INI key's value has the {id} placeholder. */
static bool
takes_id(const struct hqt_ctx *ctx, const char *key)
{
	const char *v = host->conf_get(ctx, key);

	return v && strstr(v, ID_PLACEHOLDER);
}

/* word with each {id} replaced by id.  Caller frees. */
static char *
with_id(const char *word, const char *id)
{
	size_t n = strlen(ID_PLACEHOLDER), count = 0, len;
	char *out, *o;

	for (const char *p = strstr(word, ID_PLACEHOLDER); p; p = strstr(p + n, ID_PLACEHOLDER))
		count++;
	len = strlen(word) + count * strlen(id) + 1;
	out = o = xmalloc(len);
	while (*word) {
		if (!strncmp(word, ID_PLACEHOLDER, n)) {
			memcpy(o, id, strlen(id));
			o += strlen(id);
			word += n;
		} else {
			*o++ = *word++;
		}
	}
	*o = '\0';
	return out;
}

static void
set_env_words(struct hqt_cmd *out, char **env)
{
	for (char **e = env; *e; e++) {
		char *eq = strchr(*e, '=');

		if (eq) {
			*eq = '\0';
			host->env_set(out, *e, eq + 1);
		}
	}
}

static void
skip_permission_flags(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	char **flags = conf_words(ctx, "skip_permission_flags", BLANKS);

	list_words(out, (const char *const *)flags);
	words_free(flags);
}

static void
sandbox_binds(const struct hqt_ctx *ctx, struct hqt_binds *out)
{
	char **binds = conf_words(ctx, "binds", ",");
	size_t k = strlen(RO_SUFFIX);

	for (char **b = binds; *b; b++) {
		size_t n = strlen(*b);
		bool ro = n > k && !strcmp(*b + n - k, RO_SUFFIX);

		if (ro)
			(*b)[n - k] = '\0';
		if (ro) {
			bind_path(ctx, out, *b, HQT_BIND_RO);
		} else {
			char *p = home_path(ctx, *b);
			struct stat st;
			size_t h = strlen(ctx->home);
			bool file = stat(p, &st) == 0 && S_ISREG(st.st_mode);
			bool in_home = !strncmp(p, ctx->home, h) && p[h] == '/';

			/* A file the harness rewrites: a private copy where one can
			 * be kept (under ~), else that one file. */
			host->bind_add(out, p, !file ? HQT_BIND_STATE
						     : in_home ? HQT_BIND_SEED | HQT_BIND_RW : HQT_BIND_RW);
			free(p);
		}
	}
	words_free(binds);
	binds = conf_words(ctx, "project_protect", ",");
	bind_project(out, (const char *const *)binds);
	words_free(binds);
}

/* [harness.NAME] net_allow: the hosts "+" stands for with net = allow. */
static void
net_allow(const struct hqt_ctx *ctx, struct hqt_strlist *out)
{
	char **hosts = conf_words(ctx, "net_allow", ", \t");

	list_words(out, (const char *const *)hosts);
	words_free(hosts);
}

static int
build(const struct hqt_ctx *ctx, const struct hqt_request *req,
      const char *command_key, struct hqt_cmd *out, struct hqt_error *err)
{
	const char *model_flag = host->conf_get(ctx, "model_flag");
	char **cmd, **skip, **env;

	if (check_request(req, err) < 0)
		return HQT_ERROR;
	if (req->model && !(model_flag && model_flag[0])) {
		host->set_error(err, "takes no model: [harness.%s] has no model_flag",
				ctx->harness);
		return HQT_ERROR;
	}
	/* configure() saw to it that the command has words. */
	cmd = conf_words(ctx, command_key, BLANKS);
	if (takes_id(ctx, command_key) && !is_uuid(req->harness_session_id)) {
		host->set_error(err, "[harness.%s] %s has {id}, but the session has no id (made "
				"before {id} was added?)", ctx->harness, command_key);
		words_free(cmd);
		return HQT_ERROR;
	}
	skip = conf_words(ctx, "skip_permission_flags", BLANKS);
	env = conf_words(ctx, "env", ",");
	for (char **w = cmd; *w; w++) {
		char *word = strstr(*w, ID_PLACEHOLDER) ? with_id(*w, req->harness_session_id) : NULL;

		host->argv_push(out, word ? word : *w);
		free(word);
	}
	push_tail(out, req, model_flag, (const char *const *)skip);
	set_env_words(out, env);
	if (req->sandboxed) {
		char **sbx_env = conf_words(ctx, "sandbox_env", ",");

		set_env_words(out, sbx_env);
		words_free(sbx_env);
	}
	words_free(cmd);
	words_free(skip);
	words_free(env);
	return HQT_OK;
}

static int
build_spawn(const struct hqt_ctx *ctx, const struct hqt_request *req,
	    struct hqt_cmd *out, struct hqt_error *err)
{
	return build(ctx, req, "command", out, err);
}

static int
build_resume(const struct hqt_ctx *ctx, const struct hqt_request *req,
	     struct hqt_cmd *out, struct hqt_error *err)
{
	if (!host->conf_get(ctx, "resume_command"))
		return HQT_FRESH;
	/* Nothing to name yet: spawn (with the same id). */
	if (takes_id(ctx, "resume_command") && !is_uuid(req->harness_session_id))
		return HQT_FRESH;
	return build(ctx, req, "resume_command", out, err);
}

/* A fresh id when the command or resume_command names one ({id}). */
static int
generate_session_id(const struct hqt_ctx *ctx, char *buf, size_t len, struct hqt_error *err)
{
	if (!takes_id(ctx, "command") && !takes_id(ctx, "resume_command"))
		return HQT_NONE;
	return uuid_v4(buf, len, err);
}

static enum hqt_status
parse_status(const struct hqt_ctx *ctx, const char *screen,
	     size_t len)
{
	return markers_status(ctx, screen, len, NO_MARKERS, NO_MARKERS, NO_MARKERS);
}

static const struct hqt_plugin plugin = {
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
	.struct_size = sizeof(struct hqt_plugin),
	.name = "generic",
	.display_name = "Generic harness",
	.flags = HQT_PLUGIN_MULTI,
	.config_keys = CONFIG_KEYS,
	.configure = configure,
	.skip_permission_flags = skip_permission_flags,
	.sandbox_binds = sandbox_binds,
	.net_allow = net_allow,
	.build_spawn = build_spawn,
	.build_resume = build_resume,
	.generate_session_id = generate_session_id,
	.parse_status = parse_status,
};

HQT_PLUGIN_EXPORT const struct hqt_plugin *
hqt_plugin_query(const struct hqt_host_api *h, struct hqt_error *err)
{
	return plugin_init(h, err) == 0 ? &plugin : NULL;
}
