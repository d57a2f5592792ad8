/* cmd-doctor.c: hqt doctor [--json]: what works on this machine, and the fix
 * for what does not. */
#include "cmd.h"
#include "gitstore.h"
#include "json-out.h"
#include "sandbox.h"
#include "session.h"
#include "process.h"
#include "db.h"

#include <errno.h>
#include <getopt.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int cmd_doctor_exec(struct hqt_app *app, int argc, char **argv);

const struct cmd_entry cmd_doctor_entry = {
	.name = "doctor",
	.usage = "doctor [--json]",
	.summary = "check tmux, bubblewrap, the database, the config and each plugin",
	.help = "Exits 0 when hqt can run sessions (bubblewrap missing only disables\n"
		"sandboxed sessions), 1 otherwise.  Every failed check prints a fix.\n"
		"\n"
		"Options:\n"
		"  --json   {\"ok\": bool, \"checks\": [{\"name\", \"ok\", \"detail\", \"fix\"}]}\n",
	.exec = cmd_doctor_exec,
	/* The rest (tmux, the plugins) is loaded by the checks themselves:
	 * what fails there is reported, not fatal. */
	.needs = CMD_CONFIG,
};

struct check {
	char *name;
	bool ok;
	bool fatal;   /* a failure means hqt cannot run sessions */
	char *detail;
	char *fix;    /* NULL when ok */
};

struct report {
	struct check *v;
	size_t n;
};

static void
add(struct report *r, const char *name, bool ok, bool fatal, char *detail, char *fix)
{
	r->v = xreallocarray(r->v, r->n + 1, sizeof *r->v);
	r->v[r->n++] = (struct check){ xstrdup(name), ok, fatal, detail,
				       ok ? (free(fix), NULL) : fix };
}

/* tmux_version also enforces the oldest tmux hqt works with. */
static void
check_tmux(struct report *r, struct hqt_app *app)
{
	char *path = find_in_path("tmux", NULL), *text = NULL, *err = NULL;

	if (path == NULL) {
		add(r, "tmux", false, true, xstrdup("tmux not found on PATH"),
		    xstrdup("install it: sudo apt-get install tmux"));
		return;
	}
	if (cmd_tmux(app) != 0 || tmux_version(&app->tmux, NULL, NULL, &text, &err) != 0) {
		add(r, "tmux", false, true, xasprintf("%s: %s", path, err ? err : "unusable"),
		    xasprintf("install tmux %d.%d or newer: sudo apt-get install tmux",
			      TMUX_MIN_MAJOR, TMUX_MIN_MINOR));
		free(err);
		free(path);
		return;
	}
	add(r, "tmux", true, true, xasprintf("%s (%s)", text, path), NULL);
	free(text);
	free(path);
}

static bool
check_bwrap(struct report *r, char **bwrap)
{
	struct sandbox_probe p;
	bool ok;

	sandbox_probe(&p);
	ok = p.available;
	if (p.available && p.bwrap != NULL)
		*bwrap = xstrdup(p.bwrap);
	if (p.available)
		add(r, "bubblewrap", true, false,
		    xasprintf("bwrap %s (%s), sandboxed sessions available",
			      p.version ? p.version : "?", p.bwrap), NULL);
	else
		add(r, "bubblewrap", false, false,
		    xasprintf("sandboxed sessions unavailable: %s", p.reason),
		    xstrdup(p.fix ? p.fix : "see docs/sandbox.md"));
	sandbox_probe_clear(&p);
	return ok;
}

/*
 * What net = allow needs beyond bubblewrap: squid (looked for where the
 * plan looks), and Landlock's scoping, which keeps a net = on session
 * away from the host's abstract unix sockets.
 */
static void
check_network(struct report *r, const char *bwrap)
{
	static const char *const where[] = { "/usr/sbin/squid", "/usr/local/sbin/squid" };
	char *squid = find_in_path("squid", NULL);
	int abi = sandbox_landlock_abi();

	for (size_t i = 0; squid == NULL && i < ARRAY_SIZE(where); i++)
		if (access(where[i], X_OK) == 0)
			squid = xstrdup(where[i]);
	if (squid != NULL) {
		long long ms = 0;
		char *err = NULL;

		if (sandbox_proxy_probe(bwrap, squid, &ms, &err) == 0)
			add(r, "net allow", true, false,
			    xasprintf("squid (%s) listened in %lld ms and refused a name off its "
				      "list: sandboxed sessions can have net = allow", squid, ms), NULL);
		else
			add(r, "net allow", false, false,
			    xasprintf("squid (%s) as a session's proxy: %s", squid, err),
			    xstrdup("see the proxy's words above; sessions with net = allow will "
				    "not start until it does"));
		free(err);
	} else
		add(r, "net allow", false, false,
		    xstrdup("squid not found: sessions with net = allow will not start"),
		    xstrdup("sudo apt-get install squid"));
	if (abi >= 6)
		add(r, "landlock", true, false,
		    xasprintf("ABI %d: a sandbox reaches no abstract unix socket and signals no "
			      "process outside it, also with net = on", abi), NULL);
	else
		add(r, "landlock", false, false,
		    xasprintf("%s: with net = on a sandbox can reach the host's abstract unix "
			      "sockets (X11, D-Bus)", abi > 0 ? "ABI below 6" : "no Landlock"),
		    xstrdup("use net = allow or off, or a kernel of 6.12 or newer"));
	free(squid);
}

