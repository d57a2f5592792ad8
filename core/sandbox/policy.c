/* policy.c: a session's sandbox policy and its stored JSON (SPEC §8). */
#include "config.h"
#include "sandbox-int.h"
#include "text.h"
#include "util.h"

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* The policy and its JSON                                                  */

void
sandbox_policy_init(struct sandbox_policy *p)
{
	p->fs_rw = true;
	p->net = true;
	p->net_allow = false;
	strv_init(&p->net_list);
	p->allow_ptrace = false;
	p->binds = NULL;
	p->nbinds = 0;
	strv_init(&p->env_names);
}

void
sandbox_policy_free(struct sandbox_policy *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->nbinds; i++)
		free(p->binds[i].path);
	free(p->binds);
	strv_clear(&p->env_names);
	strv_clear(&p->net_list);
	sandbox_policy_init(p);
}

void
sandbox_policy_add_bind(struct sandbox_policy *p, const char *path, unsigned flags)
{
	if (flags & HQT_BIND_PROJECT) {
		/* A project name: relative, inside; only ever protected. */
		if (path[0] == '/' || !rel_safe(path))
			return;
		flags = HQT_BIND_PROJECT | HQT_BIND_PROTECT;
	}
	for (size_t i = 0; i < p->nbinds; i++)
		if (p->binds[i].flags == flags && strcmp(p->binds[i].path, path) == 0)
			return;
	if (p->nbinds >= SANDBOX_MAX_BINDS)
		return; /* a bind left out only takes access away */
	p->binds = xreallocarray(p->binds, p->nbinds + 1, sizeof *p->binds);
	p->binds[p->nbinds].path = xstrdup(path);
	p->binds[p->nbinds].flags = flags;
	p->nbinds++;
}

void
sandbox_policy_from_config(struct sandbox_policy *p, const struct sandbox_defaults *d)
{
	p->fs_rw = d->fs_rw;
	p->net = d->net;
	p->net_allow = d->net_allow;
	strv_clear(&p->net_list);
	if (d->net_allow)
		strv_pushv(&p->net_list, (const char *const *)strv_v(&d->net_list));
	p->allow_ptrace = d->allow_ptrace;
	for (size_t i = 0; i < d->ro_binds.n; i++)
		sandbox_policy_add_bind(p, d->ro_binds.v[i], HQT_BIND_RO);
	for (size_t i = 0; i < d->rw_binds.n; i++)
		sandbox_policy_add_bind(p, d->rw_binds.v[i], HQT_BIND_RW);
	for (size_t i = 0; i < d->env.n; i++)
		if (strv_find(&p->env_names, d->env.v[i]) < 0)
			strv_push(&p->env_names, d->env.v[i]);
	/* The plugin's binds are added at every start instead (session/plan.c
	 * session_add_plugin_binds): they follow the harness's settings as
	 * they are then, and a stored writable bind of the harness's state
	 * would outlive the design that made it. */
}

char *
sandbox_policy_to_json(const struct sandbox_policy *p, char **err)
{
	json_t *o = json_object(), *binds = json_array(), *env = json_array();
	char *out = NULL;

	json_object_set_new(o, "fs", json_string(p->fs_rw ? "rw" : "ro"));
	json_object_set_new(o, "net", json_boolean(p->net && !p->net_allow));
	if (p->net_allow) {
		json_t *l = json_array();
		for (size_t i = 0; i < p->net_list.n; i++)
			json_array_append_new(l, json_string(p->net_list.v[i]));
		json_object_set_new(o, "net_allow", l);
	}
	if (p->allow_ptrace)
		json_object_set_new(o, "ptrace", json_true());
	for (size_t i = 0; i < p->nbinds; i++) {
		json_t *path = json_string(p->binds[i].path);
		unsigned f = p->binds[i].flags;

		if (path == NULL) {
			set_err(err, "sandbox policy: bind path is not valid UTF-8");
			goto out;
		}
		json_t *b = json_object();
		json_object_set_new(b, "path", path);
		json_object_set_new(b, "writable", json_boolean(f & HQT_BIND_RW));
		json_object_set_new(b, "seed", json_boolean(f & HQT_BIND_SEED));
		json_object_set_new(b, "protect", json_boolean(f & HQT_BIND_PROTECT));
		if (f & HQT_BIND_PROJECT)
			json_object_set_new(b, "project", json_true());
		if (f & HQT_BIND_STATE)
			json_object_set_new(b, "state", json_true());
		json_array_append_new(binds, b);
	}
	for (size_t i = 0; i < p->env_names.n; i++) {
		json_t *s = json_string(p->env_names.v[i]);
		if (s == NULL) {
			set_err(err, "sandbox policy: variable name is not valid UTF-8");
			goto out;
		}
		json_array_append_new(env, s);
	}
	json_object_set(o, "binds", binds);
	json_object_set(o, "env", env);
	out = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (out == NULL)
		set_err(err, "sandbox policy: cannot encode");
out:
	json_decref(binds);
	json_decref(env);
	json_decref(o);
	return out;
}

static int
json_flag(json_t *obj, const char *key, bool *out, size_t idx, char **err)
{
	json_t *v = json_object_get(obj, key);

	*out = false;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_boolean(v)) {
		set_err(err, "sandbox policy: binds[%zu].%s must be true or false", idx, key);
		return -1;
	}
	*out = json_is_true(v);
	return 0;
}

