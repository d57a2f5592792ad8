/* launch.c: the plan file between `hqt new`/`resume` and hqt-launch. */
#include "launch.h"
#include "util.h"
#include "version.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * dir/plan: NUL-terminated words, so that any byte but NUL (which no argv
 * word, path or environment entry can hold) passes unchanged:
 *   "hqt-plan-2" EXE CWD ("plain" | "sandbox") ARGC ARGV... ENVC ENVP...
 *   NETDIR SQUID NETC HOSTS... GITC GIT... "end"
 * The counts are decimal; NETDIR and SQUID are "" without net = allow; GIT
 * is none or the four words of struct launch_plan's git (sandboxed only).
 * "end" proves the file whole.
 */
#define PLAN_MAGIC "hqt-plan-3"
#define PLAN_MAX (8u << 20)  /* far above ARG_MAX: bwrap's argv and an environment */
#define SECCOMP_MAX (1u << 20)

void
launch_plan_clear(struct launch_plan *p)
{
	free(p->exe);
	free(p->cwd);
	strv_clear(&p->argv);
	strv_clear(&p->envp);
	free(p->net_dir);
	free(p->squid);
	strv_clear(&p->net_hosts);
	strv_clear(&p->git);
	memset(p, 0, sizeof *p);
}

static void
put(struct strv *w, const char *s)
{
	strv_push(w, s);
}

static int
write_all(int fd, const char *buf, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

/* path created exclusively, 0600, with len bytes of buf. */
static int
write_new(const char *path, const char *buf, size_t len, char **err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600), e;

	if (fd < 0 || write_all(fd, buf, len) != 0) {
		e = errno;
		if (fd >= 0) {
			close(fd);
			unlink(path);
		}
		set_err(err, "cannot write '%s': %s", path, strerror(e));
		return -1;
	}
	if (close(fd) != 0) {
		e = errno;
		unlink(path);
		set_err(err, "cannot write '%s': %s", path, strerror(e));
		return -1;
	}
	return 0;
}

