/* e2e.c: the e2e tests' throw-away user with the real harnesses, the
 * stand-in model server, and the screen helpers (see e2e.h). */
#include "e2e.h"

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <jansson.h>

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The key the harnesses send to the stand-in; claude asks about a key from
 * the environment once, and remembers the answer by its last 20 characters. */
static const char API_KEY[] = "sk-ant-e2e-test-key-0123456789";

static const char *
need_env(const char *name)
{
	const char *v = getenv(name);

	cr_assert(v != NULL && v[0], "$%s unset (run through ctest)", name);
	return v;
}

/* Version V of claude as its native installer lays it out:
 * ~/.local/share/claude/versions/V (the binary) and ~/.local/bin/claude -> it.
 * The npm package ships that same native binary. */
static void
lay_out_claude(const struct e2e *e)
{
	char *bin = fmt("%s/claude/node_modules/@anthropic-ai/claude-code/bin/claude.exe", e->cache);
	char *ver = fmt("%s/.local/share/claude/versions/%s", e->te.home,
			need_env("HQT_E2E_CLAUDE_CODE_VERSION"));
	char *lnk = fmt("%s/.local/bin/claude", e->te.home);

	write_file(ver, "", 0755);
	unlink(ver);
	/* A hard link is the file itself, as the installer leaves it; across
	 * file systems a symbolic link has to do. */
	if (link(bin, ver) != 0)
		cr_assert_eq(symlink(bin, ver), 0, "symlink %s: %s", ver, strerror(errno));
	write_file(lnk, "", 0755);
	unlink(lnk);
	cr_assert_eq(symlink(ver, lnk), 0, "symlink %s: %s", lnk, strerror(errno));
	free(bin);
	free(ver);
	free(lnk);
}

/* The first-run dialogs claude would show, answered in the test HOME only:
 * onboarding (theme), the API key from the environment, trust of the project. */
static void
claude_state(const struct e2e *e)
{
	json_t *root = json_pack("{s:b, s:s, s:{s:[s], s:[]}, s:{s:{s:b, s:b}}}",
				 "hasCompletedOnboarding", 1, "theme", "dark",
				 "customApiKeyResponses", "approved",
				 API_KEY + strlen(API_KEY) - 20, "rejected",
				 "projects", e->proj, "hasTrustDialogAccepted", 1,
				 "hasCompletedProjectOnboarding", 1);
	char *text = json_dumps(root, JSON_INDENT(2));
	char *path = fmt("%s/.claude.json", e->te.home);

	cr_assert_not_null(text);
	write_file(path, text, 0600);
	free(path);
	free(text);
	json_decref(root);
}

void
e2e_codex_config(const struct e2e *e, const char *base_url)
{
	char *path = fmt("%s/.codex/config.toml", e->te.home);
	char *text = fmt("model = \"e2e-model\"\n"
			 "model_provider = \"e2e\"\n"
			 "check_for_update_on_startup = false\n"
			 "\n"
			 "[model_providers.e2e]\n"
			 "name = \"e2e stand-in\"\n"
			 "base_url = \"%s\"\n"
			 "env_key = \"OPENAI_API_KEY\"\n"
			 "wire_api = \"responses\"\n"
			 "\n"
			 "[projects.\"%s\"]\n"
			 "trust_level = \"trusted\"\n",
			 base_url, e->proj);

	write_file(path, text, 0600);
	free(path);
	free(text);
}

/* Gemini CLI's and Qwen Code's first-run choices, made in the test HOME
 * only: the API key as the way in (no auth dialog), and no usage statistics
 * or update checks (nothing phones home from a test). */
static void
gemini_state(const struct e2e *e)
{
	char *path = fmt("%s/.gemini/settings.json", e->te.home);

	write_file(path,
		   "{\"security\": {\"auth\": {\"selectedType\": \"gemini-api-key\"}},\n"
		   " \"privacy\": {\"usageStatisticsEnabled\": false},\n"
		   " \"general\": {\"enableAutoUpdate\": false,"
		   " \"enableAutoUpdateNotification\": false},\n"
		   " \"model\": {\"name\": \"e2e-model\"}}\n", 0600);
	free(path);
	/* qwen: the stand-in through Chat Completions (OPENAI_BASE_URL), and
	 * asking before commands ("default"; its own default, auto, asks an LLM
	 * classifier the stand-in cannot be). */
	path = fmt("%s/.qwen/settings.json", e->te.home);
	write_file(path,
		   "{\"general\": {\"enableAutoUpdate\": false},\n"
		   " \"privacy\": {\"usageStatisticsEnabled\": false},\n"
		   " \"security\": {\"auth\": {\"selectedType\": \"openai\"}},\n"
		   " \"model\": {\"name\": \"e2e-model\"},\n"
		   " \"tools\": {\"approvalMode\": \"default\"}}\n", 0600);
	free(path);
}

