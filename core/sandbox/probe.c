/* probe.c: is the sandbox available here (bwrap, its options, a real run of the
 * argv shape), its caches, and bwrap's errors mapped to a fix. */
#include "sandbox-int.h"
#include "seccomp-filter.h"
#include "process.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

/*
 * argv (argv[0] absolute) through process.c: an empty environment, stdin
 * /dev/null, stdout and stderr captured (64 KiB each), the seccomp program
 * at descriptor 3 when seccomp_fd > 2, killed after timeout_ms.  0 with *r,
 * or a negative errno.
 */
static int
run_capture(char *const argv[], int seccomp_fd, int timeout_ms, struct spawn_result *r)
{
	static char *const no_env[] = { NULL };
	struct spawn_opts o = {
		.timeout_ms = timeout_ms,
		.max_output = 65536,
		.pass_fd = seccomp_fd > 2 ? seccomp_fd : 0,
	};

	return spawn_capture_opts(argv, no_env, &o, r, NULL);
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
	char *help = NULL, *errt, *err = NULL, *tru;
	struct strv av = STRV_INIT;
	struct spawn_result r = { 0 };
	int rc, fd;

	out->bwrap = xstrdup(bwrap);
	if (run_capture((char *[]){ (char *)bwrap, "--version", NULL }, -1, 5000, &r) == 0) {
		if (r.status == 0 && !r.signaled && strncmp(r.out, "bubblewrap ", 11) == 0) {
			char *v = first_line(r.out + 11);
			if (strspn(v, "0123456789.") == strlen(v) && *v != '\0')
				out->version = v;
			else
				free(v);
		}
		spawn_result_free(&r);
	}
	if (run_capture((char *[]){ (char *)bwrap, "--help", NULL }, -1, 5000, &r) == 0) {
		help = r.out; /* taken */
		r.out = NULL;
		spawn_result_free(&r);
	}
	out->features = features_from_help(help != NULL ? help : "");
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
	rc = run_capture(av.v, fd, 10000, &r);
	close(fd);
	errt = rc == 0 ? r.err : NULL;
	if (rc == 0 && r.status == 0 && !r.signaled) {
		out->available = true;
	} else if (rc < 0) {
		out->reason = xasprintf("cannot run %s: %s", bwrap, strerror(-rc));
		out->fix = xstrdup("sudo apt-get install bubblewrap");
	} else if (r.signaled && *errt == '\0') {
		out->reason = xasprintf("bwrap was killed by signal %d (timed out?)", r.status - 128);
		out->fix = xstrdup("run `bwrap --unshare-user --ro-bind /usr /usr /usr/bin/true` "
				   "by hand to see why");
	} else {
		sandbox_explain_failure(errt, &out->reason, &out->fix);
	}
out:
	strv_clear(&av);
	spawn_result_free(&r);
	free(help);
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