static int
write_seccomp(const char *dir, int fd, char **err)
{
	char *buf = xmalloc(SECCOMP_MAX), *path;
	size_t len = 0;
	ssize_t n = 0;
	int rc;

	while (len < SECCOMP_MAX && (n = pread(fd, buf + len, SECCOMP_MAX - len, (off_t)len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		len += (size_t)n;
	}
	path = xasprintf("%s/seccomp", dir);
	if (n < 0 || len == 0 || len >= SECCOMP_MAX) {
		set_err(err, "cannot read the seccomp program: %s",
			n < 0 ? strerror(errno) : "bad size");
		rc = -1;
	} else
		rc = write_new(path, buf, len, err);
	free(path);
	free(buf);
	return rc;
}

int
launch_plan_write(const char *dir, const struct launch_plan *p, int seccomp_fd, char **err)
{
	struct strv w = STRV_INIT;
	size_t len = 0, off = 0;
	char *buf, *path;
	int rc;

	if (p->sandboxed && write_seccomp(dir, seccomp_fd, err) != 0)
		return -1;
	put(&w, PLAN_MAGIC);
	put(&w, p->exe);
	put(&w, p->cwd);
	put(&w, p->sandboxed ? "sandbox" : "plain");
	strv_pushf(&w, "%zu", p->argv.n);
	for (size_t i = 0; i < p->argv.n; i++)
		put(&w, p->argv.v[i]);
	strv_pushf(&w, "%zu", p->envp.n);
	for (size_t i = 0; i < p->envp.n; i++)
		put(&w, p->envp.v[i]);
	put(&w, p->net_dir != NULL ? p->net_dir : "");
	put(&w, p->net_dir != NULL && p->squid != NULL ? p->squid : "");
	strv_pushf(&w, "%zu", p->net_hosts.n);
	for (size_t i = 0; i < p->net_hosts.n; i++)
		put(&w, p->net_hosts.v[i]);
	strv_pushf(&w, "%zu", p->git.n);
	for (size_t i = 0; i < p->git.n; i++)
		put(&w, p->git.v[i]);
	put(&w, "end");
	for (size_t i = 0; i < w.n; i++)
		len += strlen(w.v[i]) + 1;
	buf = xmalloc(len);
	for (size_t i = 0; i < w.n; i++) {
		size_t l = strlen(w.v[i]) + 1;

		memcpy(buf + off, w.v[i], l);
		off += l;
	}
	strv_clear(&w);
	path = xasprintf("%s/plan", dir);
	rc = len > PLAN_MAX ? -1 : write_new(path, buf, len, err);
	if (len > PLAN_MAX)
		set_err(err, "the session's command and environment are too large (%zu bytes)", len);
	free(path);
	free(buf);
	if (rc != 0)
		launch_plan_remove(dir);
	return rc;
}

/* The words of the plan, one at a time. */
struct reader {
	const char *buf;
	size_t len, off;
};

static const char *
next_word(struct reader *r)
{
	const char *w;
	const char *nul;

	if (r->off >= r->len)
		return NULL;
	w = r->buf + r->off;
	nul = memchr(w, '\0', r->len - r->off);
	if (nul == NULL)
		return NULL;
	r->off += (size_t)(nul - w) + 1;
	return w;
}

static int
next_words(struct reader *r, struct strv *out)
{
	const char *w = next_word(r);
	char *end;
	unsigned long n;

	if (w == NULL)
		return -1;
	errno = 0;
	n = strtoul(w, &end, 10);
	if (errno != 0 || end == w || *end != '\0' || n > r->len)
		return -1;
	for (unsigned long i = 0; i < n; i++) {
		if ((w = next_word(r)) == NULL)
			return -1;
		strv_push(out, w);
	}
	return 0;
}

int
launch_plan_read(const char *dir, struct launch_plan *p, int *seccomp_fd, char **err)
{
	char *path = xasprintf("%s/plan", dir), *buf;
	const char *w, *exe, *cwd, *mode, *net_dir, *squid;
	struct reader r;
	size_t len;

	memset(p, 0, sizeof *p);
	*seccomp_fd = -1;
	buf = read_file(path, PLAN_MAX, &len);
	if (buf == NULL) {
		set_err(err, "cannot read the session's plan '%s': %s", path, strerror(errno));
		free(path);
		return -1;
	}
	unlink(path);
	free(path);
	r.buf = buf;
	r.len = len;
	r.off = 0;
	if ((w = next_word(&r)) == NULL || strcmp(w, PLAN_MAGIC) != 0 ||
	    (exe = next_word(&r)) == NULL || (cwd = next_word(&r)) == NULL ||
	    (mode = next_word(&r)) == NULL ||
	    (strcmp(mode, "plain") != 0 && strcmp(mode, "sandbox") != 0) ||
	    next_words(&r, &p->argv) != 0 || next_words(&r, &p->envp) != 0 ||
	    (net_dir = next_word(&r)) == NULL || (squid = next_word(&r)) == NULL ||
	    next_words(&r, &p->net_hosts) != 0 || next_words(&r, &p->git) != 0 ||
	    (p->git.n != 0 && (p->git.n != 4 || strcmp(mode, "sandbox") != 0 ||
			       p->git.v[0][0] != '/' || p->git.v[1][0] != '/' ||
			       p->git.v[2][0] != '/')) ||
	    (w = next_word(&r)) == NULL || strcmp(w, "end") != 0 || r.off != r.len ||
	    exe[0] != '/' || cwd[0] != '/' || p->argv.n == 0 ||
	    (*net_dir != '\0' && (net_dir[0] != '/' || squid[0] != '/' || strcmp(mode, "sandbox") != 0)))
		goto bad;
	if (*net_dir != '\0') {
		p->net_dir = xstrdup(net_dir);
		p->squid = xstrdup(squid);
	}
	p->exe = xstrdup(exe);
	p->cwd = xstrdup(cwd);
	p->sandboxed = strcmp(mode, "sandbox") == 0;
	free(buf);
	if (p->sandboxed) {
		path = xasprintf("%s/seccomp", dir);
		*seccomp_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (*seccomp_fd < 0) {
			set_err(err, "cannot open the sandbox's seccomp program '%s': %s", path,
				strerror(errno));
			free(path);
			launch_plan_clear(p);
			return -1;
		}
		unlink(path);
		free(path);
	}
	return 0;
bad:
	free(buf);
	launch_plan_clear(p);
	set_err(err, "the session's plan in %s is not whole", dir);
	return -1;
}

void
launch_plan_remove(const char *dir)
{
	char *path = xasprintf("%s/plan", dir);

	unlink(path);
	free(path);
	path = xasprintf("%s/seccomp", dir);
	unlink(path);
	free(path);
}

char *
launch_program(void)
{
	static const char *const reldirs[] = {
		HQT_PLUGIN_RELDIR,
#ifdef HQT_BUILD_PLUGIN_RELDIR
		HQT_BUILD_PLUGIN_RELDIR,
#endif
	};

	for (size_t i = 0; i < sizeof reldirs / sizeof reldirs[0]; i++) {
		char *rel = xasprintf("%s/../hqt-launch", reldirs[i]);
		char *p = self_sibling(rel), *real = p != NULL ? realpath(p, NULL) : NULL;

		free(rel);
		free(p);
		if (real != NULL && access(real, X_OK) == 0)
			return real;
		free(real);
	}
	return NULL;
}
