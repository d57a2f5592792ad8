/* probe.c: is the sandbox available here (bwrap, its options, a real run of the
 * argv shape), its caches, and bwrap's errors mapped to a fix. */
#include "sandbox-int.h"
#include "seccomp-filter.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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
