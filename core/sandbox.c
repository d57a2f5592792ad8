/* sandbox.c: policy -> bwrap argv, the private home, the availability probe,
 * and the exec step of a sandboxed session (SPEC §8). */
#include "sandbox.h"
#include "seccomp-filter.h"
#include "text.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* The policy and its JSON                                                  */

void
sandbox_policy_init(struct sandbox_policy *p)
{
	p->fs_rw = true;
	p->net = true;
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
	sandbox_policy_init(p);
}

static bool rel_safe(const char *rel);

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
	p->allow_ptrace = d->allow_ptrace;
	for (size_t i = 0; i < d->ro_binds.n; i++)
		sandbox_policy_add_bind(p, d->ro_binds.v[i], HQT_BIND_RO);
	for (size_t i = 0; i < d->rw_binds.n; i++)
		sandbox_policy_add_bind(p, d->rw_binds.v[i], HQT_BIND_RW);
	for (size_t i = 0; i < d->env.n; i++)
		if (strv_find(&p->env_names, d->env.v[i]) < 0)
			strv_push(&p->env_names, d->env.v[i]);
	/* The plugin's binds are added at every start instead (session.c
	 * session_add_plugin_binds): they follow the harness's settings as
	 * they are then, and a stored writable bind of the harness's state
	 * would outlive the design that made it. */
}

static bool
env_name_valid(const char *s, size_t n)
{
	if (n == 0 || n > 255 || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

char *
sandbox_policy_to_json(const struct sandbox_policy *p, char **err)
{
	json_t *o = json_object(), *binds = json_array(), *env = json_array();
	char *out = NULL;

	json_object_set_new(o, "fs", json_string(p->fs_rw ? "rw" : "ro"));
	json_object_set_new(o, "net", json_boolean(p->net));
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

/* ------------------------------------------------------------------------ */
/* Paths                                                                    */

/* path is dir or lies below it; both absolute and normalised. */
static bool
path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

static char *
path_join(const char *dir, const char *name)
{
	return strcmp(dir, "/") == 0 ? xasprintf("/%s", name) : xasprintf("%s/%s", dir, name);
}

static char *
path_dirname(const char *p)
{
	const char *s = strrchr(p, '/');

	if (s == NULL || s == p)
		return xstrdup("/");
	return xstrndup(p, (size_t)(s - p));
}

static const char *
path_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL ? s + 1 : p;
}

static int
path_depth(const char *p)
{
	int d = 0;

	for (; *p; p++)
		d += *p == '/';
	return d;
}

/*
 * realpath(p); for a path that does not exist (yet), the realpath of its
 * deepest existing ancestor with the missing names appended, so the result
 * is the same before and after sandbox_prepare creates it.  NULL on error.
 */
static char *
resolve_path(const char *p)
{
	char *r, *copy, *parent, *rp;
	const char *base;
	size_t n;

	if (p == NULL || p[0] != '/')
		return NULL;
	r = realpath(p, NULL);
	if (r != NULL)
		return r;
	if (errno != ENOENT)
		return NULL;
	copy = xstrdup(p);
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	base = path_basename(copy);
	if (*base == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
		free(copy);
		return NULL;
	}
	parent = path_dirname(copy);
	rp = resolve_path(parent);
	r = rp != NULL ? path_join(rp, base) : NULL;
	free(rp);
	free(parent);
	free(copy);
	return r;
}

/*
 * Resolve an absolute path as the kernel would, recording every symlink met
 * on the way (its location, the directories before it resolved, and its text)
 * in at/target so the sandbox can recreate them.  Returns the real path, or
 * NULL with errno (ENOENT when something is missing).
 */
static char *
walk_links(const char *path, struct strv *at, struct strv *target)
{
	char *todo = xstrdup(path), *cur = xstrdup(""), *cand = NULL, buf[PATH_MAX];
	size_t pos = 0;
	int hops = 0, e;

	for (;;) {
		size_t end;
		char *comp;
		struct stat st;

		while (todo[pos] == '/')
			pos++;
		if (todo[pos] == '\0')
			break;
		for (end = pos; todo[end] != '\0' && todo[end] != '/'; end++)
			;
		comp = xstrndup(todo + pos, end - pos);
		pos = end;
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			char *s = strrchr(cur, '/');
			if (comp[1] == '.' && s != NULL)
				*s = '\0';
			free(comp);
			continue;
		}
		cand = xasprintf("%s/%s", cur, comp);
		free(comp);
		if (lstat(cand, &st) != 0)
			goto fail;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n;
			char *rest;

			if (++hops > 40) {
				errno = ELOOP;
				goto fail;
			}
			n = readlink(cand, buf, sizeof buf - 1);
			if (n <= 0) {
				if (n == 0)
					errno = EINVAL;
				goto fail;
			}
			buf[n] = '\0';
			if (at != NULL && strv_find(at, cand) < 0) {
				strv_push(at, cand);
				strv_push(target, buf);
			}
			rest = xasprintf("%s/%s", buf, todo + pos);
			free(todo);
			todo = rest;
			pos = 0;
			if (buf[0] == '/')
				cur[0] = '\0';
			free(cand);
			cand = NULL;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			size_t k = pos;
			while (todo[k] == '/')
				k++;
			if (todo[k] != '\0') {
				errno = ENOTDIR;
				goto fail;
			}
		}
		free(cur);
		cur = cand;
		cand = NULL;
	}
	free(todo);
	if (cur[0] == '\0') {
		free(cur);
		return xstrdup("/");
	}
	return cur;
fail:
	e = errno;
	free(cand);
	free(cur);
	free(todo);
	errno = e;
	return NULL;
}

/* ------------------------------------------------------------------------ */
/* The plan: every mount, link and file the sandbox needs, computed once and  */
/* shared by the argv builder and sandbox_prepare so they always agree.       */

struct mnt {
	char *path;     /* destination, and the source unless src is set: a real path */
	char *src;      /* a private state directory bound at path, or NULL */
	bool rw;
	bool project;
	int depth;
	size_t order;
};

struct plan {
	char *home;              /* real path of $HOME: where the private home goes */
	char *priv;              /* the private home, resolved */
	char *root;              /* the private state root: priv's parent */
	char *project;           /* real */
	char *cwd;               /* real */
	struct mnt *mnts;        /* layered binds and the project, in mount order */
	size_t nmnts;
	struct strv pins;        /* directories bound onto themselves, see pin_parents */
	struct strv ro_top;      /* re-bound read-only on top, in order */
	struct strv mk_dirs;     /* created by prepare: empty hooks dirs, PROTECT dirs */
	struct strv mk_files;    /* created by prepare: PROTECT files */
	struct strv link_at, link_to;  /* every symlink met on the way to a path */
	struct strv sym_at, sym_to;    /* recreated with --symlink */
	struct strv home_at, home_to;  /* recreated in the private home (at: relative) */
	struct strv mountpoints; /* relative to root (home/..., root/...): made by prepare */
	struct strv state_mk;    /* relative to root: private state directories to make */
	struct strv seed_src, seed_rel;
	char *resolv_dir;        /* the directory /etc/resolv.conf points into, or NULL */
	char *refused;           /* why the plan cannot hold, found on the way, or NULL */
};

static void
plan_free(struct plan *pl)
{
	free(pl->home);
	free(pl->priv);
	free(pl->root);
	free(pl->project);
	free(pl->cwd);
	for (size_t i = 0; i < pl->nmnts; i++) {
		free(pl->mnts[i].path);
		free(pl->mnts[i].src);
	}
	free(pl->mnts);
	strv_clear(&pl->pins);
	strv_clear(&pl->ro_top);
	strv_clear(&pl->mk_dirs);
	strv_clear(&pl->mk_files);
	strv_clear(&pl->link_at);
	strv_clear(&pl->link_to);
	strv_clear(&pl->sym_at);
	strv_clear(&pl->sym_to);
	strv_clear(&pl->home_at);
	strv_clear(&pl->home_to);
	strv_clear(&pl->mountpoints);
	strv_clear(&pl->state_mk);
	strv_clear(&pl->seed_src);
	strv_clear(&pl->seed_rel);
	free(pl->resolv_dir);
	free(pl->refused);
	memset(pl, 0, sizeof *pl);
}

/* Top-level directories that are links into /usr on merged-/usr systems
 * and real directories elsewhere; either way they look as on the host. */
static const char *const sys_top[] = { "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32" };
/*
 * Visible whole inside.  /etc is not: only the names in etc_allow are
 * (push_etc), and /opt only as far as a harness's install tree lies in it.
 */
static bool
is_system_path(const char *p)
{
	struct stat st;

	if (path_under(p, "/usr"))
		return true;
	for (size_t i = 0; i < ARRAY_SIZE(sys_top); i++)
		if (path_under(p, sys_top[i]) && lstat(sys_top[i], &st) == 0)
			return true;
	return false;
}

static void
plan_add_mnt(struct plan *pl, char *path, bool rw, bool project)
{
	pl->mnts = xreallocarray(pl->mnts, pl->nmnts + 1, sizeof *pl->mnts);
	pl->mnts[pl->nmnts] = (struct mnt){ path, NULL, rw, project, path_depth(path), pl->nmnts };
	pl->nmnts++;
}