/* opencode's config in the test HOME: the stand-in as an OpenAI-compatible
 * provider (bundled: nothing to install), asking before shell commands (its
 * default runs them), and its plugin package seeded where it would npm-
 * install it at start (offline: forever). */
static void
opencode_state(const struct e2e *e)
{
	char *path = fmt("%s/.config/opencode/opencode.json", e->te.home);
	char *text = fmt("{\"model\": \"e2e/e2e-model\", \"autoupdate\": false, "
			 "\"share\": \"disabled\", \"permission\": {\"bash\": \"ask\"},\n"
			 " \"provider\": {\"e2e\": {\"npm\": \"@ai-sdk/openai-compatible\",\n"
			 "  \"options\": {\"baseURL\": \"http://127.0.0.1:%d/v1\", "
			 "\"apiKey\": \"sk-e2e\"},\n"
			 "  \"models\": {\"e2e-model\": {\"tool_call\": true}}}}}\n",
			 e->port);
	struct run r;
	char *from = fmt("%s/opencode-plugin/.", e->cache);
	char *to = fmt("%s/.config/opencode/", e->te.home);
	/* hard links (64 MB, for every test): a copy across file systems */
	const char *ln[] = { "cp", "-Rl", from, to, NULL };
	const char *cp[] = { "cp", "-R", from, to, NULL };

	write_file(path, text, 0600);
	run_argv(&r, &e->te, ln, NULL);
	if (r.code != 0) {
		run_free(&r);
		run_argv(&r, &e->te, cp, NULL);
	}
	cr_assert_eq(r.code, 0, "cp %s: %s", from, r.err);
	run_free(&r);
	char *stamp = fmt("%s/.config/opencode/.hqt-installed", e->te.home);
	unlink(stamp);
	free(stamp);
	free(from);
	free(to);
	free(text);
	free(path);
}

