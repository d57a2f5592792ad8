/* common.c: helpers compiled into every harness plugin; see common.h. */
#include "common.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>

const struct hqt_host_api *host;

int
plugin_init(const struct hqt_host_api *h, struct hqt_error *err)
{
	if (!h || h->abi_major != HQT_PLUGIN_ABI_MAJOR)
		return -1; /* a different layout: not even set_error is safe */
	if (h->struct_size < sizeof(*h)) {
		if (h->struct_size >= offsetof(struct hqt_host_api, set_error) +
					      sizeof(h->set_error))
			h->set_error(err, "host table of %zu bytes, plugin needs %zu",
				     h->struct_size, sizeof(*h));
		return -1;
	}
	host = h;
	return 0;
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (!p)
		abort();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		abort();
	va_end(ap);
	return s;
}

static bool
blank(char c)
{
	return c == ' ' || c == '\t';
}

char **
words_split(const char *s, const char *seps)
{
	size_t cap = 1, n = 0;
	char **v;

	for (const char *p = s; p && *p; p++)
		cap += strchr(seps, *p) != NULL;
	v = xmalloc((cap + 1) * sizeof(*v));
	while (s && *s) {
		size_t k = strcspn(s, seps);
		const char *b = s, *e = s + k;

		while (b < e && blank(*b))
			b++;
		while (e > b && blank(e[-1]))
			e--;
		if (e > b) {
			v[n] = xmalloc((size_t)(e - b) + 1);
			memcpy(v[n], b, (size_t)(e - b));
			v[n++][e - b] = '\0';
		}
		s += k + (s[k] != '\0');
	}
	v[n] = NULL;
	return v;
}

void
words_free(char **v)
{
	for (char **p = v; p && *p; p++)
		free(*p);
	free(v);
}

int
check_request(const struct hqt_request *req, struct hqt_error *err)
{
	if (!req->project_path || req->project_path[0] != '/') {
		host->set_error(err, "no absolute project directory");
		return HQT_ERROR;
	}
	/* A model is a flag's value: one starting with '-' would be read as
	 * an option of the harness (e.g. a skip-permission flag). */
	if (req->model && (!req->model[0] || req->model[0] == '-')) {
		host->set_error(err, "bad model name '%s'", req->model);
		return HQT_ERROR;
	}
	return 0;
}

void
push_words(struct hqt_cmd *out, const char *const *words)
{
	for (; words && *words; words++)
		host->argv_push(out, *words);
}

void
list_words(struct hqt_strlist *out, const char *const *words)
{
	for (; words && *words; words++)
		host->list_push(out, *words);
}

void
push_tail(struct hqt_cmd *out, const struct hqt_request *req, const char *model_flag,
	  const char *const *skip_flags)
{
	if (req->model) {
		host->argv_push(out, model_flag);
		host->argv_push(out, req->model);
	}
	if (req->sandboxed)
		push_words(out, skip_flags);
	host->set_cwd(out, req->project_path);
}

/* Trim blanks, no-break spaces and box edges from both ends of [*b, *e). */
static void
trim_box(const char **b, const char **e)
{
	static const char *const edges[] = {" ", "\t", "\r", "\xc2\xa0", "\xe2\x94\x82", NULL};
	bool again = true;

	while (again && *b < *e) {
		again = false;
		for (const char *const *t = edges; *t; t++) {
			size_t k = strlen(*t);

			if ((size_t)(*e - *b) >= k && !memcmp(*b, *t, k)) {
				*b += k;
				again = true;
			}
			if ((size_t)(*e - *b) >= k && !memcmp(*e - k, *t, k)) {
				*e -= k;
				again = true;
			}
		}
	}
}

static bool
line_matches(const char *line, const char *end, const char *marker)
{
	if (marker[0] == '=') {
		size_t k = strlen(marker + 1);

		trim_box(&line, &end);
		return (size_t)(end - line) == k && !memcmp(line, marker + 1, k);
	}
	for (;;) {
		size_t k = strcspn(marker, "*");

		if (k) {
			const char *hit = memmem(line, (size_t)(end - line), marker, k);

			if (!hit)
				return false;
			line = hit + k;
		}
		if (!marker[k])
			return true;
		marker += k + 1;
	}
}

static bool
any_matches(const char *line, const char *end, const char *const *markers)
{
	for (; *markers; markers++)
		if (line_matches(line, end, *markers))
			return true;
	return false;
}

