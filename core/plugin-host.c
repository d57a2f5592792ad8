/* plugin-host.c: loading harness plugins with dlopen, validating them, and the
 * registry of harnesses they serve. */
#include "plugin-host.h"
#include "log.h"
#include "util.h"

#include <dirent.h>
#include <ctype.h>
#include <dlfcn.h>
#include <jansson.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The descriptor must reach at least the last required field. */
#define DESC_MIN_SIZE \
	(offsetof(struct hqt_plugin, build_resume) + sizeof(((struct hqt_plugin *)0)->build_resume))

/* ---- the builders plugins write into ---- */

void
hqt_cmd_init(struct hqt_cmd *cmd)
{
	strv_init(&cmd->argv);
	strv_init(&cmd->env);
	cmd->cwd = NULL;
}

void
hqt_cmd_clear(struct hqt_cmd *cmd)
{
	if (cmd == NULL)
		return;
	strv_clear(&cmd->argv);
	strv_clear(&cmd->env);
	free(cmd->cwd);
	cmd->cwd = NULL;
}

void
binds_add(struct hqt_binds *b, const char *path, unsigned flags)
{
	b->v = xreallocarray(b->v, b->n + 1, sizeof *b->v);
	b->v[b->n].path = expand_home(path);
	b->v[b->n].flags = flags;
	b->n++;
}

void
binds_clear(struct hqt_binds *b)
{
	if (b == NULL)
		return;
	for (size_t i = 0; i < b->n; i++)
		free(b->v[i].path);
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

static void
host_argv_push(struct hqt_cmd *cmd, const char *arg)
{
	if (cmd != NULL && arg != NULL)
		strv_push(&cmd->argv, arg);
}

static void
host_env_set(struct hqt_cmd *cmd, const char *name, const char *value)
{
	size_t len;

	if (cmd == NULL || name == NULL || value == NULL || *name == '\0' ||
	    strchr(name, '=') != NULL)
		return;
	len = strlen(name);
	for (size_t i = 0; i < cmd->env.n; i++) {
		if (strncmp(cmd->env.v[i], name, len) == 0 && cmd->env.v[i][len] == '=') {
			free(cmd->env.v[i]);
			cmd->env.v[i] = xasprintf("%s=%s", name, value);
			return;
		}
	}
	strv_pushf(&cmd->env, "%s=%s", name, value);
}

static void
host_set_cwd(struct hqt_cmd *cmd, const char *dir)
{
	if (cmd == NULL || dir == NULL)
		return;
	free(cmd->cwd);
	cmd->cwd = xstrdup(dir);
}

static void
host_list_push(struct hqt_strlist *list, const char *s)
{
	if (list != NULL && s != NULL)
		strv_push(&list->items, s);
}

static void
host_bind_add(struct hqt_binds *binds, const char *path, unsigned flags)
{
	if (binds != NULL && path != NULL && *path != '\0')
		binds_add(binds, path, flags);
}

static void
host_set_error(struct hqt_error *err, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL)
		return;
	free(err->msg);
	va_start(ap, fmt);
	err->msg = xvasprintf(fmt, ap);
	va_end(ap);
}

static void
host_log(const struct hqt_ctx *ctx, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	va_start(ap, fmt);
	msg = xvasprintf(fmt, ap);
	va_end(ap);
	hqt_log("%s: %s", ctx != NULL && ctx->harness != NULL ? ctx->harness : "plugin", msg);
	free(msg);
}

static const char *
host_conf_get(const struct hqt_ctx *ctx, const char *key)
{
	if (ctx == NULL || ctx->section == NULL || key == NULL)
		return NULL;
	return config_section_get(ctx->section, key);
}

static int
host_conf_list(const struct hqt_ctx *ctx, const char *key, struct hqt_strlist *out)
{
	const char *v = host_conf_get(ctx, key);

	if (v == NULL)
		return 0;
	if (out != NULL)
		strv_split(&out->items, v, ',', 1);
	return 1;
}