static void
start_server(struct e2e *e, const struct e2e_server *srv)
{
	char *script = fmt("%s/tests/e2e/model-server.py", source_dir());
	char *portfile = fmt("%s/port", e->te.root);
	long long end = now_ms() + 10000;
	const char *argv[12] = { "/usr/bin/python3", script, portfile, e->log, e->rec };
	size_t n = 5;
	pid_t pid;

	if (srv != NULL && srv->listen != NULL) {
		argv[n++] = "--listen";
		argv[n++] = srv->listen;
	}
	if (srv != NULL && srv->cert != NULL) {
		argv[n++] = "--tls";
		argv[n++] = srv->cert;
		argv[n++] = srv->key;
	}
	argv[n] = NULL;
	if (srv != NULL && srv->spawn != NULL)
		pid = srv->spawn(srv->arg, argv, e->log);
	else
		pid = fork();
	cr_assert(pid >= 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* Dies with the test; holds none of ctest's pipes open. */
		int fd = open(e->log, O_WRONLY | O_CREAT | O_APPEND, 0644);
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		setpgid(0, 0);
		if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		close(0);
		open("/dev/null", O_RDONLY);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	e->server = pid;
	for (;;) {
		char *t = slurp(portfile);

		if (t != NULL) {
			e->port = (int)strtol(t, NULL, 10);
			free(t);
			break;
		}
		int st;
		if (waitpid(pid, &st, WNOHANG) != 0) {
			char *log = slurp(e->log);
			cr_assert_fail("model server died (python3?): %s", log ? log : "");
		}
		cr_assert(now_ms() < end, "model server did not start");
		sleep_ms(20);
	}
	cr_assert(e->port > 0);
	free(script);
	free(portfile);
}

void
e2e_init(struct e2e *e, enum e2e_codex codex, const char *ini_extra)
{
	e2e_init_server(e, codex, ini_extra, NULL);
}

void
e2e_init_server(struct e2e *e, enum e2e_codex codex, const char *ini_extra,
		const struct e2e_server *srv)
{
	struct run r;
	char *path, *ready, *url;

	memset(e, 0, sizeof *e);
	e->cache = strdup(need_env("HQT_E2E_CACHE"));
	ready = fmt("%s/ready", e->cache);
	cr_assert(access(ready, F_OK) == 0, "no harnesses in %s (setup.sh)", e->cache);
	free(ready);

	tenv_init(&e->te, ini_extra);
	e->proj = fmt("%s/proj", e->te.root);
	e->rec = fmt("%s/rec", e->te.root);
	e->log = fmt("%s/model-server.log", e->te.root);
	mkdir(e->proj, 0755);
	mkdir(e->rec, 0755);
	char *real = realpath(e->proj, NULL);
	cr_assert_not_null(real);
	free(e->proj);
	e->proj = real;
	const char *git[] = { "git", "init", "-q", e->proj, NULL };
	run_argv(&r, &e->te, git, NULL);
	cr_assert_eq(r.code, 0, "git init: %s", r.err);
	run_free(&r);

	start_server(e, srv);
	lay_out_claude(e);
	claude_state(e);
	url = fmt("http://127.0.0.1:%d/v1", e->port);
	e2e_codex_config(e, url);
	free(url);
	gemini_state(e);
	opencode_state(e);

	/* Nothing of the machine's own harness set-up reaches the test. */
	for (char **v = environ; *v; v++) {
		static const char *const prefixes[] = {
			"ANTHROPIC_", "CLAUDE", "OPENAI_", "CODEX_", "npm_", "GEMINI_",
			"GOOGLE_", "QWEN_", "COPILOT_", "GH_", "GITHUB_", "OPENCODE_", NULL,
		};
		for (const char *const *p = prefixes; *p; p++)
			if (strncmp(*v, *p, strlen(*p)) == 0) {
				char *name = strndup(*v, strcspn(*v, "="));
				tenv_put(&e->te, name, NULL);
				free(name);
			}
	}
	/* gemini, qwen, copilot and opencode as a project's npm install has them */
	char *more = fmt("%s/gemini/node_modules/.bin:%s/qwen/node_modules/.bin:"
			 "%s/copilot/node_modules/.bin:%s/opencode/node_modules/.bin",
			 e->cache, e->cache, e->cache, e->cache);
	if (codex == E2E_CODEX_GLOBAL)
		path = fmt("%s/.local/bin:%s/codex-global/bin:%s:/usr/bin:/bin", e->te.home, e->cache,
			   more);
	else
		path = fmt("%s/.local/bin:%s/codex-local/node_modules/.bin:%s:/usr/bin:/bin",
			   e->te.home, e->cache, more);
	free(more);
	tenv_put(&e->te, "PATH", path);
	free(path);
	url = fmt("http://127.0.0.1:%d", e->port);
	tenv_put(&e->te, "ANTHROPIC_BASE_URL", url);
	free(url);
	tenv_put(&e->te, "ANTHROPIC_API_KEY", API_KEY);
	tenv_put(&e->te, "OPENAI_API_KEY", "sk-e2e-test-openai-key");
	tenv_put(&e->te, "DISABLE_AUTOUPDATER", "1");
	url = fmt("http://127.0.0.1:%d", e->port);
	tenv_put(&e->te, "GEMINI_API_KEY", "e2e-gemini-key");
	tenv_put(&e->te, "GOOGLE_GEMINI_BASE_URL", url);
	free(url);
	url = fmt("http://127.0.0.1:%d/v1", e->port);
	tenv_put(&e->te, "OPENAI_BASE_URL", url);
	free(url);
	tenv_put(&e->te, "QWEN_USAGE_STATISTICS_ENABLED", "false");
	/* copilot: a BYOK provider (the stand-in's Anthropic side) and no
	 * network of its own (no GitHub login, update check or telemetry) */
	url = fmt("http://127.0.0.1:%d", e->port);
	tenv_put(&e->te, "COPILOT_PROVIDER_BASE_URL", url);
	free(url);
	tenv_put(&e->te, "COPILOT_PROVIDER_TYPE", "anthropic");
	tenv_put(&e->te, "COPILOT_PROVIDER_API_KEY", API_KEY);
	tenv_put(&e->te, "COPILOT_MODEL", "claude-sonnet-4.6");
	tenv_put(&e->te, "COPILOT_PROVIDER_WIRE_MODEL", "e2e-model");
	tenv_put(&e->te, "COPILOT_OFFLINE", "true");
	/* opencode: no models catalogue, update, sharing, default plugins or
	 * LSP downloads (the study's five switches) */
	static const char *const oc_off[] = {
		"OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_AUTOUPDATE",
		"OPENCODE_DISABLE_SHARE", "OPENCODE_DISABLE_DEFAULT_PLUGINS",
		"OPENCODE_DISABLE_LSP_DOWNLOAD", NULL,
	};
	for (const char *const *v = oc_off; *v; v++)
		tenv_put(&e->te, *v, "1");
	tenv_put(&e->te, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1");
	tenv_put(&e->te, "HQT_PLUGIN_DIR", getenv("HQT_TEST_PLUGIN_DIR"));
	tenv_put(&e->te, "NO_COLOR", NULL);
	char *rundir = fmt("%s/run", e->te.root);
	mkdir(rundir, 0700);
	tenv_put(&e->te, "XDG_RUNTIME_DIR", rundir);
	free(rundir);
	/* The CLIs' own temporary files (claude's /tmp/claude-UID/<project>,
	 * codex's bwrap mount targets) stay in the test's directory too; beside
	 * the HOME, not above it (codex refuses helper links under a temporary
	 * directory).  A sandboxed session gets TMPDIR=/tmp, its own tmpfs. */
	char *tmp = fmt("%s/tmp", e->te.root);
	mkdir(tmp, 0700);
	tenv_put(&e->te, "TMPDIR", tmp);
	free(tmp);
	run_ok(&e->te, "project", "add", "p", e->proj, NULL);
}

void
e2e_dump(const struct e2e *e)
{
	struct run r;

	run_tmux(&r, &e->te, "list-windows", "-a", "-F", "#{window_name}", NULL);
	for (char *w = r.out; w != NULL && *w;) {
		char *nl = strchr(w, '\n');
		if (nl)
			*nl = '\0';
		if (strncmp(w, "hqt-", 4) == 0) {
			char *s = e2e_screen(e, strtol(w + 4, NULL, 10));
			cr_log_info("---- screen of %s ----\n%s", w, s ? s : "");
			free(s);
		}
		w = nl ? nl + 1 : NULL;
	}
	run_free(&r);
	char *log = slurp(e->log);
	if (log != NULL) {
		size_t n = strlen(log);
		cr_log_info("---- model server log (tail) ----\n%s", n > 6000 ? log + n - 6000 : log);
	}
	free(log);
}

/* Whether some process has its working directory under root. */
static bool
busy_in(const char *root)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = strlen(root);
	bool busy = false;

	while (d != NULL && !busy && (de = readdir(d)) != NULL) {
		char link[300], cwd[4096];
		ssize_t k;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(link, sizeof link, "/proc/%s/cwd", de->d_name);
		k = readlink(link, cwd, sizeof cwd - 1);
		if (k > 0) {
			cwd[k] = '\0';
			busy = strncmp(cwd, root, n) == 0 && (cwd[n] == '/' || cwd[n] == '\0');
		}
	}
	if (d != NULL)
		closedir(d);
	return busy;
}

void
e2e_fini(struct e2e *e)
{
	if (getenv("HQT_E2E_DUMP") != NULL)
		e2e_dump(e);
	if (e->server > 0) {
		kill(e->server, SIGTERM);
		waitpid(e->server, NULL, 0);
	}
	/* The harnesses write their state as they die with the tmux server
	 * (claude rewrites ~/.claude.json): wait for every process working in
	 * the tree to be gone before it is removed. */
	struct run r;
	run_tmux(&r, &e->te, "kill-server", NULL);
	run_free(&r);
	for (long long end = now_ms() + 5000; busy_in(e->te.root) && now_ms() < end;)
		sleep_ms(100);
	if (getenv("HQT_E2E_KEEP") != NULL) {
		cr_log_info("kept %s", e->te.root);
		free(e->te.root);
		e->te.root = NULL;
	}
	tenv_free(&e->te);
	free(e->cache);
	free(e->proj);
	free(e->rec);
	free(e->log);
	memset(e, 0, sizeof *e);
}

char *
e2e_screen(const struct e2e *e, long id)
{
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;

	run_tmux(&r, &e->te, "capture-pane", "-p", "-J", "-t", target, NULL);
	free(target);
	free(r.err);
	return r.out;
}

void
e2e_keys(const struct e2e *e, long id, const char *key)
{
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;

	run_tmux(&r, &e->te, "send-keys", "-t", target, key, NULL);
	cr_assert_eq(r.code, 0, "send-keys %s: %s", key, r.err);
	run_free(&r);
	free(target);
}

void
e2e_send(const struct e2e *e, long id, const char *text)
{
	char *target = fmt("=hqt:hqt-%ld", id);
	struct run r;

	run_tmux(&r, &e->te, "send-keys", "-t", target, "-l", text, NULL);
	cr_assert_eq(r.code, 0, "send-keys -l: %s", r.err);
	run_free(&r);
	/* Typed all at once, the text reads as a paste; Enter apart submits it.
	 * A harness still starting up may drop that Enter: a prompt (not a
	 * /command) is sent until the model server has seen it. */
	char *log = slurp(e->log);
	size_t before = log ? strlen(log) : 0;
	free(log);
	for (int tries = 0; tries < 4; tries++) {
		sleep_ms(400);
		e2e_keys(e, id, "Enter");
		if (text[0] == '/')
			break;
		bool seen = false;
		for (long long end = now_ms() + 3000; !seen && now_ms() < end; sleep_ms(100)) {
			log = slurp(e->log);
			seen = log && strlen(log) > before && strstr(log + before, text) != NULL;
			free(log);
		}
		if (seen)
			break;
	}
	free(target);
}

void
e2e_wait_screen(const struct e2e *e, long id, const char *needle, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		char *s = e2e_screen(e, id);
		bool hit = s != NULL && strstr(s, needle) != NULL;

		if (hit) {
			free(s);
			return;
		}
		if (now_ms() >= end) {
			e2e_dump(e);
			cr_assert_fail("session %ld never showed \"%s\"; screen:\n%s", id, needle,
				       s ? s : "");
		}
		free(s);
		sleep_ms(100);
	}
}