bool
markers_match(const char *line, const char *end, const char *const *markers)
{
	return any_matches(line, end, markers);
}

/* The INI override of a marker list, or NULL when the key is unset. */
char **
markers_words(const struct hqt_ctx *ctx, const char *key)
{
	const char *s = host->conf_get(ctx, key);

	return s ? words_split(s, ",") : NULL;
}

enum hqt_status
markers_status(const struct hqt_ctx *ctx, const char *screen, size_t len,
	       const char *const *working, const char *const *waiting, const char *const *needs)
{
	char **own_working = markers_words(ctx, "working_markers");
	char **own_waiting = markers_words(ctx, "waiting_markers");
	char **own_needs = markers_words(ctx, "needs_markers");
	const char *const *wk = own_working ? (const char *const *)own_working : working;
	const char *const *wt = own_waiting ? (const char *const *)own_waiting : waiting;
	const char *const *nd = own_needs ? (const char *const *)own_needs : needs;
	enum hqt_status st = HQT_STATUS_UNKNOWN;
	const char *end = screen + len;

	while (end > screen) {
		const char *line = end;

		while (line > screen && line[-1] != '\n')
			line--;
		if (any_matches(line, end, wk)) {
			st = HQT_STATUS_WORKING;
			break;
		}
		/* A prompt for the user anywhere (no spinner) beats an idle box. */
		if (st != HQT_STATUS_NEEDS_INPUT && nd != NULL && any_matches(line, end, nd))
			st = HQT_STATUS_NEEDS_INPUT;
		else if (st == HQT_STATUS_UNKNOWN && any_matches(line, end, wt))
			st = HQT_STATUS_WAITING;
		end = line > screen ? line - 1 : screen;
	}
	words_free(own_working);
	words_free(own_waiting);
	words_free(own_needs);
	return st;
}

int
uuid_v4(char *buf, size_t len, struct hqt_error *err)
{
	unsigned char r[16];
	size_t got = 0;

	if (len < 37) {
		host->set_error(err, "id buffer of %zu bytes is too small", len);
		return HQT_ERROR;
	}
	while (got < sizeof(r)) {
		ssize_t n = getrandom(r + got, sizeof(r) - got, 0);

		if (n < 0) {
			host->set_error(err, "getrandom: %s", strerror(errno));
			return HQT_ERROR;
		}
		got += (size_t)n;
	}
	r[6] = (unsigned char)((r[6] & 0x0f) | 0x40); /* version 4 */
	r[8] = (unsigned char)((r[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(buf, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], r[10],
		 r[11], r[12], r[13], r[14], r[15]);
	return HQT_OK;
}

bool
is_uuid(const char *s)
{
	if (!s || strlen(s) != 36)
		return false;
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != '-' : !strchr("0123456789abcdefABCDEF", s[i]))
			return false;
	}
	return true;
}

bool
id_ok(const char *s)
{
	static const char alnum[] =
		"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	size_t n;

	if (!s || !s[0] || !strchr(alnum, s[0]))
		return false;
	for (n = 0; s[n] && (strchr(alnum, s[n]) || strchr("._-", s[n])); n++)
		;
	return s[n] == '\0';
}

int
id_copy(const char *id, char *buf, size_t len, struct hqt_error *err)
{
	if (strlen(id) >= len) {
		host->set_error(err, "session id '%s' is too long", id);
		return HQT_ERROR;
	}
	memcpy(buf, id, strlen(id) + 1);
	return HQT_OK;
}

char *
home_path(const struct hqt_ctx *ctx, const char *path)
{
	if (path[0] == '~' && (path[1] == '/' || path[1] == '\0'))
		return xasprintf("%s%s", ctx->home, path + 1);
	return xasprintf("%s", path);
}

char *
state_path(const struct hqt_ctx *ctx, const struct hqt_request *req, const char *path)
{
	char *p = home_path(ctx, path), *out;
	size_t n = strlen(ctx->home);

	if (req == NULL ||
	    req->struct_size < offsetof(struct hqt_request, state_root) + sizeof req->state_root ||
	    req->state_root == NULL)
		return p;
	if (n > 1 && !strncmp(p, ctx->home, n) && (p[n] == '/' || p[n] == '\0'))
		out = xasprintf("%s/home%s", req->state_root, p + n);
	else
		out = xasprintf("%s/root%s", req->state_root, p);
	free(p);
	return out;
}