static int
mnt_cmp(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;

	/* Shallow before deep so nested binds land on top of their parents; on
	 * one path the project's own mode wins; otherwise keep the given order. */
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	if (strcmp(x->path, y->path) == 0 && x->project != y->project)
		return x->project ? 1 : -1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* The layered bind (or the project) that shows path, or NULL for the
 * private home and the sandbox's own tmpfs. */
static const struct mnt *
plan_cover(const struct plan *pl, const char *path)
{
	for (size_t i = pl->nmnts; i-- > 0;)
		if (path_under(path, pl->mnts[i].path))
			return &pl->mnts[i];
	return NULL;
}

static void
push_unique(struct strv *sv, const char *s)
{
	if (strv_find(sv, s) < 0)
		strv_push(sv, s);
}

/*
 * A read-only re-bind inside a writable bind only holds if nothing above it
 * can be renamed away: `mv .git .git.old; mkdir -p .git/hooks` would plant a
 * fresh hooks directory beside the protected one.  A mount point cannot be
 * renamed or removed (EBUSY), so bind every directory between the writable
 * bind and the protected path onto itself.
 */
static void
pin_parents(struct plan *pl, const char *path)
{
	char *dir = path_dirname(path);
	const struct mnt *m = plan_cover(pl, dir);

	if (m != NULL && m->rw) {
		size_t base = strlen(m->path);
		for (char *s = dir + base; *s != '\0'; s++) {
			if (*s != '/' || s == dir + base)
				continue;
			*s = '\0';
			if (strcmp(dir, m->path) != 0)
				push_unique(&pl->pins, dir);
			*s = '/';
		}
		if (strcmp(dir, m->path) != 0)
			push_unique(&pl->pins, dir);
	}
	free(dir);
}

static void
protect_path(struct plan *pl, const char *path)
{
	pin_parents(pl, path);
	push_unique(&pl->ro_top, path);
}

static void __attribute__((format(printf, 2, 3)))
push_unique_f(struct strv *sv, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	push_unique(sv, s);
	free(s);
}

/*
 * A harness's state directory (HQT_BIND_STATE): the session's own, never
 * the host's.  Under $HOME it is a directory of the private home; elsewhere
 * (a CODEX_HOME outside it) a directory of the private state bound there.
 * Either way prepare makes it, and the host's directory is not shown.
 */
static int
plan_state(struct plan *pl, const char *path, char **err)
{
	char *real = walk_links(path, &pl->link_at, &pl->link_to);

	if (real == NULL)
		real = resolve_path(path);
	bool in_home = real != NULL && path_under(real, pl->home) && strcmp(real, pl->home) != 0;

	if (real == NULL || path_under(pl->home, real) ||
	    (!in_home && (is_system_path(real) || path_under(real, "/etc") ||
			  path_under(real, "/proc") || path_under(real, "/dev"))) ||
	    path_under(real, pl->project) || path_under(pl->project, real) ||
	    path_under(real, pl->root) || path_under(pl->root, real)) {
		set_err(err, "sandbox: state directory '%s' cannot be made private (it holds "
			"or lies in the home, the project or a system directory)", path);
		free(real);
		return -1;
	}
	if (in_home) {
		push_unique_f(&pl->state_mk, "%s%s", path_basename(pl->priv), real + strlen(pl->home));
		free(real);
		return 0;
	}
	plan_add_mnt(pl, real, true, false);
	pl->mnts[pl->nmnts - 1].src = xasprintf("%s/root%s", pl->root, real);
	push_unique_f(&pl->state_mk, "root%s", real);
	return 0;
}

struct hooks_path {
	char *value;
};

/* inih reads hqt.ini; git's config is close enough to find one key in it. */
static int
git_config_handler(void *user, const char *section, const char *name, const char *value)
{
	struct hooks_path *h = user;

	if (strcasecmp(section, "core") == 0 && strcasecmp(name, "hookspath") == 0 &&
	    value != NULL) {
		size_t n = strlen(value);
		free(h->value);
		if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
			h->value = xstrndup(value + 1, n - 2);
		else
			h->value = xstrdup(value);
	}
	return 1;
}

static char *
git_hooks_path(const char *config, const char *worktree, const char *home)
{
	struct hooks_path h = { NULL };
	char *out = NULL;

	if (ini_parse(config, git_config_handler, &h) < 0 || h.value == NULL ||
	    h.value[0] == '\0')
		goto done;
	if (h.value[0] == '/')
		out = xstrdup(h.value);
	else if (h.value[0] == '~' && (h.value[1] == '/' || h.value[1] == '\0'))
		out = xasprintf("%s%s", home, h.value + 1);
	else
		out = path_join(worktree, h.value);
done:
	free(h.value);
	return out;
}

/* Read a small "gitdir: X" / commondir file; the path it names, resolved
 * against base, or NULL. */
static char *
git_pointer(const char *file, const char *prefix, const char *base)
{
	char *text = read_file(file, 4096, NULL), *line, *out = NULL;
	size_t n = strlen(prefix);

	if (text == NULL)
		return NULL;
	line = trim(text);
	if (strncmp(line, prefix, n) == 0) {
		char *v = trim(line + n);
		if (*v != '\0') {
			char *abs = v[0] == '/' ? xstrdup(v) : path_join(base, v);
			out = realpath(abs, NULL);
			free(abs);
		}
	}
	free(text);
	return out;
}

static void
plan_git(struct plan *pl, bool fs_rw, const char *home)
{
	char *dotgit = path_join(pl->project, ".git");
	struct stat st;

	if (lstat(dotgit, &st) != 0) {
		/*
		 * No repository here: a session must not make one (`git init`
		 * with a core.fsmonitor that the user's next `git status` runs).
		 * An empty directory is no repository to git, which looks
		 * further up past it; read-only, it cannot become one.  Where we
		 * cannot make it, neither can the session.
		 */
		if (fs_rw && errno == ENOENT && access(pl->project, W_OK) == 0) {
			push_unique(&pl->mk_dirs, dotgit);
			protect_path(pl, dotgit);
		}
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		if (fs_rw) {
			char *cfg = path_join(dotgit, "config");
			char *hp = git_hooks_path(cfg, pl->project, home);
			/*
			 * The whole git directory, read-only: everything git
			 * reads as configuration, hooks or the place of other
			 * git directories lives in it (config, commondir,
			 * worktrees/, modules/, info/, hooks/, the index with
			 * its skip-worktree bits), and a list of those names
			 * would miss the next one.  Commits happen outside.
			 */
			protect_path(pl, dotgit);
			if (hp != NULL) {
				char *r = resolve_path(hp);
				if (r != NULL && path_under(r, pl->project) && !path_under(pl->project, r)) {
					if (access(r, F_OK) != 0)
						push_unique(&pl->mk_dirs, r);
					protect_path(pl, r);
				}
				free(r);
			}
			free(hp);
			free(cfg);
		}
	} else if (S_ISREG(st.st_mode)) {
		/* A linked worktree or a submodule: its git directory lies
		 * elsewhere.  Bind it (and the common directory of a worktree)
		 * read-only so git can read but nothing can be planted, and
		 * keep the .git file itself from being rewritten. */
		char *gd = git_pointer(dotgit, "gitdir:", pl->project);
		if (fs_rw)
			protect_path(pl, dotgit);
		if (gd != NULL) {
			char *cf = path_join(gd, "commondir");
			char *common = git_pointer(cf, "", gd);
			const char *top = common != NULL && path_under(gd, common) ? common : gd;

			if (!path_under(pl->project, top) && !path_under(pl->home, top) &&
			    strcmp(top, "/") != 0) {
				push_unique(&pl->ro_top, top);
				if (top != gd && !path_under(gd, top))
					push_unique(&pl->ro_top, gd);
			}
			free(common);
			free(cf);
		}
		free(gd);
	} else if (S_ISLNK(st.st_mode)) {
		char *r = realpath(dotgit, NULL);

		if (fs_rw && pl->refused == NULL)
			pl->refused = xasprintf("sandbox: '%s' is a symbolic link in the writable "
						"project, so the session could put a git directory "
						"of its own, with hooks, in its place: make it a real "
						"directory, or use --fs ro", dotgit);
		if (r != NULL && !path_under(pl->project, r) && !path_under(pl->home, r))
			push_unique(&pl->ro_top, r);
		free(r);
	}
out:
	free(dotgit);
}

/* Home-level directories shared by many programs: never an install prefix. */
static const char *const shared_home_dirs[] = {
	".local", ".local/share", ".local/lib", ".local/state", ".config", ".cache",
};

static bool
prefix_ok(const struct plan *pl, const char *d)
{
	if (strcmp(d, "/") == 0 || path_under(pl->home, d) || path_under(pl->priv, d) ||
	    path_under(pl->project, d))
		return false;
	for (size_t i = 0; i < pl->nmnts; i++)
		if (pl->mnts[i].rw && path_under(pl->mnts[i].path, d))
			return false;
	for (size_t i = 0; i < ARRAY_SIZE(shared_home_dirs); i++) {
		char *s = path_join(pl->home, shared_home_dirs[i]);
		bool same = strcmp(s, d) == 0;
		free(s);
		if (same)
			return false;
	}
	return true;
}

/*
 * The harness's install prefix, read-only: for <prefix>/bin/x -> ../lib/...
 * (npm, nvm) the prefix, so its node and modules come along; else the
 * directory holding the real binary (~/.local/share/claude/versions); the
 * file alone when that directory is too wide.
 */
static int
plan_exe(struct plan *pl, const char *exe, char **err)
{
	char *real, *dir, *rdir, *cand = NULL, *prefix = NULL;
	struct stat st;
	bool is_link;

	if (exe[0] != '/') {
		set_err(err, "harness executable '%s' is not an absolute path", exe);
		return -1;
	}
	real = walk_links(exe, &pl->link_at, &pl->link_to);
	if (real == NULL) {
		set_err(err, "harness executable '%s': %s", exe, strerror(errno));
		return -1;
	}
	is_link = lstat(exe, &st) == 0 && S_ISLNK(st.st_mode);
	dir = path_dirname(exe);
	rdir = realpath(dir, NULL);
	if (is_link && rdir != NULL && strcmp(path_basename(rdir), "bin") == 0) {
		cand = path_dirname(rdir);
		if (path_under(real, cand) && prefix_ok(pl, cand))
			prefix = cand, cand = NULL;
	}
	if (prefix == NULL) {
		/* An npm package (a local node_modules/.bin link, say): its
		 * native binary is a sibling package, so the whole tree. */
		const char *nm = strstr(real, "/node_modules/");

		free(cand);
		cand = nm != NULL ? xstrndup(real, (size_t)(nm - real) + strlen("/node_modules"))
				  : NULL;
		if (cand != NULL && prefix_ok(pl, cand))
			prefix = cand, cand = NULL;
	}
	if (prefix == NULL) {
		free(cand);
		cand = path_dirname(real);
		prefix = prefix_ok(pl, cand) ? cand : xstrdup(real);
		if (prefix != cand)
			free(cand);
		cand = NULL;
	}
	if (!is_system_path(prefix))
		protect_path(pl, prefix);
	free(prefix);
	free(rdir);
	free(dir);
	free(real);
	return 0;
}

static char *
rel_to_home(const struct plan *pl, const char *literal_home, const char *path)
{
	const char *homes[] = { literal_home, pl->home };

	for (size_t i = 0; i < ARRAY_SIZE(homes); i++) {
		size_t n = strlen(homes[i]);
		if (n > 1 && strncmp(path, homes[i], n) == 0 && path[n] == '/' && path[n + 1])
			return xstrdup(path + n + 1);
	}
	return NULL;
}

static bool
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

/*
 * A project name that a harness run later outside would obey (HQT_BIND_PROJECT):
 * read-only inside, with every directory above it pinned.  Walked one
 * component at a time without following links: a link could point
 * anywhere, and a session could swap it for a directory of its own, so one
 * on the way is refused.  The first missing component of a directory name
 * is created (empty) with the rest, where the session could create it; a
 * missing file stays missing.  A file
 * where a directory belongs is itself made read-only, so nothing can
 * replace it.
 */
static int
plan_project_file(struct plan *pl, const char *rel, char **err)
{
	bool want_dir = rel[strlen(rel) - 1] == '/', missing = false;
	char *path = xstrdup(pl->project);
	const char *s = rel;
	int rc = 0;

	while (*s != '\0') {
		size_t len = strcspn(s, "/");
		char *comp = xstrndup(s, len), *next = path_join(path, comp);
		struct stat st;

		free(comp);
		free(path);
		path = next;
		s += len;
		if (*s == '/')
			s++;
		if (missing) {
			push_unique(&pl->mk_dirs, path); /* parents first */
			continue;
		}
		if (lstat(path, &st) != 0) {
			char *parent = path_dirname(path);
			/* Where we cannot make it, neither can the session (the
			 * same uid, no capabilities): nothing to protect.  A
			 * read-only project mount, say. */
			bool can = errno == ENOENT && want_dir && access(parent, W_OK) == 0;

			free(parent);
			if (!can)
				goto out;
			missing = true;
			push_unique(&pl->mk_dirs, path);
			continue;
		}
		if (S_ISLNK(st.st_mode)) {
			set_err(err, "sandbox: '%s' is a symbolic link, which a writable session "
				"could replace with settings of its own: make it a real %s, or "
				"use --fs ro", path, want_dir || *s != '\0' ? "directory" : "file");
			rc = -1;
			goto out;
		}
		if (*s == '\0' || !S_ISDIR(st.st_mode))
			break;
	}
	protect_path(pl, path);
out:
	free(path);
	return rc;
}

static int
plan_build(const struct sandbox_input *in, struct plan *pl, char **err)
{
	const struct sandbox_policy *pol = in->policy;
	struct stat st;

	memset(pl, 0, sizeof *pl);
	if (pol == NULL || in->argv == NULL || in->argv[0] == NULL) {
		set_err(err, "sandbox: no policy or no command");
		return -1;
	}
	if (in->project == NULL || in->project[0] != '/' || in->home == NULL ||
	    in->home[0] != '/' || in->private_home == NULL || in->private_home[0] != '/') {
		set_err(err, "sandbox: the project, home and private home must be absolute paths");
		return -1;
	}

	pl->home = walk_links(in->home, &pl->link_at, &pl->link_to);
	if (pl->home == NULL)
		pl->home = resolve_path(in->home);
	pl->priv = resolve_path(in->private_home);
	if (pl->home == NULL || pl->priv == NULL || strcmp(pl->home, "/") == 0) {
		set_err(err, "sandbox: cannot resolve the home directory '%s' or the private home '%s'",
			in->home, in->private_home);
		goto fail;
	}
	if (path_under(pl->home, pl->priv)) {
		set_err(err, "sandbox: the private home '%s' contains the home directory", pl->priv);
		goto fail;
	}
	pl->root = path_dirname(pl->priv);
	if (strcmp(pl->root, "/") == 0 || path_under(pl->home, pl->root)) {
		set_err(err, "sandbox: the private state '%s' contains the home directory",
			pl->root);
		goto fail;
	}

	pl->project = walk_links(in->project, &pl->link_at, &pl->link_to);
	if (pl->project == NULL || stat(pl->project, &st) != 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, "sandbox: project directory '%s': %s", in->project,
			pl->project == NULL ? strerror(errno) : "not a directory");
		goto fail;
	}
	if (strcmp(pl->project, "/") == 0 || path_under(pl->home, pl->project)) {
		set_err(err, "sandbox: the project '%s' contains the home directory; binding it "
			"would expose ~/.ssh and every other dotfile", in->project);
		goto fail;
	}
	if (in->cwd != NULL && strcmp(in->cwd, in->project) != 0) {
		pl->cwd = in->cwd[0] == '/' ? walk_links(in->cwd, &pl->link_at, &pl->link_to) : NULL;
		if (pl->cwd == NULL) {
			set_err(err, "sandbox: working directory '%s' does not exist", in->cwd);
			goto fail;
		}
	} else {
		pl->cwd = xstrdup(pl->project);
	}

	/* Layered binds: the plugin's and [sandbox] ro_binds/rw_binds. */
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];
		char *real;

		if (b->path != NULL && (b->flags & HQT_BIND_PROJECT))
			continue;
		if (b->path == NULL || b->path[0] != '/') {
			set_err(err, "sandbox: bind '%s' is not an absolute path",
				b->path != NULL ? b->path : "");
			goto fail;
		}
		if (b->flags & HQT_BIND_SEED)
			continue;
		if (b->flags & HQT_BIND_STATE) {
			if (plan_state(pl, b->path, err) < 0)
				goto fail;
			continue;
		}
		{
			/* "~/.claude/agents/" names the directory */
			size_t n = strlen(b->path);
			char *trimmed = xstrndup(b->path, n);

			while (n > 1 && trimmed[n - 1] == '/')
				trimmed[--n] = '\0';
			real = walk_links(trimmed, &pl->link_at, &pl->link_to);
			free(trimmed);
		}
		if (real == NULL)
			continue; /* a missing source is skipped */
		if (strcmp(real, "/") == 0 || path_under(pl->home, real) ||
		    path_under(pl->root, real) || path_under(real, pl->root)) {
			set_err(err, "sandbox: bind '%s' would expose the whole home directory "
				"or filesystem", b->path);
			free(real);
			goto fail;
		}
		if ((b->flags & HQT_BIND_RW) && (path_under("/usr", real) || path_under("/etc", real))) {
			set_err(err, "sandbox: writable bind '%s' would make the system writable",
				b->path);
			free(real);
			goto fail;
		}
		/* PROTECT outside the project: the host's file, read-only. */
		plan_add_mnt(pl, real, (b->flags & (HQT_BIND_RW | HQT_BIND_PROTECT)) == HQT_BIND_RW,
			     false);
	}
	plan_add_mnt(pl, xstrdup(pl->project), pol->fs_rw, true);
	qsort(pl->mnts, pl->nmnts, sizeof *pl->mnts, mnt_cmp);

	/* Read-only on top: the git directory, then every harness's project files. */
	plan_git(pl, pol->fs_rw, in->home);
	if (pl->refused != NULL) {
		set_err(err, "%s", pl->refused);
		goto fail;
	}
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];

		if ((b->flags & HQT_BIND_PROJECT) && pol->fs_rw &&
		    plan_project_file(pl, b->path, err) < 0)
			goto fail;
	}
	if (in->exe != NULL && plan_exe(pl, in->exe, err) < 0)
		goto fail;

	/* SEED files: copied into the private home, never bound. */
	for (size_t i = 0; i < pol->nbinds; i++) {
		const struct bind *b = &pol->binds[i];
		char *rel, *src;

		if (!(b->flags & HQT_BIND_SEED))
			continue;
		rel = rel_to_home(pl, in->home, b->path);
		if (rel == NULL || !rel_safe(rel)) {
			set_err(err, "sandbox: seed file '%s' is not under the home directory", b->path);
			free(rel);
			goto fail;
		}
		src = realpath(b->path, NULL);
		if (src != NULL && stat(src, &st) == 0 && S_ISREG(st.st_mode)) {
			strv_push(&pl->seed_src, src);
			strv_push(&pl->seed_rel, rel);
		}
		free(src);
		free(rel);
	}

	/* DNS where /etc/resolv.conf links out of /etc. */
	if (pol->net && lstat("/etc/resolv.conf", &st) == 0 && S_ISLNK(st.st_mode)) {
		char *r = realpath("/etc/resolv.conf", NULL);
		if (r != NULL && !is_system_path(r)) {
			char *d = path_dirname(r);
			if (strcmp(d, "/") != 0 && !path_under(pl->home, d) && !path_under(d, pl->home))
				pl->resolv_dir = d;
			else
				free(d);
		}
		free(r);
	}

	/*
	 * Mount points that fall in the private state are created by prepare,
	 * walking it without following symlinks: a session can write there,
	 * and bwrap must never be sent through a link it planted.
	 */
	for (size_t i = 0; i < pl->nmnts + pl->ro_top.n; i++) {
		const char *p = i < pl->nmnts ? pl->mnts[i].path : pl->ro_top.v[i - pl->nmnts];
		const struct mnt *cover = NULL;

		for (size_t j = 0; j < pl->nmnts; j++)
			if (strcmp(pl->mnts[j].path, p) != 0 && path_under(p, pl->mnts[j].path))
				cover = &pl->mnts[j];
		if (cover != NULL && cover->src != NULL)
			push_unique_f(&pl->mountpoints, "%s%s", cover->src + strlen(pl->root) + 1,
				      p + strlen(cover->path));
		else if (cover == NULL && path_under(p, pl->home) && strcmp(p, pl->home) != 0)
			push_unique_f(&pl->mountpoints, "%s%s", path_basename(pl->priv),
				      p + strlen(pl->home));
	}

	/* Symlinks on the way to anything bound: recreate those not visible. */
	for (size_t i = 0; i < pl->link_at.n; i++) {
		const char *at = pl->link_at.v[i];
		bool visible = is_system_path(at) || plan_cover(pl, at) != NULL;

		for (size_t j = 0; !visible && j < pl->ro_top.n; j++)
			visible = path_under(at, pl->ro_top.v[j]);
		if (visible)
			continue;
		if (path_under(at, pl->home) && strcmp(at, pl->home) != 0) {
			strv_push(&pl->home_at, at + strlen(pl->home) + 1);
			strv_push(&pl->home_to, pl->link_to.v[i]);
		} else if (!path_under(at, "/proc") && !path_under(at, "/dev")) {
			strv_push(&pl->sym_at, at);
			strv_push(&pl->sym_to, pl->link_to.v[i]);
		}
	}
	return 0;