/* Commits from a sandbox (gitstore.h) need a git whose upload-pack can
 * serve a store safely. */
static void
check_git_store(struct report *r)
{
	char *why = NULL;

	if (gitstore_supported(&why))
		add(r, "git commits", true, false,
		    xstrdup("sandboxed writable sessions in a worktree commit into a git store of "
			    "their own, imported by hqt sync and when they end"), NULL);
	else
		add(r, "git commits", false, false,
		    xasprintf("%s: sandboxed sessions cannot commit (their .git stays read-only)",
			      why),
		    xstrdup("install git 2.39.4 or newer: sudo apt-get install git"));
	free(why);
}

/* Each host (hqt host): its hqt answers over ssh, with its version. */
static void
check_hosts(struct report *r, struct hqt_app *app)
{
	struct db_host_list *l = NULL;
	char *err = NULL, **version, **why;

	/* A database not made yet has no hosts (and doctor makes none). */
	if (app->cfg.db_path == NULL || access(app->cfg.db_path, F_OK) != 0)
		return;
	if (app_db(app, &err) != 0 || db_host_list(app->db, &l, &err) != 0) {
		free(err);
		return;
	}
	version = xcalloc(l->n + 1, sizeof *version);
	why = xcalloc(l->n + 1, sizeof *why);
	cmd_host_versions(l, version, why);
	for (size_t i = 0; i < l->n; i++) {
		char *name = xasprintf("host %s", l->v[i].name);
		if (version[i] != NULL)
			add(r, name, true, false, xasprintf("hqt %s over ssh %s", version[i],
							    l->v[i].target), NULL);
		else
			add(r, name, false, false, xstrdup(why[i] != NULL ? why[i] : "no answer"),
			    xasprintf("ssh %s true must work without a prompt, and hqt be "
				      "installed there", l->v[i].target));
		free(name);
		free(version[i]);
		free(why[i]);
	}
	free(version);
	free(why);
	db_host_list_free(l);
}

/* The nearest existing ancestor of path, for a database not created yet. */
static char *
existing_ancestor(const char *path)
{
	char *p = xstrdup(path), *slash;

	while ((slash = strrchr(p, '/')) != NULL) {
		*slash = '\0';
		if (*p == '\0') {
			free(p);
			return xstrdup("/");
		}
		if (access(p, F_OK) == 0)
			return p;
	}
	free(p);
	return xstrdup(".");
}

static void
check_db(struct report *r, const char *path)
{
	struct db *db = NULL;
	char *err = NULL, *dir;
	struct stat st;

	if (stat(path, &st) == 0) {
		if (db_open(path, &db, &err) != 0 || db_check(db, &err) != 0) {
			add(r, "database", false, true, xasprintf("%s", err),
			    xasprintf("move '%s' aside (hqt will create a new one) or point --db elsewhere",
				      path));
			free(err);
			db_close(db);
			return;
		}
		add(r, "database", true, true, xasprintf("%s (schema %d)", path, DB_SCHEMA_VERSION),
		    NULL);
		db_close(db);
		return;
	}
	/* Not created yet: say whether it can be, without creating anything. */
	dir = existing_ancestor(path);
	if (access(dir, W_OK | X_OK) == 0)
		add(r, "database", true, true, xasprintf("%s (created on first use)", path), NULL);
	else
		add(r, "database", false, true,
		    xasprintf("cannot create %s: '%s' is not writable", path, dir),
		    xstrdup("set [hqt] db, $HQT_DB or --db to a writable place"));
	free(dir);
}

/*
 * Would a writable sandboxed session of h start?  The plan `hqt new` makes
 * (session_stand_in_argv), for an empty stand-in project: what stops it is
 * in the harness's own files (a settings.json that is a link, say), so the
 * user hears of it here rather than from their first `hqt new --sandbox`.
 */