char *
e2e_status(const struct e2e *e, long id)
{
	json_t *l = run_list(&e->te), *s = session_in(l, id);
	const char *st = s ? json_string_value(json_object_get(s, "status")) : NULL;
	char *out = strdup(st ? st : "absent");

	json_decref(l);
	return out;
}

char *
e2e_attention(const struct e2e *e, long id)
{
	json_t *l = run_list(&e->te), *s = session_in(l, id);
	const char *a = s ? json_string_value(json_object_get(s, "attention")) : NULL;
	char *out = strdup(a ? a : "null");

	json_decref(l);
	return out;
}

char *
e2e_events(const struct e2e *e, long id)
{
	char *pat = fmt("%s/run/hqt/events/*/%ld", e->te.root, id), *text = NULL;
	glob_t g;

	/* one database in the test tree: one directory of files */
	if (glob(pat, 0, NULL, &g) == 0 && g.gl_pathc == 1)
		text = slurp(g.gl_pathv[0]);
	globfree(&g);
	free(pat);
	return text;
}

bool
e2e_sees_status(const struct e2e *e, long id, const char *want, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		char *st = e2e_status(e, id);
		bool hit = strcmp(st, want) == 0;

		free(st);
		if (hit)
			return true;
		if (now_ms() >= end)
			return false;
		sleep_ms(100);
	}
}

