/* util.c: allocation that never fails, formatted strings, small path helpers. */
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static HQT_NORETURN void
out_of_memory(void)
{
	static const char msg[] = "hqt: out of memory\n";

	(void)!write(STDERR_FILENO, msg, sizeof msg - 1);
	abort();
}

void *
xmalloc(size_t size)
{
	void *p = malloc(size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xcalloc(size_t nmemb, size_t size)
{
	void *p = calloc(nmemb ? nmemb : 1, size ? size : 1);

	if (p == NULL)
		out_of_memory();
	return p;
}

void *
xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	void *p;

	if (size != 0 && nmemb > SIZE_MAX / size)
		out_of_memory();
	p = realloc(ptr, nmemb != 0 && size != 0 ? nmemb * size : 1);
	if (p == NULL)
		out_of_memory();
	return p;
}

char *
xstrdup(const char *s)
{
	char *p = strdup(s);

	if (p == NULL)
		out_of_memory();
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = strndup(s, n);

	if (p == NULL)
		out_of_memory();
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *s;

	if (vasprintf(&s, fmt, ap) < 0)
		out_of_memory();
	return s;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	return s;
}

void
set_err(char **errp, const char *fmt, ...)
{
	va_list ap;

	if (errp == NULL)
		return;
	free(*errp);
	va_start(ap, fmt);
	*errp = xvasprintf(fmt, ap);
	va_end(ap);
}

char *
user_home(void)
{
	const char *h = getenv("HOME");
	struct passwd *pw;

	if (h != NULL && *h == '/')
		return xstrdup(h);
	pw = getpwuid(getuid());
	if (pw != NULL && pw->pw_dir != NULL && *pw->pw_dir == '/')
		return xstrdup(pw->pw_dir);
	return NULL;
}

char *
expand_home(const char *path)
{
	char *home, *out;

	if (path[0] != '~' || (path[1] != '\0' && path[1] != '/'))
		return xstrdup(path);
	home = user_home();
	if (home == NULL)
		return xstrdup(path);
	out = xasprintf("%s%s", home, path + 1);
	free(home);
	return out;
}

static char *
xdg_dir(const char *var, const char *fallback)
{
	const char *v = getenv(var);
	char *home, *out;

	if (v != NULL && *v == '/')
		return xstrdup(v);
	home = user_home();
	if (home == NULL)
		return NULL;
	out = xasprintf("%s/%s", home, fallback);
	free(home);
	return out;
}

char *
xdg_data_home(void)
{
	return xdg_dir("XDG_DATA_HOME", ".local/share");
}

char *
xdg_config_home(void)
{
	return xdg_dir("XDG_CONFIG_HOME", ".config");
}

int
mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path), *s;
	struct stat st;

	for (s = p + 1; ; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, mode) != 0 && errno != EEXIST) {
			int e = errno;
			free(p);
			errno = e;
			return -1;
		}
		*s = c;
		if (c == '\0')
			break;
	}
	if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
		free(p);
		errno = ENOTDIR;
		return -1;
	}
	free(p);
	return 0;
}

int
parse_long(const char *s, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0' || isspace((unsigned char)*s))
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

char *
trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r' || e[-1] == '\n'))
		*--e = '\0';
	return s;
}

bool
env_name_valid(const char *s, size_t n)
{
	if (s == NULL || n == 0 || n > ENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

bool
valid_name(const char *s)
{
	if (s == NULL || *s == '\0')
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') ||
		      *s == '_' || *s == '-'))
			return false;
	return true;
}

char *
self_exe(void)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);

	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	return xstrdup(buf);
}

char *
self_sibling(const char *name)
{
	char *exe = self_exe(), *slash, *p;

	if (exe == NULL || (slash = strrchr(exe, '/')) == NULL) {
		free(exe);
		return NULL;
	}
	*slash = '\0';
	p = xasprintf("%s/%s", exe, name);
	free(exe);
	return p;
}

char *
read_file(const char *path, size_t max, size_t *lenp)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t n;

	if (fd < 0)
		return NULL;
	buf = xmalloc(cap + 1);
	for (;;) {
		if (len == cap) {
			if (cap >= max) {
				free(buf);
				close(fd);
				errno = EFBIG;
				return NULL;
			}
			cap *= 2;
			buf = xreallocarray(buf, cap + 1, 1);
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return NULL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	if (lenp != NULL)
		*lenp = len;
	return buf;
}

bool
private_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == getuid() &&
	       (st.st_mode & 077) == 0;
}

bool
make_private_dir(const char *path)
{
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return false;
	return private_dir(path);
}

char *
hqt_runtime_dir(bool make)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char *base = NULL, *hqt;

	if (xdg != NULL && xdg[0] == '/' && private_dir(xdg)) {
		base = xstrdup(xdg);
	} else {
		char *run = xasprintf("/run/user/%u", (unsigned)getuid());

		if (private_dir(run))
			base = run;
		else
			free(run);
	}
	hqt = base != NULL ? xasprintf("%s/hqt", base) : xasprintf("/tmp/hqt-%u", (unsigned)getuid());
	free(base);
	if (make ? !make_private_dir(hqt) : !private_dir(hqt)) {
		free(hqt);
		return NULL;
	}
	return hqt;
}