static void
check_sandbox_plan(struct report *r, struct hqt_app *app, const struct harness *h)
{
	char tmpl[] = "/tmp/hqt-doctor-XXXXXX", *err = NULL;
	struct strv argv = STRV_INIT;

	if (mkdtemp(tmpl) == NULL)
		return;
	if (session_stand_in_argv(app, h, tmpl, true, &argv, &err) != 0) {
		char *name = xasprintf("sandbox %s", h->name);
		add(r, name, false, false, xasprintf("sandboxed sessions will not start: %s", err),
		    xstrdup("what the reason says; docs/sandbox.md explains each case"));
		free(name);
		free(err);
	}
	strv_clear(&argv);
	rmdir(tmpl);
}

/* "1.2.3" against "1.2.0": <0, 0, >0, numerically part by part. */
static int
version_cmp(const char *a, const char *b)
{
	while (*a != '\0' || *b != '\0') {
		long x = strtol(a, (char **)&a, 10), y = strtol(b, (char **)&b, 10);

		if (x != y)
			return x < y ? -1 : 1;
		a += *a == '.';
		b += *b == '.';
		if ((*a != '\0' && !isdigit((unsigned char)*a)) ||
		    (*b != '\0' && !isdigit((unsigned char)*b)))
			break;
	}
	return 0;
}

/* The first "N.N[.N...]" word of text, or NULL.  Caller frees. */
static char *
version_in(const char *text)
{
	for (const char *c = text; c != NULL && *c != '\0'; c++) {
		if (isdigit((unsigned char)*c) && (c == text || !isalnum((unsigned char)c[-1]))) {
			size_t n = strspn(c, "0123456789.");
			if (n >= 3 && memchr(c, '.', n) != NULL) {
				while (n > 0 && c[n - 1] == '.')
					n--;
				return xstrndup(c, n);
			}
			c += n - 1;
		}
	}
	return NULL;
}

/*
 * The harness's own --version against the versions its plugin was
 * checked with: a warning outside them (it may work; its screens and files
 * are what changes between versions).
 */
static void
check_version(struct report *r, const struct harness *h, const char *path)
{
	const struct hqt_plugin *d = h->plugin->desc;
	char *const argv[] = { (char *)path, (char *)d->version_flag, NULL };
	/* node CLIs take seconds to say it on a loaded machine (gemini
	 * relaunches itself first: 6 s seen with 2 cores busy) */
	struct spawn_opts o = { .timeout_ms = 15000 };
	struct spawn_result res;
	char *have = NULL, *lo = NULL, *hi, *name, *err = NULL;

	if (d->verified_versions == NULL || d->version_flag == NULL)
		return;
	name = xasprintf("version %s", h->name);
	memset(&res, 0, sizeof res);
	if (spawn_capture_opts(argv, NULL, &o, &res, &err) == 0 && res.status == 0)
		have = version_in(res.out);
	spawn_result_free(&res);
	free(err);
	lo = xstrdup(d->verified_versions);
	hi = strstr(lo, " - ");
	if (hi != NULL) {
		*hi = '\0';
		hi += 3;
	} else {
		hi = lo;
	}
	if (have == NULL)
		add(r, name, false, false,
		    xasprintf("%s %s printed no version", path, d->version_flag), NULL);
	else if (version_cmp(have, lo) < 0 || version_cmp(have, hi) > 0)
		add(r, name, false, false,
		    xasprintf("%s is %s; the %s plugin was verified with %s", h->name, have,
			      h->plugin->desc->name, d->verified_versions),
		    xasprintf("it may work; if its status or resume misbehave, use %s %s",
			      h->name, d->verified_versions));
	else
		add(r, name, true, false,
		    xasprintf("%s %s, verified with %s", h->name, have, d->verified_versions), NULL);
	free(have);
	free(lo);
	free(name);
}