fail:
	plan_free(pl);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* The argv                                                                 */

static const char *const env_base[] = {
	"PATH", "USER", "LOGNAME", "SHELL", "TERM", "COLORTERM", "LANG", "LANGUAGE",
};

/* Never passed in, whoever asks: host IPC endpoints and loader hooks. HOME
 * and TMPDIR are set by hqt. */
static const char *const env_deny[] = {
	"HOME", "TMPDIR", "TMUX", "TMUX_PANE", "TMUX_TMPDIR", "DISPLAY",
	"WAYLAND_DISPLAY", "XAUTHORITY", "DBUS_SESSION_BUS_ADDRESS",
	"DBUS_SYSTEM_BUS_ADDRESS", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"XDG_RUNTIME_DIR", "DOCKER_HOST", "LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT",
	"BASH_ENV", "ENV", "PROMPT_COMMAND",
};

static bool
env_denied(const char *name, size_t n)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_deny); i++)
		if (strlen(env_deny[i]) == n && strncmp(env_deny[i], name, n) == 0)
			return true;
	return false;
}

static const char *
env_lookup(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (; env != NULL && *env != NULL; env++)
		if (strncmp(*env, name, n) == 0 && (*env)[n] == '=')
			return *env + n + 1;
	return NULL;
}

struct envset {
	struct strv names, values;
};

static void
envset_put(struct envset *e, const char *name, size_t n, const char *value)
{
	char *nm = xstrndup(name, n);
	int i = strv_find(&e->names, nm);

	if (i >= 0) {
		free(e->values.v[i]);
		e->values.v[i] = xstrdup(value);
		free(nm);
	} else {
		strv_take(&e->names, nm);
		strv_push(&e->values, value);
	}
}