void
bind_path(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *path, unsigned flags)
{
	char *p = home_path(ctx, path);

	host->bind_add(out, p, flags);
	free(p);
}

/* Words of a command line, for finding the paths in it ("${HOME}" stays
 * whole: braces are no separator). */
static const char COMMAND_SEPS[] = " \t\r\n'\"`;|&()<>=,[]";

bool
path_plain(const char *s)
{
	if (!*s)
		return false;
	while (*s) {
		size_t k = strcspn(s, "/");

		if (k == 0 || (k == 1 && s[0] == '.') || (k == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += k;
		if (*s == '/')
			s++;
	}
	return true;
}

static char *
home_word(const struct hqt_ctx *ctx, const char *w)
{
	static const char *const homes[] = {"~/", "$HOME/", "${HOME}/"};

	for (size_t i = 0; i < sizeof homes / sizeof homes[0]; i++)
		if (!strncmp(w, homes[i], strlen(homes[i])))
			return xasprintf("%s/%s", ctx->home, w + strlen(homes[i]));
	return w[0] == '/' ? xasprintf("%s", w) : NULL;
}

void
protect_named_files(const struct hqt_ctx *ctx, struct hqt_binds *out, const char *dir,
		    const char *text)
{
	char **words = words_split(text, COMMAND_SEPS);
	size_t n = strlen(dir);

	for (char **w = words; *w; w++) {
		char *p = home_word(ctx, *w);
		struct stat st;

		/* Inside dir, spelled plainly: no way back out of it. */
		if (p && !strncmp(p, dir, n) && p[n] == '/' && path_plain(p + n + 1) &&
		    lstat(p, &st) == 0 && (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
			host->bind_add(out, p, HQT_BIND_RO);
		free(p);
	}
	words_free(words);
}

char *
read_text(const char *path, size_t max)
{
	FILE *f = fopen(path, "re");
	char *buf;
	size_t len;

	if (!f)
		return NULL;
	buf = xmalloc(max + 1);
	len = fread(buf, 1, max + 1, f);
	fclose(f);
	if (len > max) {
		free(buf);
		return NULL;
	}
	buf[len] = '\0';
	return buf;
}

void
bind_project(struct hqt_binds *out, const char *const names[])
{
	for (const char *const *p = names; *p; p++)
		host->bind_add(out, *p, HQT_BIND_PROJECT | HQT_BIND_PROTECT);
}

bool
same_dir(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];

	if (!strcmp(a, b))
		return true;
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}

int
file_times(const char *path, int64_t *mtime, int64_t *born)
{
	struct statx st;

	if (statx(AT_FDCWD, path, 0, STATX_TYPE | STATX_MTIME | STATX_BTIME, &st) < 0 ||
	    !S_ISREG(st.stx_mode))
		return -1;
	*mtime = st.stx_mtime.tv_sec;
	*born = (st.stx_mask & STATX_BTIME) ? st.stx_btime.tv_sec : *mtime;
	return 0;
}

char *
plugin_file(const char *name)
{
	Dl_info info;
	char *dir, *slash, *path;
	struct stat st;

	/* Any symbol of this object names the .so it came from. */
	if (dladdr((const void *)&plugin_file, &info) == 0 || info.dli_fname == NULL ||
	    info.dli_fname[0] != '/')
		return NULL;
	dir = xasprintf("%s", info.dli_fname);
	slash = strrchr(dir, '/');
	*slash = '\0';
	path = xasprintf("%s/%s", dir, name);
	free(dir);
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		free(path);
		return NULL;
	}
	return path;
}

bool
root_owned_path(const char *path)
{
	char *p = realpath(path, NULL);
	bool ok = p != NULL;

	while (ok) {
		struct stat st;
		char *slash;

		ok = stat(p, &st) == 0 && st.st_uid == 0 && !(st.st_mode & (S_IWGRP | S_IWOTH));
		if (!ok || strcmp(p, "/") == 0)
			break;
		slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(p);
	return ok;
}

void
event_id(const char *sid, char *id, size_t id_len)
{
	if (sid != NULL && is_uuid(sid) && strlen(sid) < id_len)
		memcpy(id, sid, strlen(sid) + 1);
}