static void
check_plugins(struct report *r, struct hqt_app *app, bool sandbox)
{
	struct registry *reg = &app->reg;
	char *err = NULL;

	if (access(app->cfg.plugin_dir, R_OK | X_OK) != 0)
		add(r, "plugins", false, true,
		    xasprintf("plugin directory '%s': %s", app->cfg.plugin_dir, strerror(errno)),
		    xstrdup("set --plugin-dir, $HQT_PLUGIN_DIR or [hqt] plugin_dir to the directory "
			    "holding claude.so, codex.so, ..."));
	for (size_t i = 0; i < reg->nplugins; i++) {
		char *name = xasprintf("plugin %s", reg->plugins[i].desc->name);
		add(r, name, true, false, xasprintf("loaded from %s (ABI %s)",
			reg->plugins[i].file, reg->plugins[i].abi), NULL);
		free(name);
	}
	for (size_t i = 0; i < reg->nrefused; i++)
		add(r, "plugin", false, false,
		    xasprintf("refused %s: %s", reg->refused[i].file, reg->refused[i].reason),
		    xasprintf("rebuild or remove %s", reg->refused[i].file));
	for (size_t i = 0; i < reg->warnings.n; i++)
		add(r, "config", false, false, xstrdup(reg->warnings.v[i]),
		    xasprintf("edit %s", app->cfg.path ? app->cfg.path : "hqt.ini"));
	if (reg->nharnesses == 0)
		add(r, "harnesses", false, true, xstrdup("no harness plugin loaded"),
		    xstrdup("check [plugins] load and the plugin directory"));
	for (size_t i = 0; i < reg->nharnesses; i++) {
		const struct harness *h = &reg->harnesses[i];
		struct strv argv = STRV_INIT;
		char *name = xasprintf("harness %s", h->name), *path = NULL;
		bool found = false;

		/* The very command a session would run, from the plan of a new
		 * session (in "/": any directory will do). */
		if (session_stand_in_argv(app, h, "/", false, &argv, &err) != 0) {
			add(r, name, false, false, xstrdup(err), xasprintf("check [harness.%s]", h->name));
			free(err);
			err = NULL;
		} else if ((path = find_in_path(argv.v[0], NULL)) != NULL) {
			add(r, name, true, false, xasprintf("%s found at %s", argv.v[0], path), NULL);
			check_version(r, h, path);
			found = true;
		} else
			add(r, name, false, false, xasprintf("%s not found on PATH", argv.v[0]),
			    xasprintf("install %s or add its directory to PATH", argv.v[0]));
		free(path);
		strv_clear(&argv);
		free(name);
		/* A harness that is not there cannot be sandboxed either; said once. */
		if (sandbox && found)
			check_sandbox_plan(r, app, h);
	}
}

static int
cmd_doctor_exec(struct hqt_app *app, int argc, char **argv)
{
	struct report r = { NULL, 0 };
	bool json = false, ok = true;
	int c, rc;

	if ((c = cmd_json_args(&cmd_doctor_entry, argc, argv, 0, &json, &rc)) < 0)
		return rc;
	if (cmd_prepare(app, &cmd_doctor_entry, NULL, 0, NULL) != 0)
		return EXIT_FAIL;
	add(&r, "config", true, true,
	    app->cfg.path ? xasprintf("using %s", app->cfg.path)
			  : xstrdup("no hqt.ini found; using built-in defaults"), NULL);
	check_tmux(&r, app);
	char *bwrap = NULL;
	bool sandbox = check_bwrap(&r, &bwrap);
	if (sandbox && bwrap != NULL)
		check_network(&r, bwrap);
	if (sandbox)
		check_git_store(&r);
	free(bwrap);
	check_db(&r, app->cfg.db_path);
	check_hosts(&r, app);
	cmd_registry(app);
	check_plugins(&r, app, sandbox);

	for (size_t i = 0; i < r.n; i++)
		if (!r.v[i].ok && r.v[i].fatal)
			ok = false;
	if (json) {
		json_t *doc = json_object(), *checks = json_array();
		for (size_t i = 0; i < r.n; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string_or_null(r.v[i].name));
			json_object_set_new(o, "ok", json_boolean(r.v[i].ok));
			json_object_set_new(o, "detail", json_string_or_null(r.v[i].detail));
			json_object_set_new(o, "fix", json_string_or_null(r.v[i].fix));
			json_array_append_new(checks, o);
		}
		json_object_set_new(doc, "ok", json_boolean(ok));
		json_object_set_new(doc, "checks", checks);
		if (json_print(doc) != 0)
			ok = false;
	} else {
		for (size_t i = 0; i < r.n; i++) {
			printf("%-4s  %-16s %s\n", r.v[i].ok ? "ok" : r.v[i].fatal ? "FAIL" : "warn",
			       r.v[i].name, r.v[i].detail);
			if (r.v[i].fix != NULL)
				printf("      %-16s fix: %s\n", "", r.v[i].fix);
		}
		printf("%s\n", ok ? "hqt can run sessions." : "hqt cannot run sessions until the FAIL lines are fixed.");
	}
	for (size_t i = 0; i < r.n; i++) {
		free(r.v[i].name);
		free(r.v[i].detail);
		free(r.v[i].fix);
	}
	free(r.v);
	return ok ? EXIT_OK : EXIT_FAIL;
}