const struct hqt_host_api hqt_host_api = {
	.abi_major = HQT_PLUGIN_ABI_MAJOR,
	.abi_minor = HQT_PLUGIN_ABI_MINOR,
	.struct_size = sizeof(struct hqt_host_api),
	.argv_push = host_argv_push,
	.env_set = host_env_set,
	.set_cwd = host_set_cwd,
	.list_push = host_list_push,
	.bind_add = host_bind_add,
	.set_error = host_set_error,
	.log = host_log,
	.conf_get = host_conf_get,
	.conf_list = host_conf_list,
};

/* ---- loading ---- */

static void
refuse(struct registry *reg, const char *file, const char *fmt, ...)
{
	va_list ap;

	reg->refused = xreallocarray(reg->refused, reg->nrefused + 1, sizeof *reg->refused);
	reg->refused[reg->nrefused].file = xstrdup(file);
	va_start(ap, fmt);
	reg->refused[reg->nrefused].reason = xvasprintf(fmt, ap);
	va_end(ap);
	reg->nrefused++;
}

static void
unload(void *dl)
{
#ifndef HQT_SANITIZED
	/* Under ASan a dlclose'd plugin turns leak stacks into "<unknown module>". */
	if (dl != NULL)
		dlclose(dl);
#else
	(void)dl;
#endif
}

/*
 * Ownership and permission checks shared by the directory and each file: a
 * plugin runs with the user's rights, so only root or the user may control it.
 */
static const char *
unsafe_owner_or_mode(const struct stat *st, char *buf, size_t len)
{
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(buf, len, "writable by %s",
			 (st->st_mode & S_IWOTH) ? "others" : "group");
		return buf;
	}
	if (st->st_uid != 0 && st->st_uid != getuid()) {
		snprintf(buf, len, "owned by uid %u, neither root nor the user",
			 (unsigned)st->st_uid);
		return buf;
	}
	return NULL;
}

static const struct plugin *
find_plugin(const struct registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->nplugins; i++)
		if (strcmp(reg->plugins[i].desc->name, name) == 0)
			return &reg->plugins[i];
	return NULL;
}

static int
required_string(const char *s)
{
	return s != NULL && *s != '\0';
}