int
sandbox_policy_from_json(struct sandbox_policy *p, const char *text, size_t len, char **err)
{
	struct sandbox_policy np;
	json_error_t jerr;
	json_t *root, *v;
	const char *fs;

	root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (root == NULL) {
		/* jansson quotes the input (a duplicate key, say): keep it one line. */
		char *why = text_escape(jerr.text, 200);
		set_err(err, "sandbox policy: line %d column %d: %s", jerr.line, jerr.column, why);
		free(why);
		return -1;
	}
	sandbox_policy_init(&np);
	if (!json_is_object(root)) {
		set_err(err, "sandbox policy: not a JSON object");
		goto fail;
	}
	v = json_object_get(root, "fs");
	fs = json_string_value(v);
	if (fs == NULL || (strcmp(fs, "rw") != 0 && strcmp(fs, "ro") != 0)) {
		set_err(err, "sandbox policy: \"fs\" must be \"rw\" or \"ro\"");
		goto fail;
	}
	np.fs_rw = strcmp(fs, "rw") == 0;
	v = json_object_get(root, "net");
	if (!json_is_boolean(v)) {
		set_err(err, "sandbox policy: \"net\" must be true or false");
		goto fail;
	}
	np.net = json_is_true(v);
	v = json_object_get(root, "net_allow");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > CONFIG_NET_MAX || np.net) {
			set_err(err, "sandbox policy: \"net_allow\" must be an array of at most %d "
				"entries, with \"net\" false", CONFIG_NET_MAX);
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);
			const char *entry = json_string_value(e);
			size_t before = np.net_list.n;

			if (entry == NULL || strlen(entry) != json_string_length(e) ||
			    config_net_entry(entry, &np.net_list) != 0 ||
			    (np.net_list.n > before && strcmp(np.net_list.v[before], entry) != 0)) {
				set_err(err, "sandbox policy: net_allow[%zu] is no allow entry", i);
				goto fail;
			}
		}
		np.net_allow = true;
	}
	v = json_object_get(root, "ptrace");
	if (v != NULL && !json_is_boolean(v)) {
		set_err(err, "sandbox policy: \"ptrace\" must be true or false");
		goto fail;
	}
	np.allow_ptrace = v != NULL && json_is_true(v);

	v = json_object_get(root, "binds");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > SANDBOX_MAX_BINDS) {
			set_err(err, "sandbox policy: \"binds\" must be an array of at most %d binds",
				SANDBOX_MAX_BINDS);
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *b = json_array_get(v, i), *jp = json_object_get(b, "path");
			const char *path = json_string_value(jp);
			bool w, s, pr, pj, st;

			if (!json_is_object(b) || path == NULL ||
			    strlen(path) != json_string_length(jp) ||
			    json_string_length(jp) >= PATH_MAX) {
				set_err(err, "sandbox policy: binds[%zu] needs a \"path\"", i);
				goto fail;
			}
			if (json_flag(b, "writable", &w, i, err) < 0 ||
			    json_flag(b, "seed", &s, i, err) < 0 ||
			    json_flag(b, "protect", &pr, i, err) < 0 ||
			    json_flag(b, "project", &pj, i, err) < 0 ||
			    json_flag(b, "state", &st, i, err) < 0)
				goto fail;
			if (pj && (path[0] == '/' || !rel_safe(path) || !pr)) {
				set_err(err, "sandbox policy: binds[%zu] is a project path: "
					"relative, without \"..\", and protected", i);
				goto fail;
			}
			if (!pj && path[0] != '/') {
				set_err(err, "sandbox policy: binds[%zu] needs an absolute \"path\"", i);
				goto fail;
			}
			sandbox_policy_add_bind(&np, path, (w ? HQT_BIND_RW : 0) |
							   (s ? HQT_BIND_SEED : 0) |
							   (pr ? HQT_BIND_PROTECT : 0) |
							   (pj ? HQT_BIND_PROJECT : 0) |
							   (st ? HQT_BIND_STATE : 0));
		}
	}

	v = json_object_get(root, "env");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_array(v) || json_array_size(v) > SANDBOX_MAX_ENV) {
			set_err(err, "sandbox policy: \"env\" must be an array of at most %d names",
				SANDBOX_MAX_ENV);
			goto fail;
		}
		for (size_t i = 0; i < json_array_size(v); i++) {
			json_t *e = json_array_get(v, i);
			const char *name = json_string_value(e);

			if (name == NULL || !env_name_valid(name, json_string_length(e)) ||
			    strlen(name) != json_string_length(e)) {
				set_err(err, "sandbox policy: env[%zu] is not a variable name", i);
				goto fail;
			}
			if (strv_find(&np.env_names, name) < 0)
				strv_push(&np.env_names, name);
		}
	}
	json_decref(root);
	sandbox_policy_free(p);
	*p = np;
	return 0;
fail:
	json_decref(root);
	sandbox_policy_free(&np);
	return -1;
}

bool
rel_safe(const char *rel)
{
	const char *s = rel;

	while (*s != '\0') {
		size_t n = strcspn(s, "/");
		if (n == 0 || (n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
		if (*s == '/')
			s++;
	}
	return *rel != '\0';
}
