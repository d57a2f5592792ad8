/* path.c: path helpers of the sandbox's plan: resolution with every symlink on
 * the way, and the host lookup of a harness executable. */
#include "sandbox-int.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Paths                                                                    */

/* path is dir or lies below it; both absolute and normalised. */
bool
path_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

char *
path_join(const char *dir, const char *name)
{
	return strcmp(dir, "/") == 0 ? xasprintf("/%s", name) : xasprintf("%s/%s", dir, name);
}

char *
path_dirname(const char *p)
{
	const char *s = strrchr(p, '/');

	if (s == NULL || s == p)
		return xstrdup("/");
	return xstrndup(p, (size_t)(s - p));
}

const char *
path_basename(const char *p)
{
	const char *s = strrchr(p, '/');

	return s != NULL ? s + 1 : p;
}

int
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
char *
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
char *
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