static void
load_one(struct registry *reg, const char *file, const char *dir_problem)
{
	struct stat st;
	char why[128];
	const char *problem;
	void *dl;
	hqt_plugin_query_fn query;
	const struct hqt_plugin *d;
	struct hqt_error perr = { NULL };
	const struct plugin *dup;

	if (dir_problem != NULL) {
		refuse(reg, file, "plugin directory is %s", dir_problem);
		return;
	}
	if (stat(file, &st) != 0) {
		if (errno == ENOENT)
			refuse(reg, file, "not found (named in [plugins] load)");
		else
			refuse(reg, file, "cannot stat: %s", strerror(errno));
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		refuse(reg, file, "not a regular file");
		return;
	}
	if ((problem = unsafe_owner_or_mode(&st, why, sizeof why)) != NULL) {
		refuse(reg, file, "%s", problem);
		return;
	}
	dlerror();
	dl = dlopen(file, RTLD_NOW | RTLD_LOCAL);
	if (dl == NULL) {
		const char *e = dlerror();
		refuse(reg, file, "dlopen failed: %s", e != NULL ? e : "unknown error");
		return;
	}
	*(void **)&query = dlsym(dl, HQT_PLUGIN_ENTRY);
	if (query == NULL) {
		refuse(reg, file, "no entry symbol %s", HQT_PLUGIN_ENTRY);
		unload(dl);
		return;
	}
	d = query(&hqt_host_api, &perr);
	if (d == NULL) {
		refuse(reg, file, "entry returned NULL%s%s", perr.msg ? ": " : "",
		       perr.msg ? perr.msg : "");
		free(perr.msg);
		unload(dl);
		return;
	}
	free(perr.msg);
	if (d->abi_major != HQT_PLUGIN_ABI_MAJOR) {
		refuse(reg, file, "ABI major version %u, this hqt has %u", d->abi_major,
		       HQT_PLUGIN_ABI_MAJOR);
		unload(dl);
		return;
	}
	if (d->abi_minor > HQT_PLUGIN_ABI_MINOR) {
		refuse(reg, file, "ABI version %u.%u is newer than this hqt's %u.%u",
		       d->abi_major, d->abi_minor, HQT_PLUGIN_ABI_MAJOR, HQT_PLUGIN_ABI_MINOR);
		unload(dl);
		return;
	}
	if (d->struct_size < DESC_MIN_SIZE) {
		refuse(reg, file, "descriptor too small (%zu bytes, need at least %zu)",
		       d->struct_size, (size_t)DESC_MIN_SIZE);
		unload(dl);
		return;
	}
	/*
	 * From here on only a copy is read: the descriptor as far as the
	 * plugin's struct_size says, the rest zero (sudo gates each later
	 * field on the version; a copy cannot forget to).  An optional field
	 * the plugin did not provide is NULL, never the bytes after its
	 * descriptor.
	 */
	{
		struct hqt_plugin *copy = xcalloc(1, sizeof *copy);
		memcpy(copy, d, d->struct_size < sizeof *copy ? d->struct_size : sizeof *copy);
		d = copy;
	}
	problem = !required_string(d->name) ? "name" :
		  !required_string(d->display_name) ? "display_name" :
		  d->build_spawn == NULL ? "build_spawn" :
		  d->build_resume == NULL ? "build_resume" : NULL;
	if (problem != NULL) {
		refuse(reg, file, "required field '%s' is NULL or empty", problem);
		free((void *)d);
		unload(dl);
		return;
	}
	if (!valid_name(d->name)) {
		refuse(reg, file, "bad name '%s' (use a-z, 0-9, '-' and '_')", d->name);
		free((void *)d);
		unload(dl);
		return;
	}
	if ((dup = find_plugin(reg, d->name)) != NULL) {
		refuse(reg, file, "duplicate harness name '%s' (already loaded from %s)",
		       d->name, dup->file);
		free((void *)d);
		unload(dl);
		return;
	}
	reg->plugins = xreallocarray(reg->plugins, reg->nplugins + 1, sizeof *reg->plugins);
	struct plugin *p = &reg->plugins[reg->nplugins++];
	p->file = xstrdup(file);
	p->dl = dl;
	p->desc = d;
	snprintf(p->abi, sizeof p->abi, "%u.%u", d->abi_major, d->abi_minor);
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .so files to load: every one in dir for "*", else NAME.so per name. */
static int
plugin_files(const struct config *cfg, struct strv *files, char **err)
{
	const char *dir = cfg->plugin_dir;
	DIR *d;
	struct dirent *de;

	if (strv_find(&cfg->plugins_load, "*") < 0) {
		for (size_t i = 0; i < cfg->plugins_load.n; i++)
			strv_pushf(files, "%s/%s.so", dir, cfg->plugins_load.v[i]);
		return 0;
	}
	if ((d = opendir(dir)) == NULL) {
		set_err(err, "cannot open plugin directory '%s': %s", dir, strerror(errno));
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		if (de->d_name[0] != '.' && len > 3 && strcmp(de->d_name + len - 3, ".so") == 0)
			strv_pushf(files, "%s/%s", dir, de->d_name);
	}
	closedir(d);
	if (files->n > 1)
		qsort(files->v, files->n, sizeof *files->v, cmp_str);
	return 0;
}

static void
add_harness(struct registry *reg, const char *name, const struct plugin *p,
	    const struct config_section *sec)
{
	struct harness *h;
	struct hqt_error perr = { NULL };
	const char *const *keys = p->desc->config_keys;

	if (registry_harness(reg, name) != NULL) {
		strv_pushf(&reg->warnings, "%s: harness '%s' is already served by another plugin",
			   sec != NULL ? sec->where : p->file, name);
		return;
	}
	/* Unknown keys warn: the plugin lists what its section may hold. */
	for (size_t i = 0; sec != NULL && i < sec->keys.n; i++) {
		int known = 0;
		for (size_t k = 0; keys != NULL && keys[k] != NULL; k++)
			if (strcmp(keys[k], sec->keys.v[i]) == 0)
				known = 1;
		if (!known)
			strv_pushf(&reg->warnings, "%s: unknown key '%s' in [harness.%s]",
				   sec->lines.v[i], sec->keys.v[i], name);
	}
	reg->harnesses = xreallocarray(reg->harnesses, reg->nharnesses + 1, sizeof *reg->harnesses);
	h = &reg->harnesses[reg->nharnesses];
	h->name = xstrdup(name);
	h->plugin = p;
	h->section = sec;
	h->ctx.host = &hqt_host_api;
	h->ctx.harness = h->name;
	h->ctx.section = sec;
	h->ctx.home = reg->home;
	if (p->desc->configure != NULL && p->desc->configure(&h->ctx, &perr) != 0) {
		strv_pushf(&reg->warnings, "%s: [harness.%s]: %s",
			   sec != NULL ? sec->where : p->file, name,
			   perr.msg != NULL ? perr.msg : "rejected by its plugin");
		free(perr.msg);
		free(h->name);
		return;
	}
	free(perr.msg);
	reg->nharnesses++;
}

int
registry_load(struct registry *reg, const struct config *cfg, char **err)
{
	struct strv files = STRV_INIT;
	struct stat st;
	char why[128];
	const char *dir_problem = NULL;
	int rc = 0;

	memset(reg, 0, sizeof *reg);
	reg->home = user_home();
	if (reg->home == NULL)
		reg->home = xstrdup("/");
	if (stat(cfg->plugin_dir, &st) != 0) {
		set_err(err, "plugin directory '%s': %s", cfg->plugin_dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, "plugin directory '%s' is not a directory", cfg->plugin_dir);
		return -1;
	}
	dir_problem = unsafe_owner_or_mode(&st, why, sizeof why);
	if (plugin_files(cfg, &files, err) != 0)
		return -1;
	for (size_t i = 0; i < files.n; i++)
		load_one(reg, files.v[i], dir_problem);
	strv_clear(&files);

	for (size_t i = 0; i < reg->nplugins; i++) {
		const struct plugin *p = &reg->plugins[i];
		if (!(p->desc->flags & HQT_PLUGIN_MULTI))
			add_harness(reg, p->desc->name, p, config_section(cfg, p->desc->name));
	}
	for (size_t i = 0; i < cfg->nsections; i++) {
		const struct config_section *sec = &cfg->sections[i];
		const char *pname = sec->plugin != NULL ? sec->plugin : sec->name;
		const struct plugin *p = find_plugin(reg, pname);

		if (p == NULL) {
			strv_pushf(&reg->warnings, "%s: [harness.%s] uses plugin '%s', which is not loaded",
				   sec->where, sec->name, pname);
			continue;
		}
		if (p->desc->flags & HQT_PLUGIN_MULTI)
			add_harness(reg, sec->name, p, sec);
		else if (strcmp(pname, sec->name) != 0)
			strv_pushf(&reg->warnings,
				   "%s: [harness.%s]: plugin '%s' serves only its own harness",
				   sec->where, sec->name, pname);
	}
	return rc;
}

/* The plugin that serves harness `name`: its section's plugin key, else
 * the name itself. */
static const char *
plugin_of(const struct config *cfg, const char *name)
{
	const struct config_section *sec = config_section(cfg, name);

	return sec != NULL && sec->plugin != NULL ? sec->plugin : name;
}

int
registry_load_for(struct registry *reg, const struct config *cfg, char *const names[], size_t n,
		  char **err)
{
	bool all = strv_find(&cfg->plugins_load, "*") >= 0;
	struct stat st;
	char why[128];
	const char *dir_problem;

	memset(reg, 0, sizeof *reg);
	reg->partial = true;
	reg->home = user_home();
	if (reg->home == NULL)
		reg->home = xstrdup("/");
	if (stat(cfg->plugin_dir, &st) != 0) {
		set_err(err, "plugin directory '%s': %s", cfg->plugin_dir, strerror(errno));
		registry_free(reg);
		return -1;
	}
	if (!S_ISDIR(st.st_mode)) {
		set_err(err, "plugin directory '%s' is not a directory", cfg->plugin_dir);
		registry_free(reg);
		return -1;
	}
	dir_problem = unsafe_owner_or_mode(&st, why, sizeof why);
	/* Every plugin first: add_harness keeps pointers into reg->plugins. */
	for (size_t i = 0; i < n; i++) {
		const char *pname = plugin_of(cfg, names[i]);
		size_t had = reg->nplugins;
		char *file;

		if (!valid_name(pname) || (!all && strv_find(&cfg->plugins_load, pname) < 0))
			goto whole;
		if (find_plugin(reg, pname) != NULL)
			continue;
		file = xasprintf("%s/%s.so", cfg->plugin_dir, pname);
		load_one(reg, file, dir_problem);
		free(file);
		if (reg->nplugins == had || strcmp(reg->plugins[had].desc->name, pname) != 0)
			goto whole;
	}
	for (size_t i = 0; i < n; i++) {
		const char *pname = plugin_of(cfg, names[i]);
		const struct plugin *p = find_plugin(reg, pname);
		const struct config_section *sec = config_section(cfg, names[i]);

		if (registry_harness(reg, names[i]) != NULL)
			continue;
		/* As registry_load: a plugin serves its own name, or (MULTI)
		 * the sections that name it. */
		if (p->desc->flags & HQT_PLUGIN_MULTI) {
			if (sec != NULL)
				add_harness(reg, names[i], p, sec);
		} else if (strcmp(pname, names[i]) == 0) {
			add_harness(reg, names[i], p, sec);
		}
		if (registry_harness(reg, names[i]) == NULL)
			goto whole;
	}
	return 0;
whole:
	registry_free(reg);
	return 1;
}

void
registry_free(struct registry *reg)
{
	if (reg == NULL)
		return;
	for (size_t i = 0; i < reg->nharnesses; i++)
		free(reg->harnesses[i].name);
	free(reg->harnesses);
	for (size_t i = 0; i < reg->nplugins; i++) {
		free(reg->plugins[i].file);
		free((void *)reg->plugins[i].desc);
		unload(reg->plugins[i].dl);
	}
	free(reg->plugins);
	for (size_t i = 0; i < reg->nrefused; i++) {
		free(reg->refused[i].file);
		free(reg->refused[i].reason);
	}
	free(reg->refused);
	free(reg->home);
	strv_clear(&reg->warnings);
	memset(reg, 0, sizeof *reg);
}

const struct harness *
registry_harness(const struct registry *reg, const char *name)
{
	for (size_t i = 0; i < reg->nharnesses; i++)
		if (strcmp(reg->harnesses[i].name, name) == 0)
			return &reg->harnesses[i];
	return NULL;
}

/* ---- calls into a plugin ---- */

/* A plugin of ABI 1.0 to 1.3 said "the harness picks its own id" and
 * "found" with 1, and "not yet" with 0 (plugin.h). */
static bool
abi_before_1_4(const struct harness *h)
{
	return h->plugin->desc->abi_minor < 4;
}

/* A return value the call does not have is an error, said as such. */
static int
unknown_value(int rc, struct hqt_error *perr)
{
	if (perr->msg == NULL)
		perr->msg = xasprintf("the plugin returned %d, which that call does not return", rc);
	return -1;
}

static int
finish(int rc, struct hqt_error *perr, const struct harness *h, const char *what, char **err)
{
	if (rc < 0)
		set_err(err, "%s: %s", h->name,
			perr->msg != NULL ? perr->msg : what);
	free(perr->msg);
	return rc < 0 ? -1 : rc;
}

int
harness_build_spawn(const struct harness *h, const struct hqt_request *req,
		    struct hqt_cmd *out, char **err)
{
	struct hqt_error perr = { NULL };
	int rc = h->plugin->desc->build_spawn(&h->ctx, req, out, &perr);

	if (rc > 0)
		rc = unknown_value(rc, &perr);
	if (rc == 0 && out->argv.n == 0)
		rc = -1, perr.msg = perr.msg ? perr.msg : xstrdup("plugin built an empty command");
	return finish(rc < 0 ? -1 : 0, &perr, h, "cannot build the command", err);
}

int
harness_build_resume(const struct harness *h, const struct hqt_request *req,
		     struct hqt_cmd *out, char **err)
{
	struct hqt_error perr = { NULL };
	int rc = h->plugin->desc->build_resume(&h->ctx, req, out, &perr);

	if (rc != HQT_OK && rc != HQT_FRESH && rc >= 0)
		rc = unknown_value(rc, &perr);
	if (rc == HQT_OK && out->argv.n == 0)
		rc = -1, perr.msg = perr.msg ? perr.msg : xstrdup("plugin built an empty command");
	return finish(rc, &perr, h, "cannot build the resume command", err);
}

int
harness_generate_id(const struct harness *h, char **id, char **err)
{
	struct hqt_error perr = { NULL };
	char buf[256] = "";
	int rc;

	*id = NULL;
	if (h->plugin->desc->generate_session_id == NULL)
		return 1;
	rc = h->plugin->desc->generate_session_id(&h->ctx, buf, sizeof buf, &perr);
	if (rc == 1 && abi_before_1_4(h))
		rc = HQT_NONE;
	if (rc == HQT_NONE)
		rc = 1;
	else if (rc > 0)
		rc = unknown_value(rc, &perr);
	if (rc == HQT_OK) {
		buf[sizeof buf - 1] = '\0';
		if (buf[0] == '\0')
			rc = -1;
		else
			*id = xstrdup(buf);
	}
	return finish(rc, &perr, h, "cannot generate a session id", err);
}

int
harness_capture_id(const struct harness *h, const struct hqt_request *req, char **id,
		   char **err)
{
	struct hqt_error perr = { NULL };
	char buf[256] = "";
	int rc;

	*id = NULL;
	if (h->plugin->desc->capture_session_id == NULL ||
	    !(h->plugin->desc->flags & HQT_PLUGIN_CAPTURES_SESSION_ID))
		return 0;
	rc = h->plugin->desc->capture_session_id(&h->ctx, req, buf, sizeof buf, &perr);
	if (abi_before_1_4(h) && (rc == 0 || rc == 1))
		rc = rc == 1 ? HQT_OK : HQT_NOT_YET;
	if (rc == HQT_NOT_YET)
		rc = 0;
	else if (rc == HQT_OK)
		rc = 1;
	else if (rc >= 0)
		rc = unknown_value(rc, &perr);
	if (rc == 1) {
		buf[sizeof buf - 1] = '\0';
		if (buf[0] == '\0')
			rc = 0;
		else
			*id = xstrdup(buf);
	}
	return finish(rc, &perr, h, "cannot capture the session id", err);
}

bool
harness_reads_screen(const struct harness *h)
{
	return h->plugin->desc->parse_status != NULL;
}

enum hqt_status
harness_parse_status(const struct harness *h, const char *screen, size_t len)
{
	enum hqt_status s;

	if (h->plugin->desc->parse_status == NULL)
		return HQT_STATUS_UNKNOWN;
	s = h->plugin->desc->parse_status(&h->ctx, screen, len);
	return s == HQT_STATUS_WORKING || s == HQT_STATUS_WAITING || s == HQT_STATUS_NEEDS_INPUT
		       ? s : HQT_STATUS_UNKNOWN;
}

bool
uuid_like(const char *s)
{
	size_t i = 0;

	if (s == NULL)
		return false;
	for (; s[i] != '\0' && i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !isxdigit((unsigned char)s[i]))
			return false;
	}
	return i == 36 && s[i] == '\0';
}