void
e2e_wait_status(const struct e2e *e, long id, const char *want, int timeout_ms)
{
	if (e2e_sees_status(e, id, want, timeout_ms))
		return;
	char *st = e2e_status(e, id), *s = e2e_screen(e, id);
	e2e_dump(e);
	cr_assert_fail("session %ld is %s, not %s, after %d ms; screen:\n%s", id, st, want,
		       timeout_ms, s ? s : "");
}

char *
e2e_field(const struct e2e *e, long id, const char *key)
{
	char *n = fmt("%ld", id);
	json_t *o = run_show(&e->te, n), *v = json_object_get(o, key);
	char *out = json_is_string(v) ? strdup(json_string_value(v)) : NULL;

	json_decref(o);
	free(n);
	return out;
}

char *
e2e_wait_session_id(const struct e2e *e, long id, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	char *v;

	while ((v = e2e_field(e, id, "harness_session_id")) == NULL) {
		free(e2e_status(e, id));
		cr_assert(now_ms() < end, "session %ld's harness id was never captured", id);
		sleep_ms(200);
	}
	return v;
}

char *
e2e_record(const struct e2e *e, const char *name)
{
	char *p = fmt("%s/%s", e->rec, name), *t = slurp(p);

	free(p);
	return t;
}

char *
e2e_wait_record(const struct e2e *e, const char *name, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;
	char *t;

	while ((t = e2e_record(e, name)) == NULL) {
		if (now_ms() >= end) {
			e2e_dump(e);
			cr_assert_fail("the model server never recorded %s", name);
		}
		sleep_ms(100);
	}
	return t;
}