static int
build_env(const struct sandbox_input *in, struct envset *e, char **err)
{
	const char *v;

	envset_put(e, "HOME", 4, in->home);
	envset_put(e, "TMPDIR", 6, "/tmp");
	for (size_t i = 0; i < ARRAY_SIZE(env_base); i++) {
		v = env_lookup(in->host_env, env_base[i]);
		if (v != NULL)
			envset_put(e, env_base[i], strlen(env_base[i]), v);
		else if (strcmp(env_base[i], "PATH") == 0)
			envset_put(e, "PATH", 4, "/usr/local/bin:/usr/bin:/bin");
	}
	for (char *const *p = in->host_env; p != NULL && *p != NULL; p++) {
		const char *eq = strchr(*p, '=');
		if (eq != NULL && strncmp(*p, "LC_", 3) == 0 &&
		    env_name_valid(*p, (size_t)(eq - *p)))
			envset_put(e, *p, (size_t)(eq - *p), eq + 1);
	}
	for (size_t i = 0; i < in->policy->env_names.n; i++) {
		const char *name = in->policy->env_names.v[i];
		size_t n = strlen(name);
		if (!env_name_valid(name, n) || env_denied(name, n))
			continue;
		v = env_lookup(in->host_env, name);
		if (v != NULL)
			envset_put(e, name, n, v);
	}
	for (char *const *p = in->env_add; p != NULL && *p != NULL; p++) {
		const char *eq = strchr(*p, '=');
		if (eq == NULL || !env_name_valid(*p, (size_t)(eq - *p))) {
			set_err(err, "sandbox: environment entry '%s' is not NAME=VALUE", *p);
			return -1;
		}
		if (!env_denied(*p, (size_t)(eq - *p)))
			envset_put(e, *p, (size_t)(eq - *p), eq + 1);
	}
	return 0;
}

static void
push_isolation(struct strv *av, unsigned features, bool net)
{
	strv_push(av, "--unshare-user");
	strv_push(av, "--disable-userns");
	strv_push(av, "--unshare-pid");
	strv_push(av, "--unshare-ipc");
	strv_push(av, "--unshare-uts");
	if (features & SANDBOX_F_UNSHARE_CGROUP_TRY)
		strv_push(av, "--unshare-cgroup-try");
	if (!net)
		strv_push(av, "--unshare-net");
	strv_push(av, "--die-with-parent");
	strv_push(av, "--cap-drop");
	strv_push(av, "ALL");
}

static void
push3(struct strv *av, const char *a, const char *b, const char *c)
{
	strv_push(av, a);
	strv_push(av, b);
	if (c != NULL)
		strv_push(av, c);
}

/*
 * /etc by allowlist (SPEC §8.1): what programs need to resolve names, speak
 * TLS, know users, time and locale, and load libraries.  Nothing else of
 * /etc is there: a session of root maps to the owner of /etc/shadow, the
 * ssh host keys and /etc/ssl/private, and a mask over a list of what to
 * hide would miss what the next package installs.
 */
static const char *const etc_allow[] = {
	"hosts", "host.conf", "hostname", "resolv.conf", "nsswitch.conf", "gai.conf",
	"services", "protocols", "networks", "passwd", "group", "shells",
	"ssl", "ca-certificates", "ca-certificates.conf", "pki", "crypto-policies",
	"localtime", "timezone", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
	"alternatives", "locale.alias", "locale.conf", "default", "mime.types", "magic",
	"inputrc", "terminfo", "bash.bashrc", "profile", "environment", "gitconfig",
	"os-release", "lsb-release", "debian_version", "npmrc", "nodejs",
};

/* Entries looked at in all of /etc's allowed trees; past it, fail closed. */
#define ETC_BUDGET 20000
#define ETC_DEPTH  8

/*
 * Whether every entry under dir (an open directory) is for all to read:
 * files o+r, directories o+rx; links count as readable (their targets are
 * checked where they are bound).  -1 when the budget ran out.
 */
static int
etc_all_readable(int dfd, int depth, int *budget)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	int ok = 1;

	if (d == NULL) {
		close(dfd);
		return 0;
	}
	while (ok == 1 && (de = readdir(d)) != NULL) {
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (--*budget < 0) {
			ok = -1;
			break;
		}
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			ok = 0;
		else if (S_ISLNK(st.st_mode))
			continue;
		else if (S_ISDIR(st.st_mode)) {
			int sub;

			if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) ||
			    depth >= ETC_DEPTH)
				ok = 0;
			else if ((sub = openat(dirfd(d), de->d_name,
					       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
				ok = 0;
			else
				ok = etc_all_readable(sub, depth + 1, budget);
		} else if (!S_ISREG(st.st_mode) || !(st.st_mode & S_IROTH)) {
			ok = 0;
		}
	}
	closedir(d);
	return ok;
}

/*
 * Show path (under /etc) inside: a link as a link, a file for all to read
 * bound read-only, a directory whole when all of it is for all to read,
 * else made empty with its readable entries shown one by one.  -1 when the
 * budget ran out (the caller fails closed).
 */
static int
push_etc_entry(struct strv *av, const char *path, int depth, int *budget)
{
	struct stat st;
	char buf[PATH_MAX];
	int fd, all;

	if (--*budget < 0)
		return -1;
	if (lstat(path, &st) != 0)
		return 0;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(path, buf, sizeof buf - 1);
		if (n > 0) {
			buf[n] = '\0';
			push3(av, "--symlink", buf, path);
		}
		return 0;
	}
	if (S_ISREG(st.st_mode)) {
		if (st.st_mode & S_IROTH)
			push3(av, "--ro-bind", path, path);
		return 0;
	}
	if (!S_ISDIR(st.st_mode) || (st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH) ||
	    depth > ETC_DEPTH)
		return 0;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	all = etc_all_readable(fd, depth + 1, budget);
	if (all < 0)
		return -1;
	if (all == 1) {
		push3(av, "--ro-bind", path, path);
		return 0;
	}
	push3(av, "--dir", path, NULL);
	{
		struct dirent **names = NULL;
		int n = scandir(path, &names, NULL, alphasort), rc = 0;

		for (int i = 0; i < n; i++) {
			if (rc == 0 && strcmp(names[i]->d_name, ".") != 0 &&
			    strcmp(names[i]->d_name, "..") != 0) {
				char *sub = path_join(path, names[i]->d_name);
				rc = push_etc_entry(av, sub, depth + 1, budget);
				free(sub);
			}
			free(names[i]);
		}
		free(names);
		return rc;
	}
}

static int
push_etc(struct strv *av, char **err)
{
	int budget = ETC_BUDGET;

	/* Its own mount, so that it can be made read-only once everything in
	 * it is in place (--remount-ro /etc, last). */
	push3(av, "--tmpfs", "/etc", NULL);
	for (size_t i = 0; i < ARRAY_SIZE(etc_allow); i++) {
		char *p = path_join("/etc", etc_allow[i]);
		int rc = push_etc_entry(av, p, 0, &budget);

		free(p);
		if (rc < 0) {
			set_err(err, "sandbox: /etc/%s holds more than %d entries to check, so the "
				"sandbox cannot tell what in it is private; refusing to start",
				etc_allow[i], ETC_BUDGET);
			return -1;
		}
	}
	return 0;
}

/*
 * A session of root is uid 0 in its namespace mapped to the host's root, and
 * the kernel lets the host's root write a sysctl with no capability at all
 * (kernel.core_pattern would run a command as root on the host).  bwrap
 * 0.8.0 does not cover /proc/sys, so re-bind the writable kernel knobs
 * read-only and hide what root may read about the host.
 */
static const char *const proc_ro[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
};
static const char *const proc_masked[] = {
	"/proc/kcore", "/proc/timer_list", "/proc/sched_debug", "/proc/latency_stats",
	"/proc/kpagecount", "/proc/kpageflags", "/proc/kpagecgroup", "/proc/keys",
};

static void
push_proc_covers(struct strv *av)
{
	struct stat st;

	for (size_t i = 0; i < ARRAY_SIZE(proc_ro); i++)
		if (lstat(proc_ro[i], &st) == 0)
			push3(av, "--ro-bind", proc_ro[i], proc_ro[i]);
	for (size_t i = 0; i < ARRAY_SIZE(proc_masked); i++)
		if (lstat(proc_masked[i], &st) == 0 && S_ISREG(st.st_mode))
			push3(av, "--ro-bind", "/dev/null", proc_masked[i]);
}

static int
push_system(struct strv *av, const char *resolv_dir, char **err)
{
	struct stat st;
	char buf[PATH_MAX];

	push3(av, "--ro-bind", "/usr", "/usr");
	for (size_t i = 0; i < ARRAY_SIZE(sys_top); i++) {
		if (lstat(sys_top[i], &st) != 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t n = readlink(sys_top[i], buf, sizeof buf - 1);
			if (n > 0) {
				buf[n] = '\0';
				push3(av, "--symlink", buf, sys_top[i]);
			}
		} else if (S_ISDIR(st.st_mode)) {
			push3(av, "--ro-bind", sys_top[i], sys_top[i]);
		}
	}
	if (push_etc(av, err) < 0)
		return -1;
	push3(av, "--proc", "/proc", NULL);
	push_proc_covers(av);
	push3(av, "--dev", "/dev", NULL);
	push3(av, "--tmpfs", "/tmp", NULL);
	if (resolv_dir != NULL)
		push3(av, "--ro-bind", resolv_dir, resolv_dir);
	return 0;
}