bool
harness_has_events(const struct harness *h)
{
	return h->plugin->desc->parse_event != NULL;
}

/* Valid UTF-8 (no overlong forms, surrogates or code points past
 * U+10FFFF) and no control bytes: what a compact JSON line is made of. */
static bool
clean_utf8(const unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len;) {
		unsigned c = p[i], need, min, cp;

		if (c < 0x20 || c == 0x7f)
			return false;
		if (c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return false;
		if (len - i <= need)
			return false;
		for (unsigned k = 1; k <= need; k++) {
			if ((p[i + k] & 0xc0) != 0x80)
				return false;
			cp = (cp << 6) | (p[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return false;
		i += need + 1;
	}
	return true;
}

/* hqt-event's date, the line's first member: {"hqt_at":<ms>,... */
static long long
line_time(const char *line, size_t len)
{
	static const char key[] = "{\"" HQT_EVENT_TIME_KEY "\":";
	size_t n = sizeof key - 1, i = n;
	long long v = 0;

	if (len <= n || memcmp(line, key, n) != 0)
		return 0;
	for (; i < len && i < n + 15 && line[i] >= '0' && line[i] <= '9'; i++)
		v = v * 10 + (line[i] - '0');
	return i > n && i < len && (line[i] == ',' || line[i] == '}') ? v : 0;
}

enum hqt_status
harness_parse_event(const struct harness *h, const char *line, size_t len, char id[37],
		    long long *at_ms)
{
	char buf[128] = "";
	enum hqt_status s;

	if (id != NULL)
		id[0] = '\0';
	if (at_ms != NULL)
		*at_ms = 0;
	/*
	 * Hostile input: bounded, one object's text, valid UTF-8 without
	 * control bytes (so no NUL, no second line); the plugin parses it
	 * strictly with jansson.  Not parsed here as well: a second parse of
	 * every session's newest line at every look was half the cost of
	 * `hqt list` with 100 sessions.
	 */
	if (h->plugin->desc->parse_event == NULL || len < 2 || len > HARNESS_EVENT_MAX ||
	    line[0] != '{' || line[len - 1] != '}' ||
	    !clean_utf8((const unsigned char *)line, len))
		return HQT_STATUS_UNKNOWN;
	if (at_ms != NULL)
		*at_ms = line_time(line, len);
	s = h->plugin->desc->parse_event(&h->ctx, line, len, buf, sizeof buf);
	buf[sizeof buf - 1] = '\0';
	if (id != NULL && uuid_like(buf))
		memcpy(id, buf, 37);
	return s == HQT_STATUS_WORKING || s == HQT_STATUS_WAITING || s == HQT_STATUS_NEEDS_INPUT
		       ? s : HQT_STATUS_UNKNOWN;
}

void
harness_skip_flags(const struct harness *h, struct strv *out)
{
	struct hqt_strlist l = { STRV_INIT };

	if (h->plugin->desc->skip_permission_flags != NULL)
		h->plugin->desc->skip_permission_flags(&h->ctx, &l);
	for (size_t i = 0; i < l.items.n; i++)
		strv_push(out, l.items.v[i]);
	strv_clear(&l.items);
}

void
harness_net_allow(const struct harness *h, struct strv *out, struct strv *refused)
{
	struct hqt_strlist l = { STRV_INIT };

	if (h->plugin->desc->net_allow != NULL)
		h->plugin->desc->net_allow(&h->ctx, &l);
	for (size_t i = 0; i < l.items.n; i++)
		if (strcmp(l.items.v[i], "+") == 0 || config_net_entry(l.items.v[i], out) != 0)
			strv_push(refused, l.items.v[i]);
	strv_clear(&l.items);
}

void
harness_binds(const struct harness *h, struct hqt_binds *out)
{
	if (h->plugin->desc->sandbox_binds != NULL)
		h->plugin->desc->sandbox_binds(&h->ctx, out);
}