int
e2e_leftovers(const struct e2e *e)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL) {
		char *end, *path, *cmd;
		long pid = strtol(de->d_name, &end, 10);
		size_t len = 0;
		FILE *f;

		if (*end || pid <= 0 || pid == e->server || pid == getpid())
			continue;
		path = fmt("/proc/%ld/cmdline", pid);
		f = fopen(path, "re");
		free(path);
		if (f == NULL)
			continue;
		cmd = NULL;
		if (getdelim(&cmd, &len, '\177', f) > 0) {
			/* NULs apart; look at each word */
			long got = (long)ftell(f);
			for (long i = 0; i < got; i += (long)strlen(cmd + i) + 1)
				if (strstr(cmd + i, e->te.root) != NULL) {
					cr_log_info("left behind: pid %ld %s", pid, cmd);
					n++;
					break;
				}
		}
		free(cmd);
		fclose(f);
	}
	closedir(d);
	return n;
}

size_t
e2e_pids(const struct e2e *e, pid_t *pids, size_t max)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	size_t n = 0, len = strlen(e->te.root);

	cr_assert_not_null(d);
	while (n < max && (de = readdir(d)) != NULL) {
		char *end, link[64], cwd[4096];
		long pid = strtol(de->d_name, &end, 10);
		ssize_t k;

		if (*end || pid <= 0 || pid == e->server || pid == getpid())
			continue;
		snprintf(link, sizeof link, "/proc/%ld/cwd", pid);
		k = readlink(link, cwd, sizeof cwd - 1);
		if (k <= 0)
			continue;
		cwd[k] = '\0';
		/* the tests' private tmux server is not the session's */
		snprintf(link, sizeof link, "/proc/%ld/comm", pid);
		char *comm = slurp(link);
		bool tmux = comm != NULL && strncmp(comm, "tmux", 4) == 0;
		free(comm);
		if (tmux)
			continue;
		if (strncmp(cwd, e->proj, strlen(e->proj)) == 0 ||
		    (strncmp(cwd, e->te.root, len) == 0 && (cwd[len] == '/' || cwd[len] == '\0')))
			pids[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

/* Whether pid runs (a zombie, whose parent has yet to reap it, does not). */
static bool
alive(pid_t pid)
{
	char *path = fmt("/proc/%ld/stat", (long)pid), *t = slurp(path), *rp;
	bool yes = false;

	free(path);
	if (t != NULL && (rp = strrchr(t, ')')) != NULL)
		yes = rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
	free(t);
	return yes;
}

/* Whether a word of pid's command line has needle. */
static bool
cmdline_has(pid_t pid, const char *needle)
{
	char *path = fmt("/proc/%ld/cmdline", (long)pid), buf[8192];
	FILE *f = fopen(path, "re");
	size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	bool yes = false;

	buf[got] = '\0';
	/* NULs apart: each word */
	for (size_t j = 0; !yes && j < got; j += strlen(buf + j) + 1)
		yes = strstr(buf + j, needle) != NULL;
	if (f)
		fclose(f);
	free(path);
	return yes;
}

void
e2e_kill_leaves_nothing(const struct e2e *e, long id, const char *program)
{
	pid_t pids[64];
	size_t n = e2e_pids(e, pids, 64), named = 0;
	char num[32];

	/* the harness runs: at least one of them is its */
	for (size_t i = 0; i < n; i++)
		named += cmdline_has(pids[i], program);
	cr_assert(named > 0, "no process of %s runs in the project before the kill", program);
	snprintf(num, sizeof num, "%ld", id);
	run_ok(&e->te, "kill", num, NULL);
	for (long long end = now_ms() + 10000; now_ms() < end; sleep_ms(100)) {
		size_t left = 0;

		for (size_t i = 0; i < n; i++)
			left += alive(pids[i]);
		if (left == 0)
			return;
	}
	for (size_t i = 0; i < n; i++)
		if (alive(pids[i])) {
			char *path = fmt("/proc/%ld/cmdline", (long)pids[i]);
			FILE *f = fopen(path, "re");
			char buf[512];
			size_t got = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

			for (size_t j = 0; j < got; j++)
				buf[j] = buf[j] ? buf[j] : ' ';
			buf[got] = '\0';
			cr_log_error("left behind: pid %ld %s", (long)pids[i], buf);
			if (f)
				fclose(f);
			free(path);
		}
	cr_assert_fail("processes of session %ld left after hqt kill (log above)", id);
}