static int
check_features(unsigned features, char **err)
{
	static const struct { unsigned f; const char *opt; } req[] = {
		{ SANDBOX_F_UNSHARE_USER, "--unshare-user" },
		{ SANDBOX_F_DISABLE_USERNS, "--disable-userns" },
		{ SANDBOX_F_DIE_WITH_PARENT, "--die-with-parent" },
		{ SANDBOX_F_CAP_DROP, "--cap-drop" },
		{ SANDBOX_F_SECCOMP, "--seccomp" },
		{ SANDBOX_F_SYMLINK, "--symlink" },
		{ SANDBOX_F_CHDIR, "--chdir" },
		{ SANDBOX_F_REMOUNT_RO, "--remount-ro" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(req); i++)
		if (!(features & req[i].f)) {
			set_err(err, "the installed bubblewrap lacks %s (0.8.0 or newer is needed)",
				req[i].opt);
			return -1;
		}
	return 0;
}

int
sandbox_build_argv(const struct sandbox_input *in, struct strv *out, char **err)
{
	struct plan pl;
	struct envset env = { STRV_INIT, STRV_INIT };
	struct strv av = STRV_INIT;
	char fdbuf[16];

	if (in->bwrap == NULL || in->bwrap[0] != '/') {
		set_err(err, "sandbox: no bubblewrap path");
		return -1;
	}
	if (in->seccomp_fd < 3) {
		set_err(err, "sandbox: the seccomp descriptor must be above 2");
		return -1;
	}
	if (check_features(in->features, err) < 0)
		return -1;
	if (plan_build(in, &pl, err) < 0)
		return -1;
	/* Checked here too, so a bad environment fails the dry run as well. */
	if (build_env(in, &env, err) < 0) {
		plan_free(&pl);
		strv_clear(&env.names);
		strv_clear(&env.values);
		return -1;
	}
	strv_clear(&env.names);
	strv_clear(&env.values);

	/*
	 * No --clearenv/--setenv: their values would sit on bwrap's command
	 * line, readable by every local user in ps (an API key passed with
	 * [sandbox] env).  sandbox_exec runs bwrap with exactly the allowlisted
	 * environment (sandbox_build_env) instead, and bwrap hands it on.
	 */
	strv_push(&av, in->bwrap);
	push_isolation(&av, in->features, in->policy->net);

	if (push_system(&av, pl.resolv_dir, err) < 0) {
		strv_clear(&av);
		plan_free(&pl);
		return -1;
	}
	push3(&av, "--bind", pl.priv, pl.home);
	for (size_t i = 0; i < pl.nmnts; i++)
		push3(&av, pl.mnts[i].rw ? "--bind" : "--ro-bind",
		      pl.mnts[i].src != NULL ? pl.mnts[i].src : pl.mnts[i].path, pl.mnts[i].path);
	for (size_t i = 0; i < pl.pins.n; i++)
		push3(&av, "--bind", pl.pins.v[i], pl.pins.v[i]);
	for (size_t i = 0; i < pl.ro_top.n; i++)
		push3(&av, "--ro-bind", pl.ro_top.v[i], pl.ro_top.v[i]);
	for (size_t i = 0; i < pl.sym_at.n; i++)
		push3(&av, "--symlink", pl.sym_to.v[i], pl.sym_at.v[i]);

	push3(&av, "--remount-ro", "/etc", NULL);
	push3(&av, "--chdir", pl.cwd, NULL);
	if (in->info_fd > 2) {
		snprintf(fdbuf, sizeof fdbuf, "%d", in->info_fd);
		push3(&av, "--info-fd", fdbuf, NULL);
	}
	snprintf(fdbuf, sizeof fdbuf, "%d", in->seccomp_fd);
	push3(&av, "--seccomp", fdbuf, NULL);
	strv_push(&av, "--");
	for (char *const *a = in->argv; *a != NULL; a++)
		strv_push(&av, *a);

	for (size_t i = 0; i < av.n; i++)
		strv_push(out, av.v[i]);
	strv_clear(&av);
	strv_clear(&env.names);
	strv_clear(&env.values);
	plan_free(&pl);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* sandbox_prepare                                                          */

/* Open directory rel below root without following any symlink, creating
 * missing components when asked.  An O_PATH fd, or -1 with errno. */
static int
open_below(int root, const char *rel, bool create)
{
	int fd = openat(root, ".", O_PATH | O_DIRECTORY | O_CLOEXEC), e;
	const char *s = rel;

	while (fd >= 0 && *s != '\0') {
		size_t n = strcspn(s, "/");
		char *comp = xstrndup(s, n);
		int nfd = -1;

		s += n;
		while (*s == '/')
			s++;
		if (n == 0 || strcmp(comp, ".") == 0) {
			free(comp);
			continue;
		}
		if (strcmp(comp, "..") == 0) {
			errno = EINVAL;
		} else {
			nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (nfd < 0 && errno == ENOENT && create &&
			    (mkdirat(fd, comp, 0700) == 0 || errno == EEXIST))
				nfd = openat(fd, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		e = errno;
		free(comp);
		close(fd);
		fd = nfd;
		errno = e;
	}
	return fd;
}

/* Split rel into its directory (opened below root) and last name. */
static int
open_parent(int root, const char *rel, const char **base)
{
	const char *slash = strrchr(rel, '/');
	char *dir;
	int fd;

	if (slash == NULL) {
		*base = rel;
		return open_below(root, "", false);
	}
	*base = slash + 1;
	dir = xstrndup(rel, (size_t)(slash - rel));
	fd = open_below(root, dir, true);
	free(dir);
	return fd;
}

static int
copy_fd(int from, int to)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(from, buf, sizeof buf)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -1;
			off += w;
		}
	}
	return 0;
}

/*
 * A JSON seed with a "projects" object (claude's ~/.claude.json keeps one
 * entry per directory it ran in: trust, allowed tools, MCP servers, once
 * prompt history): copied with only this project's entry, so a session
 * learns nothing of the others.  0 when written; -1 when it is no such
 * JSON (the caller copies it as it is) with both descriptors rewound.
 */
static int
seed_json(int src, int dst, const char *project)
{
	json_t *o = json_loadfd(src, JSON_DISABLE_EOF_CHECK, NULL), *projects, *mine, *keep;
	char *text;
	size_t n;
	int rc = -1;

	projects = json_object_get(o, "projects");
	if (!json_is_object(projects))
		goto out;
	mine = json_object_get(projects, project);
	keep = json_object();
	if (mine != NULL)
		json_object_set(keep, project, mine);
	json_object_set_new(o, "projects", keep);
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (text == NULL)
		goto out;
	n = strlen(text);
	rc = 0;
	for (size_t off = 0; off < n;) {
		ssize_t w = write(dst, text + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			rc = -1;
			break;
		}
		off += (size_t)w;
	}
	free(text);
out:
	json_decref(o);
	if (rc != 0) {
		(void)lseek(src, 0, SEEK_SET);
		(void)lseek(dst, 0, SEEK_SET);
		(void)!ftruncate(dst, 0);
	}
	return rc;
}

static int
prepare_private(const struct plan *pl, char **err)
{
	int root, top, fd, rc = -1;
	const char *base;
	struct stat st;

	if (mkdir_p(pl->priv, 0700) < 0) {
		set_err(err, "sandbox: cannot create the private home '%s': %s", pl->priv,
			strerror(errno));
		return -1;
	}
	/* The state root is hqt's, and no session sees it whole: 0700. */
	top = open(pl->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	root = open(pl->priv, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (top < 0 || root < 0 || chmod(pl->root, 0700) < 0 || chmod(pl->priv, 0700) < 0) {
		set_err(err, "sandbox: cannot open the private home '%s': %s", pl->priv,
			strerror(errno));
		if (root >= 0)
			close(root);
		if (top >= 0)
			close(top);
		return -1;
	}

	for (size_t i = 0; i < pl->state_mk.n; i++) {
		fd = open_below(top, pl->state_mk.v[i], true);
		if (fd < 0) {
			set_err(err, "sandbox: cannot make the private state directory '%s/%s': %s "
				"(a symlink left there by a sandboxed session?)", pl->root,
				pl->state_mk.v[i], strerror(errno));
			goto out;
		}
		close(fd);
	}

	for (size_t i = 0; i < pl->mountpoints.n; i++) {
		const char *rel = pl->mountpoints.v[i];
		/* <home>/x is $HOME/x on the host, root/x is /x. */
		const char *hb = path_basename(pl->priv);
		size_t hn = strlen(hb);
		char *host = strncmp(rel, hb, hn) == 0 && rel[hn] == '/' ? path_join(pl->home, rel + hn + 1)
									 : xasprintf("%s", rel + 4);
		bool dir = stat(host, &st) != 0 || S_ISDIR(st.st_mode);

		free(host);
		if (dir) {
			fd = open_below(top, rel, true);
		} else {
			/* An empty file, or the regular file already there: never
			 * open what a session left (a FIFO would block us). */
			fd = open_parent(top, rel, &base);
			if (fd >= 0 && fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
				if (!S_ISREG(st.st_mode)) {
					close(fd);
					fd = -1;
					errno = EEXIST;
				}
			} else if (fd >= 0) {
				int f = openat(fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
						       O_NONBLOCK | O_CLOEXEC, 0600);
				if (f < 0) {
					int e = errno;
					close(fd);
					fd = -1;
					errno = e;
				} else {
					close(f);
				}
			}
		}
		if (fd < 0) {
			set_err(err, "sandbox: private state: cannot make a mount point at %s/%s: %s "
				"(a symlink left there by a sandboxed session?)", pl->root, rel,
				strerror(errno));
			goto out;
		}
		close(fd);
	}

	for (size_t i = 0; i < pl->home_at.n; i++) {
		const char *rel = pl->home_at.v[i], *to = pl->home_to.v[i];
		char cur[PATH_MAX];
		ssize_t n;

		fd = open_parent(root, rel, &base);
		if (fd < 0)
			goto link_fail;
		n = readlinkat(fd, base, cur, sizeof cur - 1);
		if (n >= 0) {
			cur[n] = '\0';
			if (strcmp(cur, to) == 0) {
				close(fd);
				continue;
			}
		}
		if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (S_ISDIR(st.st_mode)) {
				errno = EISDIR;
				close(fd);
				goto link_fail;
			}
			unlinkat(fd, base, 0);
		}
		if (symlinkat(to, fd, base) < 0) {
			int e = errno;
			close(fd);
			errno = e;
			goto link_fail;
		}
		close(fd);
		continue;
link_fail:
		set_err(err, "sandbox: private home: cannot link ~/%s: %s", rel, strerror(errno));
		goto out;
	}

	for (size_t i = 0; i < pl->seed_rel.n; i++) {
		const char *rel = pl->seed_rel.v[i];
		int src, dst;

		fd = open_parent(root, rel, &base);
		if (fd < 0) {
			set_err(err, "sandbox: private home: cannot seed ~/%s: %s", rel,
				strerror(errno));
			goto out;
		}
		if (fstatat(fd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			close(fd); /* seeded before: the sandbox's copy is its own */
			continue;
		}
		src = open(pl->seed_src.v[i], O_RDONLY | O_CLOEXEC);
		dst = openat(fd, base, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (src >= 0 && dst >= 0 && seed_json(src, dst, pl->project) == 0) {
			close(src);
			close(dst);
			close(fd);
			continue;
		}
		if (src < 0 || dst < 0 || copy_fd(src, dst) < 0) {
			int e = errno;
			if (dst >= 0)
				unlinkat(fd, base, 0);
			set_err(err, "sandbox: cannot seed ~/%s from '%s': %s", rel,
				pl->seed_src.v[i], strerror(e));
			if (src >= 0)
				close(src);
			if (dst >= 0)
				close(dst);
			close(fd);
			goto out;
		}
		close(src);
		close(dst);
		close(fd);
	}
	rc = 0;
out:
	close(root);
	close(top);
	return rc;
}

int
sandbox_check(const struct sandbox_input *in, char **err)
{
	struct plan pl;

	if (plan_build(in, &pl, err) < 0)
		return -1;
	plan_free(&pl);
	return 0;
}

/*
 * What prepare makes in someone else's directory is theirs: root running
 * a session in alice's project must not leave her a .claude/ she cannot
 * write.  Only root can give a file away; for anyone else it is theirs.
 */
static void
owner_of_parent(const char *path)
{
	char *parent = path_dirname(path);
	struct stat st;

	if (geteuid() == 0 && stat(parent, &st) == 0 && st.st_uid != 0)
		(void)!lchown(path, st.st_uid, st.st_gid);
	free(parent);
}

int
sandbox_prepare(const struct sandbox_input *in, char **err)
{
	struct plan pl;
	int rc = -1;

	if (plan_build(in, &pl, err) < 0)
		return -1;
	if (prepare_private(&pl, err) < 0)
		goto out;
	for (size_t i = 0; i < pl.mk_dirs.n; i++) {
		if (mkdir(pl.mk_dirs.v[i], 0755) == 0)
			owner_of_parent(pl.mk_dirs.v[i]);
		else if (errno != EEXIST) {
			set_err(err, "sandbox: cannot create '%s': %s", pl.mk_dirs.v[i],
				strerror(errno));
			goto out;
		}
	}
	for (size_t i = 0; i < pl.mk_files.n; i++) {
		const char *p = pl.mk_files.v[i];
		size_t n = strlen(p);
		bool json = n > 5 && strcmp(p + n - 5, ".json") == 0;
		int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0 || (json && write(fd, "{}\n", 3) != 3)) {
			set_err(err, "sandbox: cannot create '%s': %s", p, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
		close(fd);
		owner_of_parent(p);
	}
	rc = 0;
out:
	plan_free(&pl);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Running bwrap                                                            */

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1u << 2)
#endif

/*
 * Close every descriptor from lowfd up; with on_exec, only mark them
 * close-on-exec, so they close when execve succeeds and stay usable when it
 * fails.  Async-signal-safe.
 */
static void
close_from(int lowfd, int maxfd, bool on_exec)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, (unsigned)lowfd, ~0u, on_exec ? CLOSE_RANGE_CLOEXEC : 0u) == 0)
		return;
#endif
	for (int fd = lowfd; fd < maxfd; fd++) {
		if (!on_exec)
			close(fd);
		else if (fcntl(fd, F_GETFD) >= 0)
			fcntl(fd, F_SETFD, FD_CLOEXEC);
	}
}

static int
max_fd(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < (1u << 20))
		return (int)rl.rlim_cur;
	return 65536;
}

/* Default dispositions and an empty mask, so the harness gets Ctrl-C,
 * SIGPIPE and job control as a fresh process would.  Async-signal-safe. */
static void
reset_signals(void)
{
	struct sigaction sa;
	sigset_t none;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = SIG_DFL;
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &sa, NULL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

/*
 * Put the seccomp program at SANDBOX_SECCOMP_FD (inheritable) and close
 * everything else above 2.  Async-signal-safe.
 */
static int
arrange_fds(int seccomp_fd, int maxfd, bool on_exec)
{
	if (seccomp_fd >= 0) {
		if (seccomp_fd != SANDBOX_SECCOMP_FD) {
			if (dup2(seccomp_fd, SANDBOX_SECCOMP_FD) < 0)
				return -1;
		} else if (fcntl(seccomp_fd, F_SETFD, 0) < 0) {
			return -1;
		}
		close_from(SANDBOX_SECCOMP_FD + 1, maxfd, on_exec);
	} else {
		close_from(3, maxfd, on_exec);
	}
	return 0;
}

/*
 * Run argv (argv[0] absolute) with stdin /dev/null, capturing stdout and
 * stderr (each capped at 64 KiB), an empty environment, and the seccomp
 * program when seccomp_fd >= 0.  Killed after timeout_ms.  Returns the wait
 * status, or -1 when it could not be run.
 */
static int
run_capture(char *const argv[], int seccomp_fd, int timeout_ms, char **out, char **errt)
{
	static char *const no_env[] = { NULL };
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, status = -1, maxfd = max_fd();
	char *buf[2] = { xcalloc(1, 1), xcalloc(1, 1) };
	size_t len[2] = { 0, 0 };
	sigset_t all, old;
	pid_t pid;
	struct timespec t0, t1;

	if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
		goto out;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
		/* Move everything we keep above the targets before dup2. */
		int o = fcntl(po[1], F_DUPFD_CLOEXEC, 10), e = fcntl(pe[1], F_DUPFD_CLOEXEC, 10);
		int s = seccomp_fd >= 0 ? fcntl(seccomp_fd, F_DUPFD_CLOEXEC, 10) : -1;

		reset_signals();
		if (devnull < 0 || o < 0 || e < 0 || (seccomp_fd >= 0 && s < 0) ||
		    dup2(devnull, 0) < 0 || dup2(o, 1) < 0 || dup2(e, 2) < 0 ||
		    arrange_fds(s, maxfd, false) < 0)
			_exit(127);
		execve(argv[0], argv, no_env);
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	if (pid < 0)
		goto out;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int open_fds = 2; open_fds > 0;) {
		struct pollfd pfd[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };
		long left;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		left = timeout_ms - ((t1.tv_sec - t0.tv_sec) * 1000 +
				     (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (left <= 0) {
			kill(pid, SIGKILL);
			break;
		}
		if (poll(pfd, 2, (int)left) < 0) {
			if (errno == EINTR)
				continue;
			kill(pid, SIGKILL);
			break;
		}
		for (int i = 0; i < 2; i++) {
			char tmp[4096];
			ssize_t n;

			if (pfd[i].fd < 0 || !(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(pfd[i].fd, tmp, sizeof tmp);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(i == 0 ? po[0] : pe[0]);
				if (i == 0)
					po[0] = -1;
				else
					pe[0] = -1;
				open_fds--;
				continue;
			}
			if (len[i] < 65536) {
				buf[i] = xreallocarray(buf[i], len[i] + (size_t)n + 1, 1);
				memcpy(buf[i] + len[i], tmp, (size_t)n);
				len[i] += (size_t)n;
				buf[i][len[i]] = '\0';
			}
		}
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
out:
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0)
			close(po[i]);
		if (pe[i] >= 0)
			close(pe[i]);
	}
	if (out != NULL)
		*out = buf[0];
	else
		free(buf[0]);
	if (errt != NULL)
		*errt = buf[1];
	else
		free(buf[1]);
	return status;
}

/* ------------------------------------------------------------------------ */
/* The probe                                                                */

static bool
help_has(const char *help, const char *opt)
{
	size_t n = strlen(opt);

	for (const char *p = strstr(help, opt); p != NULL; p = strstr(p + 1, opt)) {
		char after = p[n];
		if ((p == help || p[-1] == ' ' || p[-1] == '\n' || p[-1] == '\t') &&
		    (after == ' ' || after == '\t' || after == '\n' || after == '\0'))
			return true;
	}
	return false;
}

static unsigned
features_from_help(const char *help)
{
	static const struct { unsigned f; const char *opt; } opts[] = {
		{ SANDBOX_F_UNSHARE_USER, "--unshare-user" },
		{ SANDBOX_F_DISABLE_USERNS, "--disable-userns" },
		{ SANDBOX_F_UNSHARE_CGROUP_TRY, "--unshare-cgroup-try" },
		{ SANDBOX_F_DIE_WITH_PARENT, "--die-with-parent" },
		{ SANDBOX_F_CAP_DROP, "--cap-drop" },
		{ SANDBOX_F_CLEARENV, "--clearenv" },
		{ SANDBOX_F_SECCOMP, "--seccomp" },
		{ SANDBOX_F_SYMLINK, "--symlink" },
		{ SANDBOX_F_CHDIR, "--chdir" },
		{ SANDBOX_F_REMOUNT_RO, "--remount-ro" },
	};
	unsigned f = 0;

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++)
		if (help_has(help, opts[i].opt))
			f |= opts[i].f;
	return f;
}

/* When --help says nothing usable: what each release added. */
static unsigned
features_from_version(const char *v)
{
	long part[3] = { 0, 0, 0 };
	const char *s = v;
	unsigned f;

	for (int i = 0; i < 3 && s != NULL && *s != '\0'; i++) {
		char *end;
		errno = 0;
		part[i] = strtol(s, &end, 10);
		if (errno != 0 || end == s)
			return 0;
		s = *end == '.' ? end + 1 : NULL;
	}
	long ver = part[0] * 10000 + part[1] * 100 + part[2];
	if (ver < 300) /* 0.3.0: --die-with-parent and the rest of the basics */
		return 0;
	f = SANDBOX_F_UNSHARE_USER | SANDBOX_F_UNSHARE_CGROUP_TRY | SANDBOX_F_DIE_WITH_PARENT |
	    SANDBOX_F_CAP_DROP | SANDBOX_F_SECCOMP | SANDBOX_F_SYMLINK | SANDBOX_F_CHDIR |
	    SANDBOX_F_REMOUNT_RO;
	if (ver >= 500)
		f |= SANDBOX_F_CLEARENV;
	if (ver >= 800)
		f |= SANDBOX_F_DISABLE_USERNS;
	return f;
}

static char *
first_line(const char *text)
{
	const char *s = text;

	while (*s == '\n' || *s == ' ')
		s++;
	return xstrndup(s, strcspn(s, "\n"));
}

static char *
sysctl_value(const char *path)
{
	char *v = read_file(path, 256, NULL);

	if (v == NULL)
		return xstrdup("-");
	trim(v);
	return v;
}

void
sandbox_explain_failure(const char *text, char **reason, char **fix)
{
	char *line = first_line(text != NULL ? text : "");

	if (strstr(text, "setting up uid map") != NULL ||
	    strstr(text, "No permission to create new namespace") != NULL ||
	    (strstr(text, "namespace") != NULL && strstr(text, "Operation not permitted") != NULL) ||
	    (strstr(text, "namespace") != NULL && strstr(text, "Permission denied") != NULL)) {
		char *aa = sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
		char *clone = sysctl_value("/proc/sys/kernel/unprivileged_userns_clone");
		char *max = sysctl_value("/proc/sys/user/max_user_namespaces");

		if (strcmp(aa, "1") == 0) {
			*reason = xasprintf("user namespaces are restricted by AppArmor "
					    "(kernel.apparmor_restrict_unprivileged_userns=1): %s", line);
			*fix = xstrdup("allow bwrap an AppArmor profile with `userns,` "
				       "(/etc/apparmor.d/bwrap), or run `sudo sysctl -w "
				       "kernel.apparmor_restrict_unprivileged_userns=0`");
		} else if (strcmp(clone, "0") == 0) {
			*reason = xasprintf("unprivileged user namespaces are disabled "
					    "(kernel.unprivileged_userns_clone=0): %s", line);
			*fix = xstrdup("sudo sysctl -w kernel.unprivileged_userns_clone=1");
		} else if (strcmp(max, "0") == 0) {
			*reason = xasprintf("user namespaces are disabled "
					    "(user.max_user_namespaces=0): %s", line);
			*fix = xstrdup("sudo sysctl -w user.max_user_namespaces=15000");
		} else {
			*reason = xasprintf("bwrap cannot create a user namespace: %s", line);
			*fix = xstrdup("allow unprivileged user namespaces (an AppArmor or SELinux "
				       "policy, or a container's seccomp profile, forbids them)");
		}
		free(aa);
		free(clone);
		free(max);
	} else if (strstr(text, "No space left on device") != NULL ||
		   strstr(text, "ENOSPC") != NULL) {
		/* "Creating new namespace failed: nesting depth or
		 * /proc/sys/user/max_*_namespaces exceeded (ENOSPC)" */
		char *max = sysctl_value("/proc/sys/user/max_user_namespaces");

		if (strcmp(max, "0") == 0) {
			*reason = xasprintf("user namespaces are disabled "
					    "(user.max_user_namespaces=0): %s", line);
			*fix = xstrdup("sudo sysctl -w user.max_user_namespaces=15000 (and the "
				       "same in /etc/sysctl.d/ to keep it); in a container, its "
				       "runtime sets this limit");
		} else {
			*reason = xasprintf("the user namespace limit or nesting depth is "
					    "reached (user.max_user_namespaces=%s): %s", max, line);
			*fix = xstrdup("raise it: sudo sysctl -w user.max_user_namespaces=15000, "
				       "or run hqt in a less deeply nested container");
		}
		free(max);
	} else if (strstr(text, "Unknown option") != NULL ||
		   strstr(text, "unrecognized option") != NULL) {
		*reason = xasprintf("the installed bubblewrap is too old: %s", line);
		*fix = xstrdup("install bubblewrap 0.8.0 or newer");
	} else if (strstr(text, "Can't mount proc") != NULL) {
		*reason = xasprintf("bwrap cannot mount /proc (inside a container that masks "
				    "it?): %s", line);
		*fix = xstrdup("run hqt outside the container, or start the container with "
			       "an unmasked /proc (docker: --security-opt systempaths=unconfined)");
	} else if (strstr(text, "seccomp") != NULL || strstr(text, "PR_SET_SECCOMP") != NULL) {
		*reason = xasprintf("the kernel refused the seccomp filter: %s", line);
		*fix = xstrdup("a kernel with CONFIG_SECCOMP_FILTER is needed");
	} else {
		*reason = xasprintf("bubblewrap failed: %s", *line ? line : "no message");
		*fix = xstrdup("run the command `hqt new PROJECT HARNESS --sandbox --dry-run` "
			       "prints by hand to see all bwrap says");
	}
	free(line);
}

static char *
xdg_cache_home(void)
{
	const char *v = getenv("XDG_CACHE_HOME");
	char *home, *out;

	if (v != NULL && v[0] == '/')
		return xstrdup(v);
	home = user_home();
	if (home == NULL)
		return NULL;
	out = xasprintf("%s/.cache", home);
	free(home);
	return out;
}

/* Everything that can change the probe's answer without hqt knowing. */
static char *
probe_key(const char *bwrap)
{
	struct stat st;
	struct utsname u;
	char *aa, *clone, *max, *key;

	if (stat(bwrap, &st) != 0 || uname(&u) != 0)
		return NULL;
	aa = sysctl_value("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
	clone = sysctl_value("/proc/sys/kernel/unprivileged_userns_clone");
	max = sysctl_value("/proc/sys/user/max_user_namespaces");
	/* v2: bump when the argv shape or the seccomp program changes. */
	key = xasprintf("v2|%u|%s|%lu:%lu|%lld.%09ld|%lld|%s %s|%s|%s|%s", (unsigned)getuid(),
			bwrap, (unsigned long)st.st_dev, (unsigned long)st.st_ino,
			(long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, (long long)st.st_size,
			u.release, u.version, aa, clone, max);
	free(aa);
	free(clone);
	free(max);
	return key;
}

static void
probe_copy(struct sandbox_probe *dst, const struct sandbox_probe *src)
{
	dst->available = src->available;
	dst->bwrap = src->bwrap != NULL ? xstrdup(src->bwrap) : NULL;
	dst->version = src->version != NULL ? xstrdup(src->version) : NULL;
	dst->features = src->features;
	dst->reason = src->reason != NULL ? xstrdup(src->reason) : NULL;
	dst->fix = src->fix != NULL ? xstrdup(src->fix) : NULL;
}

void
sandbox_probe_clear(struct sandbox_probe *p)
{
	if (p == NULL)
		return;
	free(p->bwrap);
	free(p->version);
	free(p->reason);
	free(p->fix);
	memset(p, 0, sizeof *p);
}

static char *
cache_file(void)
{
	char *dir = xdg_cache_home(), *f;

	if (dir == NULL)
		return NULL;
	f = xasprintf("%s/hqt/bwrap-probe", dir);
	free(dir);
	return f;
}

static bool
disk_cache_load(const char *key, struct sandbox_probe *out)
{
	char *file = cache_file(), *text;
	json_t *root;
	const char *k, *b, *v;
	bool ok = false;

	if (file == NULL)
		return false;
	text = read_file(file, 65536, NULL);
	free(file);
	if (text == NULL)
		return false;
	root = json_loads(text, 0, NULL);
	free(text);
	k = json_string_value(json_object_get(root, "key"));
	b = json_string_value(json_object_get(root, "bwrap"));
	v = json_string_value(json_object_get(root, "version"));
	if (k != NULL && strcmp(k, key) == 0 && b != NULL && b[0] == '/' &&
	    json_is_integer(json_object_get(root, "features"))) {
		out->available = true;
		out->bwrap = xstrdup(b);
		out->version = v != NULL ? xstrdup(v) : NULL;
		out->features = (unsigned)json_integer_value(json_object_get(root, "features"));
		ok = (out->features & SANDBOX_F_REQUIRED) == SANDBOX_F_REQUIRED;
		if (!ok)
			sandbox_probe_clear(out);
	}
	json_decref(root);
	return ok;
}

static void
disk_cache_store(const char *key, const struct sandbox_probe *p)
{
	char *file = cache_file(), *dir, *tmp, *text;
	json_t *o;
	int fd;

	if (file == NULL)
		return;
	dir = path_dirname(file);
	tmp = xasprintf("%s.%ld", file, (long)getpid());
	o = json_object();
	json_object_set_new(o, "key", json_string(key));
	json_object_set_new(o, "bwrap", json_string(p->bwrap));
	json_object_set_new(o, "version", p->version ? json_string(p->version) : json_null());
	json_object_set_new(o, "features", json_integer(p->features));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (text != NULL && mkdir_p(dir, 0700) == 0) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0) {
			size_t n = strlen(text);
			bool ok = write(fd, text, n) == (ssize_t)n;
			close(fd);
			if (!ok || rename(tmp, file) < 0)
				unlink(tmp);
		}
	}
	free(text);
	free(tmp);
	free(dir);
	free(file);
}

/* The probe's answer for this process, keyed like the disk cache. */
static struct sandbox_probe mem_probe;
static char *mem_key;

static void
probe_run(const char *bwrap, struct sandbox_probe *out)
{
	char *vout = NULL, *help = NULL, *errt = NULL, *err = NULL, *tru;
	struct strv av = STRV_INIT;
	int st, fd;

	out->bwrap = xstrdup(bwrap);
	st = run_capture((char *[]){ (char *)bwrap, "--version", NULL }, -1, 5000, &vout, NULL);
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
	    strncmp(vout, "bubblewrap ", 11) == 0) {
		char *v = first_line(vout + 11);
		if (strspn(v, "0123456789.") == strlen(v) && *v != '\0')
			out->version = v;
		else
			free(v);
	}
	st = run_capture((char *[]){ (char *)bwrap, "--help", NULL }, -1, 5000, &help, NULL);
	out->features = features_from_help(help);
	if (!(out->features & SANDBOX_F_UNSHARE_USER) && out->version != NULL)
		out->features = features_from_version(out->version);
	if (check_features(out->features, &err) < 0) {
		out->reason = xasprintf("%s at %s (version %s)", err, bwrap,
					out->version ? out->version : "unknown");
		out->fix = xstrdup("install bubblewrap 0.8.0 or newer (Debian 12, Ubuntu 24.04 "
				   "and later ship it)");
		goto out;
	}

	/* The real argv shape, with /bin/true as the command. */
	tru = realpath("/bin/true", NULL);
	if (tru == NULL)
		tru = xstrdup("/usr/bin/true");
	strv_push(&av, bwrap);
	push_isolation(&av, out->features, false);
	strv_push(&av, "--clearenv");
	push3(&av, "--setenv", "PATH", "/usr/bin:/bin");
	if (push_system(&av, NULL, &err) < 0) {
		out->reason = xstrdup(err);
		out->fix = xstrdup("report this /etc to hqt's maintainers");
		goto out;
	}
	push3(&av, "--remount-ro", "/etc", NULL);
	push3(&av, "--chdir", "/", NULL);
	push3(&av, "--seccomp", "3", NULL);
	strv_push(&av, "--");
	strv_take(&av, tru);
	fd = sandbox_seccomp_fd(0, &err);
	if (fd < 0) {
		out->reason = xstrdup(err);
		out->fix = xstrdup("a kernel and libseccomp with seccomp filter support are needed");
		goto out;
	}
	st = run_capture(av.v, fd, 10000, NULL, &errt);
	close(fd);
	if (st >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) {
		out->available = true;
	} else if (st < 0) {
		out->reason = xasprintf("cannot run %s: %s", bwrap, strerror(errno));
		out->fix = xstrdup("sudo apt-get install bubblewrap");
	} else if (WIFSIGNALED(st) && *errt == '\0') {
		out->reason = xasprintf("bwrap was killed by signal %d (timed out?)", WTERMSIG(st));
		out->fix = xstrdup("run `bwrap --unshare-user --ro-bind /usr /usr /usr/bin/true` "
				   "by hand to see why");
	} else {
		sandbox_explain_failure(errt, &out->reason, &out->fix);
	}
out:
	strv_clear(&av);
	free(vout);
	free(help);
	free(errt);
	free(err);
}

int
sandbox_probe(struct sandbox_probe *out)
{
	const char *nc = getenv("HQT_NO_PROBE_CACHE");
	bool cache = nc == NULL || strcmp(nc, "1") != 0;
	char *found = NULL, *bwrap, *key;

	memset(out, 0, sizeof *out);
#ifndef __linux__
	out->reason = xstrdup("sandboxing needs Linux (bubblewrap and seccomp)");
	return -1;
#endif
	if (sandbox_find_exe("bwrap", NULL, &found) < 0 ||
	    (bwrap = realpath(found, NULL)) == NULL) {
		free(found);
		out->reason = xstrdup("bubblewrap (bwrap) is not installed or not on PATH");
		out->fix = xstrdup("sudo apt-get install bubblewrap");
		return -1;
	}
	free(found);
	key = probe_key(bwrap);
	if (cache && key != NULL && mem_key != NULL && strcmp(key, mem_key) == 0) {
		probe_copy(out, &mem_probe);
	} else if (cache && key != NULL && disk_cache_load(key, out)) {
		/* fresh from disk */
	} else {
		probe_run(bwrap, out);
		if (cache && key != NULL && out->available)
			disk_cache_store(key, out);
	}
	if (cache && key != NULL) {
		sandbox_probe_clear(&mem_probe);
		probe_copy(&mem_probe, out);
		free(mem_key);
		mem_key = key;
		key = NULL;
	}
	free(key);
	free(bwrap);
	return out->available ? 0 : -1;
}

/* ------------------------------------------------------------------------ */
/* Command and exec                                                         */

static int
probe_into(const struct sandbox_input *in, struct sandbox_input *x, struct sandbox_probe *pr,
	   char **err)
{
	if (sandbox_probe(pr) < 0) {
		set_err(err, "sandbox unavailable: %s%s%s", pr->reason,
			pr->fix != NULL ? "; fix: " : "", pr->fix != NULL ? pr->fix : "");
		return -1;
	}
	*x = *in;
	x->bwrap = pr->bwrap;
	x->features = pr->features;
	x->seccomp_fd = SANDBOX_SECCOMP_FD;
	x->info_fd = SANDBOX_INFO_FD;
	return 0;
}

int
sandbox_command(const struct sandbox_input *in, struct strv *out, char **err)
{
	struct sandbox_probe pr;
	struct sandbox_input x;
	int rc = -1;

	if (probe_into(in, &x, &pr, err) == 0)
		rc = sandbox_build_argv(&x, out, err);
	sandbox_probe_clear(&pr);
	return rc;
}

int
sandbox_build_env(const struct sandbox_input *in, struct strv *envp, char **err)
{
	struct envset env = { STRV_INIT, STRV_INIT };
	int rc = build_env(in, &env, err);

	for (size_t i = 0; rc == 0 && i < env.names.n; i++)
		strv_pushf(envp, "%s=%s", env.names.v[i], env.values.v[i]);
	strv_clear(&env.names);
	strv_clear(&env.values);
	return rc < 0 ? -1 : 0;
}

/* The sandbox's init, from bwrap's --info-fd: {"child-pid": N, ...}. */
static pid_t
read_child_pid(int fd)
{
	char buf[4096];
	size_t len = 0;
	ssize_t n;
	json_t *o;
	pid_t pid = -1;

	while (len < sizeof buf - 1 && (n = read(fd, buf + len, sizeof buf - 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	o = json_loadb(buf, len, JSON_DISABLE_EOF_CHECK, NULL);
	if (json_is_integer(json_object_get(o, "child-pid")))
		pid = (pid_t)json_integer_value(json_object_get(o, "child-pid"));
	json_decref(o);
	return pid;
}

static void
kill_init(int pidfd, pid_t init)
{
	if (pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	else if (init > 1)
		(void)kill(init, SIGKILL);
}

/*
 * The supervisor (SPEC §8.8): bwrap runs as our child; we know its init
 * (pid 1 of the sandbox, whose death takes every process in the sandbox
 * with it) and kill it when bwrap ends, when the pane hangs up, or when
 * hqt kill/rm ends the window (SIGHUP or SIGTERM), whatever the agent did
 * to bwrap's own --die-with-parent inside.  We leave with bwrap's status.
 */
static void __attribute__((noreturn))
supervise(pid_t bwrap, int info_fd, const sigset_t *waited)
{
	pid_t init = read_child_pid(info_fd);
	int pidfd = init > 1 ? (int)syscall(SYS_pidfd_open, init, 0) : -1, status = 0;

	close(info_fd);
	for (;;) {
		siginfo_t si;
		pid_t r = waitpid(bwrap, &status, WNOHANG);

		if (r == bwrap)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (sigwaitinfo(waited, &si) < 0)
			continue;
		if (si.si_signo == SIGHUP || si.si_signo == SIGTERM) {
			kill_init(pidfd, init);
			(void)kill(bwrap, SIGKILL);
		}
		/* SIGINT, SIGQUIT: the harness's (same process group); SIGCHLD:
		 * look again. */
	}
	kill_init(pidfd, init);
	if (WIFSIGNALED(status)) {
		signal(WTERMSIG(status), SIG_DFL);
		sigprocmask(SIG_UNBLOCK, waited, NULL);
		raise(WTERMSIG(status));
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

int
sandbox_plan(const struct sandbox_input *in, struct strv *argv, struct strv *envp, int *seccomp_fd,
	     char **err)
{
	struct sandbox_probe pr;
	struct sandbox_input x;
	int rc = -1;

	*seccomp_fd = -1;
	if (probe_into(in, &x, &pr, err) == 0 && sandbox_prepare(&x, err) == 0 &&
	    sandbox_build_argv(&x, argv, err) == 0 && sandbox_build_env(&x, envp, err) == 0) {
		*seccomp_fd = sandbox_seccomp_fd(
			in->policy->allow_ptrace ? SECCOMP_ALLOW_PTRACE : 0, err);
		rc = *seccomp_fd < 0 ? -1 : 0;
	}
	sandbox_probe_clear(&pr);
	return rc;
}

int
sandbox_run(char *const argv[], char *const envp[], int seccomp_fd, int ready_fd, char **err)
{
	static const int sigs[] = { SIGHUP, SIGTERM, SIGINT, SIGQUIT, SIGCHLD };
	int info[2] = { -1, -1 }, e, maxfd = max_fd();
	sigset_t waited, old;
	pid_t pid;

	if (pipe2(info, O_CLOEXEC) < 0) {
		set_err(err, "sandbox: cannot make the info pipe: %s", strerror(errno));
		return -1;
	}
	sigemptyset(&waited);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaddset(&waited, sigs[i]);
	sigprocmask(SIG_BLOCK, &waited, &old);
	pid = fork();
	if (pid < 0) {
		set_err(err, "sandbox: cannot fork: %s", strerror(errno));
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(info[0]);
		close(info[1]);
		return -1;
	}
	if (pid == 0) {
		/* The child: bwrap with the filter at 3 and the info pipe at 4,
		 * nothing else above 2 once it runs. */
		int s2, i2;

		reset_signals();
		/* Out of the way first: either may sit at 3 or 4 now.  dup2
		 * leaves the copies inheritable. */
		s2 = fcntl(seccomp_fd, F_DUPFD_CLOEXEC, 10);
		i2 = fcntl(info[1], F_DUPFD_CLOEXEC, 10);
		if (s2 >= 0 && i2 >= 0 && dup2(s2, SANDBOX_SECCOMP_FD) >= 0 &&
		    dup2(i2, SANDBOX_INFO_FD) >= 0) {
			close_from(SANDBOX_INFO_FD + 1, maxfd, true);
			execve(argv[0], argv, envp);
		}
		e = errno;
		if (ready_fd >= 0)
			dprintf(ready_fd, "sandbox: cannot run %s: %s", argv[0], strerror(e));
		dprintf(2, "hqt: sandbox: cannot run %s: %s\n", argv[0], strerror(e));
		_exit(127);
	}
	/* The supervisor.  `hqt new` learns of the start (or of the child's
	 * error) once the child's copy of ready_fd closes. */
	if (ready_fd >= 0)
		close(ready_fd);
	close(seccomp_fd);
	close(info[1]);
	/* Ctrl-Z reaches the whole process group; the supervisor stays up. */
	signal(SIGTSTP, SIG_IGN);
	signal(SIGTTIN, SIG_IGN);
	signal(SIGTTOU, SIG_IGN);
	supervise(pid, info[0], &waited);
}

int
sandbox_exec(const struct sandbox_input *in, int ready_fd, char **err)
{
	struct strv av = STRV_INIT, envp = STRV_INIT;
	int fd;

	if (sandbox_plan(in, &av, &envp, &fd, err) == 0)
		sandbox_run(strv_v(&av), strv_v(&envp), fd, ready_fd, err);
	if (fd >= 0)
		close(fd);
	strv_clear(&av);
	strv_clear(&envp);
	return -1;
}

/* ------------------------------------------------------------------------ */
/* Small helpers                                                            */

/* A directory name from the project's: its last component, plain bytes only. */
static void
project_slug(const char *real, char *out, size_t len)
{
	const char *base = path_basename(real);
	size_t n = 0;

	for (; *base != '\0' && n + 1 < len; base++)
	{
		bool plain = isalnum((unsigned char)*base) || *base == '-' || *base == '_' ||
			     (*base == '.' && n > 0);
		out[n] = plain ? *base : '_';
		n++;
	}
	if (n == 0)
		out[n++] = '_';
	out[n] = '\0';
}

char *
sandbox_state_root(const char *harness, const char *project)
{
	char *data, *real, *out, slug[33];
	uint64_t h = 14695981039346656037ull; /* FNV-1a 64 */

	if (!valid_name(harness) || project == NULL || project[0] != '/')
		return NULL;
	data = xdg_data_home();
	if (data == NULL)
		return NULL;
	real = realpath(project, NULL);
	if (real == NULL)
		real = xstrdup(project);
	for (const char *c = real; *c != '\0'; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ull;
	project_slug(real, slug, sizeof slug);
	out = xasprintf("%s/hqt/sandbox/%s/%s-%016llx", data, harness, slug,
			(unsigned long long)h);
	free(real);
	free(data);
	return out;
}

char *
sandbox_state_path(const char *root, const char *home, const char *path)
{
	if (path_under(path, home) && strcmp(home, "/") != 0)
		return xasprintf("%s/home%s", root, path + strlen(home));
	return xasprintf("%s/root%s", root, path);
}

int
sandbox_find_exe(const char *name, const char *path, char **out)
{
	const char *s;
	struct stat st;

	if (name == NULL || *name == '\0')
		return -1;
	if (strchr(name, '/') != NULL) {
		if (name[0] != '/' || stat(name, &st) != 0 || !S_ISREG(st.st_mode) ||
		    access(name, X_OK) != 0)
			return -1;
		*out = xstrdup(name);
		return 0;
	}
	if (path == NULL)
		path = getenv("PATH");
	if (path == NULL)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (s = path; *s != '\0';) {
		size_t n = strcspn(s, ":");
		/* Empty and relative entries name the current directory: a
		 * sandbox must not pick its command from wherever hqt runs. */
		if (n > 0 && s[0] == '/') {
			char *dir = xstrndup(s, n), *cand = path_join(dir, name);
			free(dir);
			if (stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0) {
				*out = cand;
				return 0;
			}
			free(cand);
		}
		s += n;
		if (*s == ':')
			s++;
	}
	return -1;
}
