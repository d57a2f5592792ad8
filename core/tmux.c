/* tmux.c: every tmux invocation hqt makes, argv only; see tmux.h for the why. */
#include "tmux.h"
#include "util.h"
#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* A wedged server must not hang hqt forever. */
#define TMUX_TIMEOUT_MS 30000

void
tmux_init(struct tmux *t, const char *socket, const char *session)
{
	memset(t, 0, sizeof *t);
	t->socket = xstrdup(socket != NULL ? socket : "");
	t->session = xstrdup(session != NULL && *session != '\0' ? session : "hqt");
}

/* tmux_prestart's client: fed once, by tmux_open_window or tmux_free. */
struct tmux_early {
	struct spawn_pending p;
	size_t base;  /* the words of argv_start, which the chain's text leaves out */
	bool fed;
};

/* w (may be NULL): its meanwhile is called once the text is sent. */
static void
early_feed(struct tmux_early *x, const char *text, const struct tmux_open *w,
	   struct spawn_result *r)
{
	struct spawn_opts o;

	memset(&o, 0, sizeof o);
	o.input = text;
	if (w != NULL) {
		o.meanwhile = w->meanwhile;
		o.meanwhile_arg = w->meanwhile_arg;
	}
	o.timeout_ms = TMUX_TIMEOUT_MS;
	spawn_feed(&x->p, &o, r);
	x->fed = true;
}

void
tmux_free(struct tmux *t)
{
	if (t == NULL)
		return;
	if (t->early != NULL && !t->early->fed) {
		struct spawn_result r;

		early_feed(t->early, NULL, NULL, &r);
		spawn_result_free(&r);
	}
	free(t->early);
	free(t->socket);
	free(t->session);
	free(t->config);
	free(t->bin);
	memset(t, 0, sizeof *t);
}

/* ---- argv building ---- */

static void argv_start(const struct tmux *t, struct strv *argv, bool utf8);

void
tmux_argv_init(const struct tmux *t, struct strv *argv)
{
	argv_start(t, argv, true);
}

/*
 * utf8: -u, for every call whose output we parse: a tmux client in a
 * non-UTF-8 locale (LANG=C) turns the tabs of -F formats into '_'.  Not for
 * attach, where the user's terminal decides.
 */
static void
argv_start(const struct tmux *t, struct strv *argv, bool utf8)
{
	strv_push(argv, t->bin != NULL ? t->bin : "tmux");
	if (utf8)
		strv_push(argv, "-u");
	if (t->socket != NULL && *t->socket != '\0') {
		strv_push(argv, "-L");
		strv_push(argv, t->socket);
	}
	if (t->config != NULL) {
		strv_push(argv, "-f");
		strv_push(argv, t->config);
	}
}

void
tmux_argv_word(struct strv *argv, const char *word)
{
	size_t len = strlen(word);
	char *w;

	if (len == 0 || word[len - 1] != ';') {
		strv_push(argv, word);
		return;
	}
	/* "x;" -> "x\;": tmux strips the ';', sees the '\' and puts the ';' back. */
	w = xmalloc(len + 2);
	memcpy(w, word, len - 1);
	w[len - 1] = '\\';
	w[len] = ';';
	w[len + 1] = '\0';
	strv_take(argv, w);
}

void
tmux_argv_sep(struct strv *argv)
{
	strv_push(argv, ";");
}

char *
tmux_format_escape(const char *s)
{
	size_t n = 0;
	char *out, *o;

	for (const char *p = s; *p; p++)
		n += *p == '#' ? 2 : 1;
	out = o = xmalloc(n + 1);
	for (const char *p = s; *p; p++) {
		*o++ = *p;
		if (*p == '#')
			*o++ = '#';
	}
	*o = '\0';
	return out;
}

static size_t
argv_bytes(const struct strv *argv)
{
	size_t n = 0;

	for (size_t i = 0; i < argv->n; i++)
		n += strlen(argv->v[i]) + 1;
	return n;
}

/* ---- running ---- */

/* The first non-empty line of s, control characters made visible. */
static char *
first_line(const char *s, size_t len)
{
	size_t i = 0, j;
	char *line;

	for (;;) {
		while (i < len && (s[i] == '\n' || s[i] == '\r' || s[i] == ' '))
			i++;
		if (i >= len)
			return NULL;
		j = i;
		while (j < len && s[j] != '\n')
			j++;
		line = xstrndup(s + i, j - i);
		for (char *p = line; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				*p = '?';
		if (*trim(line) != '\0')
			return line;
		free(line);
		i = j;
	}
}

static bool
err_has(const struct spawn_result *r, const char *what)
{
	return r->err != NULL && strstr(r->err, what) != NULL;
}

static bool
no_server(const struct spawn_result *r)
{
	/* "server exited unexpectedly": a server shutting down as we connect
	 * (right after kill-server) is as good as none. */
	return err_has(r, "no server running on") || err_has(r, "error connecting to") ||
	       err_has(r, "server exited unexpectedly");
}

static char *
error_text(const struct spawn_result *r)
{
	char *line, *msg, *p;

	if (r->timed_out)
		return xasprintf("tmux: no answer after %d seconds (is the server wedged?)",
				 TMUX_TIMEOUT_MS / 1000);
	line = first_line(r->err, r->err_len);
	if (line == NULL)
		line = first_line(r->out, r->out_len);
	if (line == NULL)
		return xasprintf("tmux: exited with status %d", r->status);
	if (strncmp(line, "error connecting to ", 20) == 0) {
		/* "error connecting to /tmp/tmux-0/x (No such file or directory)" */
		if ((p = strstr(line, " (")) != NULL)
			*p = '\0';
		msg = xasprintf("tmux: no server running on %s", line + 20);
	} else if (strcmp(line, "command too long") == 0)
		msg = xasprintf("tmux: command too long (tmux takes about %d bytes of arguments)",
				TMUX_ARGV_MAX);
	else
		msg = xasprintf("tmux: %s", line);
	free(line);
	return msg;
}

/* tmux_run with the client's environment given (NULL: ours), and w's
 * meanwhile (w may be NULL). */
static int
run_env(const struct tmux *t, const struct strv *argv, char *const envp[],
	const struct tmux_open *w, struct spawn_result *res, char **err)
{
	struct spawn_opts o;
	struct spawn_result r;
	char *e = NULL;
	int rc;

	memset(&o, 0, sizeof o);
	o.timeout_ms = TMUX_TIMEOUT_MS;
	if (w != NULL) {
		o.meanwhile = w->meanwhile;
		o.meanwhile_arg = w->meanwhile_arg;
	}
	rc = spawn_capture_opts(strv_v(argv), envp, &o, &r, &e);
	if (rc < 0) {
		if (rc == -ENOENT && t->bin == NULL)
			set_err(err, "tmux not found; install it: apt-get install tmux");
		else
			set_err(err, "tmux: %s", e);
		free(e);
		return -1;
	}
	rc = 0;
	if (r.status != 0) {
		char *msg = error_text(&r);

		set_err(err, "%s", msg);
		free(msg);
		rc = -1;
	}
	if (res != NULL)
		*res = r;
	else
		spawn_result_free(&r);
	return rc;
}

int
tmux_run(const struct tmux *t, const struct strv *argv, struct spawn_result *res, char **err)
{
	return run_env(t, argv, NULL, NULL, res, err);
}

/* Run, and tell "tmux could not even be run" (-2) from "tmux said no" (-1). */
static int
run_full(const struct tmux *t, const struct strv *argv, struct spawn_result *res, char **err)
{
	memset(res, 0, sizeof *res);
	if (tmux_run(t, argv, res, err) == 0)
		return 0;
	return res->out == NULL ? -2 : -1;
}

void
tmux_prestart(struct tmux *t)
{
	struct strv a = STRV_INIT;
	struct tmux_early *x;

	if (t->early != NULL)
		return;
	argv_start(t, &a, true);
	x = xcalloc(1, sizeof *x);
	x->base = a.n;
	strv_push(&a, "source-file");
	strv_push(&a, "-");
	if (spawn_start(strv_v(&a), NULL, &x->p, NULL) == 0)
		t->early = x;
	else
		free(x);
	strv_clear(&a);
}

/* word, single-quoted for tmux's parser: 'it'"'"'s'. */
static void
quote_word(struct strv *out, const char *w)
{
	size_t n = 3;
	char *q, *o;

	for (const char *p = w; *p; p++)
		n += *p == '\'' ? 5 : 1;
	q = o = xmalloc(n);
	*o++ = '\'';
	for (const char *p = w; *p; p++) {
		if (*p == '\'') {
			memcpy(o, "'\"'\"'", 5);
			o += 5;
		} else
			*o++ = *p;
	}
	*o++ = '\'';
	*o = '\0';
	strv_take(out, q);
}

/*
 * The chain of argv (past the base words) as one line of tmux commands:
 * ";" words are the separators, every other word is quoted as it is meant
 * (tmux_argv_word's "x\;" is "x;" again: only the argv form needs it).
 */
static char *
chain_text(const struct strv *argv, size_t base)
{
	struct strv words = STRV_INIT;
	size_t len = 0, off = 0;
	char *text;

	for (size_t i = base; i < argv->n; i++) {
		const char *w = argv->v[i];
		size_t l = strlen(w);

		if (strcmp(w, ";") == 0) {
			strv_push(&words, ";");
		} else if (l >= 2 && w[l - 2] == '\\' && w[l - 1] == ';') {
			char *plain = xstrdup(w);

			plain[l - 2] = ';';
			plain[l - 1] = '\0';
			quote_word(&words, plain);
			free(plain);
		} else
			quote_word(&words, w);
	}
	for (size_t i = 0; i < words.n; i++)
		len += strlen(words.v[i]) + 1;
	text = xmalloc(len + 2);
	for (size_t i = 0; i < words.n; i++) {
		size_t l = strlen(words.v[i]);

		memcpy(text + off, words.v[i], l);
		off += l;
		text[off++] = ' ';
	}
	text[off > 0 ? off - 1 : 0] = '\n';
	text[off > 0 ? off : 1] = '\0';
	strv_clear(&words);
	return text;
}

/*
 * run_full_env through tmux_prestart's client, when there is one not used
 * yet: the same answers (0, or -1 with the error line), or -3 when there is
 * none.
 */
static int
run_early(const struct tmux *t, const struct strv *argv, const struct tmux_open *w,
	  struct spawn_result *res, char **err)
{
	char *text;

	if (t->early == NULL || t->early->fed)
		return -3;
	/* tmux's parser reads a '#' after a newline as a comment, even inside
	 * single quotes: a word with a control character (a directory name
	 * can hold one) goes as an argument, through a client of its own. */
	for (size_t i = t->early->base; i < argv->n; i++)
		for (const char *c = argv->v[i]; *c; c++)
			if ((unsigned char)*c < 0x20 ? *c != '\t' : *c == 0x7f)
				return -3;
	text = chain_text(argv, t->early->base);
	early_feed(t->early, text, w, res);
	free(text);
	if (res->status == 0)
		return 0;
	char *msg = error_text(res);
	set_err(err, "%s", msg);
	free(msg);
	return -1;
}

/* ---- names and targets ---- */

static bool
valid_window_name(const char *s)
{
	if (s == NULL || *s == '\0' || strlen(s) > 128)
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && *s != '_' && *s != '-')
			return false;
	return true;
}

/* "@12" or "%3": the sigil and digits only. */
static bool
valid_id(const char *s, char sigil)
{
	if (s == NULL || s[0] != sigil || s[1] == '\0' || strlen(s) > 20)
		return false;
	for (s++; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

/* The -t argument for a window reference (see tmux.h).  Caller frees. */
static char *
window_target(const struct tmux *t, const char *w, char **err)
{
	if (valid_id(w, '@'))
		return xasprintf("=%s:%s", t->session, w);
	if (valid_id(w, '%'))
		return xstrdup(w);
	if (valid_window_name(w))
		return xasprintf("=%s:=%s", t->session, w);
	set_err(err, "tmux: bad window name '%s' (expected @N, %%N or letters, digits, '_', '-')",
		w != NULL ? w : "");
	return NULL;
}

/* ---- small parsers ---- */

static int
parse_num(const char *s, size_t len, long long *out)
{
	char buf[32], *end;
	long long v;

	if (len == 0 || len >= sizeof buf)
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (!isdigit((unsigned char)buf[0]) && buf[0] != '-')
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno != 0 || *end != '\0')
		return -1;
	*out = v;
	return 0;
}

/* "@1 %2 345" (the -F of new-window and display) into out. */
static int
parse_window_line(const char *s, struct tmux_window *out)
{
	char wid[24], pid_s[24], pane[24];
	const char *p = s, *q;
	long long pid;
	char *fields[3] = { wid, pane, pid_s };

	for (int i = 0; i < 3; i++) {
		q = p;
		while (*q != '\0' && *q != ' ' && *q != '\n')
			q++;
		if (q == p || (size_t)(q - p) >= sizeof wid)
			return -1;
		memcpy(fields[i], p, (size_t)(q - p));
		fields[i][q - p] = '\0';
		p = *q == ' ' ? q + 1 : q;
	}
	if (!valid_id(wid, '@') || !valid_id(pane, '%') ||
	    parse_num(pid_s, strlen(pid_s), &pid) != 0 || pid <= 0 || pid > LONG_MAX)
		return -1;
	memcpy(out->window_id, wid, sizeof out->window_id);
	memcpy(out->pane_id, pane, sizeof out->pane_id);
	out->pid = (long)pid;
	return 0;
}

/* ---- server and session ---- */

int
tmux_server_running(const struct tmux *t, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	char *e = NULL;
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "list-sessions");
	strv_push(&a, "-F");
	strv_push(&a, "#{session_id}");
	rc = run_full(t, &a, &r, &e);
	strv_clear(&a);
	if (rc == -1 && no_server(&r))
		rc = 0;
	else if (rc == 0)
		rc = 1;
	else {
		set_err(err, "%s", e);
		rc = -1;
	}
	free(e);
	spawn_result_free(&r);
	return rc;
}

int
tmux_kill_server(const struct tmux *t, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	char *e = NULL;
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "kill-server");
	rc = run_full(t, &a, &r, &e);
	strv_clear(&a);
	if (rc == -1 && no_server(&r))
		rc = 0;
	if (rc != 0)
		set_err(err, "%s", e);
	free(e);
	spawn_result_free(&r);
	return rc < 0 ? -1 : 0;
}

int
tmux_version(const struct tmux *t, int *major, int *minor, char **text, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	long maj = 0, min = 0;
	char *line, *p;
	int rc;

	strv_push(&a, t->bin != NULL ? t->bin : "tmux");
	strv_push(&a, "-V");
	rc = run_full(t, &a, &r, err);
	strv_clear(&a);
	if (rc != 0) {
		spawn_result_free(&r);
		return -1;
	}
	line = first_line(r.out, r.out_len);
	spawn_result_free(&r);
	if (line == NULL) {
		set_err(err, "tmux: -V printed nothing");
		return -1;
	}
	/* "tmux 3.3a", "tmux next-3.4", "tmux master" (a build from git: new). */
	for (p = line; *p != '\0' && !isdigit((unsigned char)*p); p++)
		;
	if (*p == '\0')
		maj = 99;
	else {
		maj = strtol(p, &p, 10);
		if (*p == '.')
			min = strtol(p + 1, NULL, 10);
	}
	if (maj < TMUX_MIN_MAJOR || (maj == TMUX_MIN_MAJOR && min < TMUX_MIN_MINOR)) {
		set_err(err, "%s is too old: hqt needs tmux %d.%d or newer", line,
			TMUX_MIN_MAJOR, TMUX_MIN_MINOR);
		free(line);
		return -1;
	}
	if (major != NULL)
		*major = (int)maj;
	if (minor != NULL)
		*minor = (int)min;
	if (text != NULL)
		*text = line;
	else
		free(line);
	return 0;
}

#define WINDOW_FORMAT "#{window_id} #{pane_id} #{pane_pid}"

/* "; set-option -w -t TARGET remain-on-exit on": chained after the command
 * that makes the window, so it holds before tmux can reap what runs there. */
static void
push_remain_on_exit(struct strv *a, const char *target)
{
	tmux_argv_sep(a);
	strv_push(a, "set-option");
	strv_push(a, "-w");
	strv_push(a, "-t");
	strv_push(a, target);
	strv_push(a, "remain-on-exit");
	strv_push(a, "on");
}

/* "; display-message -p -t TARGET WINDOW_FORMAT": the window as it is
 * after the commands before it, in the same call. */
static void
push_display(struct strv *a, const char *target)
{
	tmux_argv_sep(a);
	strv_push(a, "display-message");
	strv_push(a, "-p");
	strv_push(a, "-t");
	strv_push(a, target);
	strv_push(a, WINDOW_FORMAT);
}

/*
 * Whether the shell a new tmux server would give the home window exits at
 * once: a service account's login shell (/usr/sbin/nologin, /bin/false),
 * as tmux finds it ($SHELL when it is an absolute path it may run, else
 * the passwd entry's).  A server that runs already has its own
 * default-shell; the user's, as good a guess as any.
 */
static bool
shell_exits_at_once(void)
{
	const char *sh = getenv("SHELL"), *base;
	struct passwd *pw;

	if (sh == NULL || *sh != '/' || access(sh, X_OK) != 0)
		sh = (pw = getpwuid(getuid())) != NULL ? pw->pw_shell : NULL;
	if (sh == NULL || *sh == '\0')
		return false; /* tmux's own fallback, /bin/sh */
	base = strrchr(sh, '/') != NULL ? strrchr(sh, '/') + 1 : sh;
	return strcmp(base, "nologin") == 0 || strcmp(base, "false") == 0 ||
	       strcmp(base, "true") == 0 || access(sh, X_OK) != 0;
}

int
tmux_ensure_session(const struct tmux *t, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	char *e = NULL, *home;
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "new-session");
	strv_push(&a, "-d");
	strv_push(&a, "-s");
	tmux_argv_word(&a, t->session);
	strv_push(&a, "-n");
	strv_push(&a, TMUX_HOME_WINDOW);
	/*
	 * The home window runs the server's default shell, which for a
	 * service account (login shell /usr/sbin/nologin, $SHELL unset, as
	 * under cron or systemd) exits at once; with it the session, and with
	 * the session the server, went away before our window was in it.  A
	 * shell known to do that is not run at all: the window waits instead.
	 * Any other that dies young is kept by remain-on-exit, chained, which
	 * holds before tmux reaps it nearly always (not always: tmux may reap
	 * between two commands of one call).
	 */
	if (shell_exits_at_once()) {
		strv_push(&a, "--");
		strv_push(&a, "sleep");
		strv_push(&a, "infinity");
	}
	home = xasprintf("=%s:" TMUX_HOME_WINDOW, t->session);
	push_remain_on_exit(&a, home);
	/*
	 * A user's `destroy-unattached on` (~/.tmux.conf) ends a session that
	 * no client is attached to, as ours mostly is; ours keeps going.
	 * "=NAME:" (with the colon: tmux takes a bare "=NAME" for a window).
	 */
	free(home);
	home = xasprintf("=%s:", t->session);
	tmux_argv_sep(&a);
	strv_push(&a, "set-option");
	strv_push(&a, "-t");
	strv_push(&a, home);
	strv_push(&a, "destroy-unattached");
	strv_push(&a, "off");
	/* A server still going away (a kill-server just before) answers the
	 * new client with "server exited unexpectedly": once it is gone, the
	 * next client starts a new one. */
	for (int tries = 0;; tries++) {
		rc = run_full(t, &a, &r, &e);
		if (rc != -1 || !err_has(&r, "server exited unexpectedly") || tries == 50)
			break;
		spawn_result_free(&r);
		free(e);
		e = NULL;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	free(home);
	strv_clear(&a);
	/* Two hqt processes racing: the loser's "duplicate session" is success. */
	if (rc == -1 && err_has(&r, "duplicate session"))
		rc = 0;
	if (rc != 0)
		set_err(err, "%s", e);
	free(e);
	spawn_result_free(&r);
	return rc < 0 ? -1 : 0;
}

/* ---- windows ---- */

/*
 * -c CWD -e NAME=VALUE... -e HQT_WINDOW_ENV=NAMES -- ARGV...: what
 * new-window and respawn-pane share.
 */
static int
push_spawn_args(struct strv *a, const char *cwd, char *const argv[], char *const env[],
		char **err)
{
	struct strv names = STRV_INIT;
	struct stat st;
	char *esc, *list;
	size_t len = 0;

	if (cwd == NULL || cwd[0] != '/' || stat(cwd, &st) != 0 || !S_ISDIR(st.st_mode)) {
		set_err(err, "tmux: working directory '%s' is not an existing absolute directory",
			cwd != NULL ? cwd : "");
		return -1;
	}
	if (argv == NULL || argv[0] == NULL || argv[0][0] == '\0') {
		set_err(err, "tmux: no command to run in the window");
		return -1;
	}
	strv_push(a, "-c");
	esc = tmux_format_escape(cwd);
	tmux_argv_word(a, esc);
	free(esc);
	for (size_t i = 0; env != NULL && env[i] != NULL; i++) {
		const char *eq = strchr(env[i], '=');
		char *name;

		if (eq == NULL || !env_name_valid(env[i], (size_t)(eq - env[i]))) {
			set_err(err, "tmux: bad environment entry '%.*s' (expected NAME=VALUE)",
				(int)strcspn(env[i], "="), env[i]);
			strv_clear(&names);
			return -1;
		}
		name = xstrndup(env[i], (size_t)(eq - env[i]));
		if (strcmp(name, TMUX_WINDOW_ENV) == 0) {
			set_err(err, "tmux: %s is hqt's own variable", TMUX_WINDOW_ENV);
			free(name);
			strv_clear(&names);
			return -1;
		}
		if (strv_find(&names, name) < 0) {
			len += strlen(name) + 1;
			strv_take(&names, name);
		} else
			free(name);
		strv_push(a, "-e");
		tmux_argv_word(a, env[i]);
	}
	list = xmalloc(len + 1);
	list[0] = '\0';
	for (size_t i = 0, off = 0; i < names.n; i++) {
		size_t l = strlen(names.v[i]);

		if (i > 0)
			list[off++] = ',';
		memcpy(list + off, names.v[i], l);
		off += l;
		list[off] = '\0';
	}
	strv_push(a, "-e");
	strv_pushf(a, "%s=%s", TMUX_WINDOW_ENV, list);
	free(list);
	strv_clear(&names);

	strv_push(a, "--");
	if (argv[1] == NULL) {
		/* tmux runs a lone word with `sh -c WORD`; env(1) execs it as is. */
		char *envbin = find_in_path("env", NULL);

		strv_push(a, envbin != NULL ? envbin : "/usr/bin/env");
		free(envbin);
		strv_push(a, "--");
	}
	for (size_t i = 0; argv[i] != NULL; i++)
		tmux_argv_word(a, argv[i]);
	return 0;
}

/*
 * "; set-option -w -t TARGET window-status-format FORMAT" and the same for
 * window-status-current-format, FORMAT showing "INDEX:NAME LABEL" and the
 * flags: chained after the command that makes the window (one tmux call).
 * The label is in the format itself, not in an option of its own: every
 * set-option costs the server a pass over all its windows.
 */
static void
push_label(struct strv *a, const char *target, const char *label)
{
	static const char *const opts[] = { "window-status-format", "window-status-current-format" };
	/* The label is the user's text (a nickname): no control characters,
	 * and '#' doubled, so that the format shows it as it is. */
	char *shown = text_escape(label, 64), *escaped = tmux_format_escape(shown);

	for (size_t i = 0; i < ARRAY_SIZE(opts); i++) {
		tmux_argv_sep(a);
		strv_push(a, "set-option");
		strv_push(a, "-w");
		strv_push(a, "-t");
		strv_push(a, target);
		strv_push(a, opts[i]);
		strv_pushf(a, "#I:#W %s#{?window_flags,#{window_flags}, }", escaped);
	}
	free(escaped);
	free(shown);
}

/* Can s be spelled, single-quoted, in a command string tmux parses (the
 * if-shell below)?  Targets built from validated names and ids only:
 * "=S:=hqt-3", "=S:{end}", "@3". */
static bool
plain_target(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && strchr("_-=:{}@%.", *s) == NULL)
			return false;
	return true;
}

/*
 * allow-rename off: a harness renaming its window would lose it from
 * tmux_panes_find.  It is tmux's default, so the option is set only where
 * a configuration turned it on: if-shell -F tests it without a shell, and
 * a command that does nothing costs the server less than a set-option,
 * which redraws and resizes for every window (about 0.5 M instructions at
 * 200 windows).  A target that cannot be spelled in the command string
 * gets the plain set-option.
 */
static void
push_window_options(struct strv *a, const char *target)
{
	push_remain_on_exit(a, target);
	tmux_argv_sep(a);
	if (plain_target(target)) {
		strv_push(a, "if-shell");
		strv_push(a, "-F");
		strv_push(a, "-t");
		strv_push(a, target);
		strv_push(a, "#{allow-rename}");
		/* Quoted: tmux's parser reads '{' as the start of a block. */
		strv_pushf(a, "set-option -w -t '%s' allow-rename off", target);
		return;
	}
	strv_push(a, "set-option");
	strv_push(a, "-w");
	strv_push(a, "-t");
	strv_push(a, target);
	strv_push(a, "allow-rename");
	strv_push(a, "off");
}

/*
 * tmux gives a new pane the PATH of the CLIENT that asked for it (so that
 * `tmux new-window prog` finds prog), overriding -e PATH.  So the client
 * runs with the PATH meant for the window: envp is our environment with
 * PATH from env, and argv[0] is made absolute first (it was looked up in
 * our PATH, which the window's may not share).  Nothing to do without a
 * PATH in env (the window then gets ours).
 */
static int
window_client_env(const struct tmux *t, struct strv *a, char *const env[],
		  struct strv *envp, char **err)
{
	const char *path = envp_get(env, "PATH");
	char *bin;

	if (path == NULL)
		return 0;
	if ((bin = find_in_path(a->v[0], NULL)) == NULL) {
		if (t->bin == NULL)
			set_err(err, "tmux not found; install it: apt-get install tmux");
		else
			set_err(err, "tmux: cannot run '%s': %s", t->bin, strerror(errno));
		return -1;
	}
	free(a->v[0]);
	a->v[0] = bin;
	for (char **e = environ; *e != NULL; e++)
		if (strncmp(*e, "PATH=", 5) != 0)
			strv_push(envp, *e);
	strv_pushf(envp, "PATH=%s", path);
	return 0;
}

/* run_full with envp (empty: ours) and w's meanwhile (w may be NULL). */
static int
run_full_env(const struct tmux *t, const struct strv *argv, const struct strv *envp,
	     const struct tmux_open *w, struct spawn_result *res, char **err)
{
	memset(res, 0, sizeof *res);
	if (run_env(t, argv, envp->n > 0 ? strv_v(envp) : NULL, w, res, err) == 0)
		return 0;
	return res->out == NULL ? -2 : -1;
}

static int
check_size(const struct strv *a, char **err)
{
	size_t n = argv_bytes(a);

	if (n > TMUX_ARGV_MAX) {
		set_err(err, "tmux: command line of %zu bytes is too long for tmux (at most %d); "
			"pass fewer or shorter environment variables", n, TMUX_ARGV_MAX);
		return -1;
	}
	return 0;
}

/*
 * A sandboxed pane's terminal (SPEC §8.4), chained after the window's
 * commands, before any output of the pane is read (the server runs the
 * whole chain first): allow-passthrough off on the pane; the server's
 * set-clipboard set to external when it is on, and then only "on" printed,
 * so that the caller can say so (tmux 3.3a lets a pane read, OSC 52 "?",
 * and set the clipboard and the paste buffers only with "on"; "external"
 * still sends what the user copies in copy mode to the outer terminal).
 * Nothing is printed otherwise: a chain that prints costs the server a
 * round with its client.  A tmux without these options fails the chain:
 * the window is then killed (fail closed).
 */
static void
push_box(struct strv *a, const char *target)
{
	tmux_argv_sep(a);
	strv_push(a, "set-option");
	strv_push(a, "-p");
	strv_push(a, "-t");
	strv_push(a, target);
	strv_push(a, "allow-passthrough");
	strv_push(a, "off");
	tmux_argv_sep(a);
	strv_push(a, "if-shell");
	strv_push(a, "-F");
	strv_push(a, "#{==:#{set-clipboard},on}");
	strv_push(a, "set-option -s set-clipboard external ; display-message -p on");
}

/* Did push_box print that it changed set-clipboard ("on", a line of text)? */
static bool
clipboard_was_on(const char *text)
{
	for (const char *l = text; l != NULL && *l != '\0';) {
		const char *nl = strchr(l, '\n');

		if (strncmp(l, "on", 2) == 0 && (l[2] == '\n' || l[2] == '\0'))
			return true;
		l = nl != NULL ? nl + 1 : NULL;
	}
	return false;
}

/*
 * Before new-window, in the same invocation: kill the window already named
 * `name` in t->session, if there is one.  if-shell -F tests for it with
 * #{N/w:NAME} (tmux 3.2: a name compared with each window's, no format per
 * window), so a missing window, the usual case, is no error: a failure
 * would print, and every line tmux prints costs the server another round
 * with its client (bench/README.md).  The command is parsed by tmux, so it
 * is built only from names in the [A-Za-z0-9_-] alphabet.  It runs before
 * the next command of the chain.
 */
static void
push_replace_guard(struct strv *a, const struct tmux *t, const char *name)
{
	strv_push(a, "if-shell");
	strv_push(a, "-F");
	strv_push(a, "-t");
	strv_pushf(a, "=%s:", t->session);
	strv_pushf(a, "#{N/w:%s}", name);
	strv_pushf(a, "kill-window -t =%s:=%s", t->session, name);
	tmux_argv_sep(a);
}

/* Did tmux say nothing but the guard's "can't find window: NAME"?  No
 * other command of the chain names the window by NAME. */
static bool
guard_alone_failed(const struct spawn_result *r, const char *name)
{
	char *want = xasprintf("can't find window: %s\n", name);
	bool alone = r->err != NULL && strcmp(r->err, want) == 0;

	free(want);
	return alone;
}

/* "; set-option -w -t TARGET @hqt-start VALUE" (tmux_open's start). */
static void
push_start(struct strv *a, const char *target, const char *start)
{
	if (start == NULL)
		return;
	tmux_argv_sep(a);
	strv_push(a, "set-option");
	strv_push(a, "-w");
	strv_push(a, "-t");
	strv_push(a, target);
	strv_push(a, "@hqt-start");
	tmux_argv_word(a, start);
}

/* A tmux_open's meanwhile, called at most once over a call's attempts. */
struct once {
	const struct tmux_open *o;
	struct tmux_open w;  /* w.meanwhile is once_call */
	bool done;
};

static void
once_call(void *arg)
{
	struct once *x = arg;

	if (!x->done) {
		x->done = true;
		x->o->meanwhile(x->o->meanwhile_arg);
	}
}

/* The tmux_open to hand run_*: NULL without a meanwhile. */
static const struct tmux_open *
once_init(struct once *x, const struct tmux_open *o)
{
	memset(x, 0, sizeof *x);
	if (o == NULL || o->meanwhile == NULL)
		return NULL;
	x->o = o;
	x->w.meanwhile = once_call;
	x->w.meanwhile_arg = x;
	return &x->w;
}

static int
new_window(const struct tmux *t, const char *name, const char *cwd, char *const argv[],
	   char *const env[], bool replace, const char *label, const char *start, bool box,
	   bool quiet, const struct tmux_open *o, struct tmux_window *out, char **err)
{
	struct strv a = STRV_INIT, envp = STRV_INIT;
	struct once mw;
	const struct tmux_open *busy = once_init(&mw, o);
	struct spawn_result r;
	struct tmux_window w, check;
	char *end = NULL, *e = NULL, *nl;
	int rc = -1;

	if (!valid_window_name(name)) {
		set_err(err, "tmux: bad window name '%s' (letters, digits, '_', '-')",
			name != NULL ? name : "");
		return -1;
	}
	if (replace && !valid_window_name(t->session)) {
		/* Not a name the guard may spell: a process of its own. */
		tmux_kill_window(t, name, NULL);
		replace = false;
	}
	end = xasprintf("=%s:{end}", t->session);
	tmux_argv_init(t, &a);
	if (replace)
		push_replace_guard(&a, t, name);
	/* -a after {end}: the new window becomes {end}, which the chained
	 * commands below can name before anything else happens in the server.
	 * quiet: nothing is printed (a printing chain costs the server
	 * another round with the client; a box prints only that it changed
	 * set-clipboard), and tmux's exit status alone says whether the whole
	 * chain ran.  Else its ids come from the display at the end, which
	 * also proves that every command before it ran; -P would print them a
	 * second time, at the price of another command's work in the server.
	 * Without the guard, -P stays: a chain that fails half-way names the
	 * window to kill (with the guard, any window of that name is this
	 * one). */
	strv_push(&a, "new-window");
	strv_push(&a, "-d");
	strv_push(&a, "-a");
	if (!replace && !quiet) {
		strv_push(&a, "-P");
		strv_push(&a, "-F");
		strv_push(&a, WINDOW_FORMAT);
	}
	strv_push(&a, "-t");
	strv_push(&a, end);
	strv_push(&a, "-n");
	strv_push(&a, name);
	if (push_spawn_args(&a, cwd, argv, env, err) != 0)
		goto out;
	push_window_options(&a, end);
	if (label != NULL)
		push_label(&a, end, label);
	/* A new window without @hqt-start reads as "spawn" (hqt show looks
	 * for "resume"): one set-option less on every `hqt new`. */
	if (start != NULL && strcmp(start, "spawn") != 0)
		push_start(&a, end, start);
	if (!quiet)
		push_display(&a, end);
	if (box)
		push_box(&a, end);
	if (check_size(&a, err) != 0 || window_client_env(t, &a, env, &envp, err) != 0)
		goto out;

	for (int attempt = 0;; attempt++) {
		int st = attempt == 0 && envp.n == 0 ? run_early(t, &a, busy, &r, &e) : -3;

		if (st == -3)
			st = run_full_env(t, &a, &envp, busy, &r, &e);

		if (st == -1 && attempt == 0 &&
		    (no_server(&r) || err_has(&r, "can't find session"))) {
			/* The session (or server) went away: bring it back once. */
			spawn_result_free(&r);
			if (tmux_ensure_session(t, err) != 0)
				goto out;
			continue;
		}
		if (quiet) {
			/* The guard's kill failed, and only it: two windows of
			 * that name already (tmux calls the name ambiguous).  Its
			 * if-shell is a chain of its own, so new-window and every
			 * command after it ran: the window is whole. */
			if (st == -1 && replace && guard_alone_failed(&r, name))
				st = 0;
			/* Made or not, no window of that name may stay behind
			 * without its options. */
			if (st == -1 && !err_has(&r, "can't find session"))
				tmux_kill_window(t, name, NULL);
			if (st != 0) {
				set_err(err, "%s", e);
			} else {
				memset(out, 0, sizeof *out);
				out->clipboard_was_on = box && clipboard_was_on(r.out);
			}
			spawn_result_free(&r);
			rc = st == 0 ? 0 : -1;
			goto out;
		}
		/* The guard's kill failed (two windows of that name: tmux calls
		 * the name ambiguous) but new-window and every command after it
		 * ran, as the display's line says (a failure there would have
		 * skipped it): the window is whole. */
		if (st == -1 && replace && parse_window_line(r.out, &w) == 0) {
			free(e);
			e = NULL;
			break;
		}
		if (st != 0) {
			/* A window without its options must not stay behind:
			 * named by -P, or, after the guard, by its name. */
			if (st == -1 && !replace && parse_window_line(r.out, &w) == 0)
				tmux_kill_window(t, w.window_id, NULL);
			else if (st == -1 && replace && !err_has(&r, "can't find session"))
				tmux_kill_window(t, name, NULL);
			set_err(err, "%s", e);
			spawn_result_free(&r);
			goto out;
		}
		break;
	}
	nl = strchr(r.out, '\n');
	if (parse_window_line(r.out, &w) != 0 ||
	    (!replace && (nl == NULL || parse_window_line(nl + 1, &check) != 0))) {
		set_err(err, "tmux: unexpected answer from new-window: '%.80s'", r.out);
	} else if (!replace && strcmp(w.window_id, check.window_id) != 0) {
		/* Cannot happen with tmux's command queue; never leave a window
		 * without remain-on-exit behind if it somehow does. */
		tmux_kill_window(t, w.window_id, NULL);
		set_err(err, "tmux: the new window %s was not at the end of session %s",
			w.window_id, t->session);
	} else {
		/* The display's line: the first, or after -P's the second;
		 * what the box printed follows it. */
		const char *disp_end = replace ? nl : strchr(nl + 1, '\n');

		*out = replace ? w : check;
		out->clipboard_was_on = box && clipboard_was_on(disp_end != NULL ? disp_end + 1 : NULL);
		rc = 0;
	}
	spawn_result_free(&r);
out:
	free(e);
	free(end);
	strv_clear(&a);
	strv_clear(&envp);
	return rc;
}

int
tmux_new_window(const struct tmux *t, const char *name, const char *cwd,
		char *const argv[], char *const env[], struct tmux_window *out, char **err)
{
	return new_window(t, name, cwd, argv, env, false, NULL, NULL, false, false, NULL, out, err);
}

int
tmux_new_window_replace(const struct tmux *t, const char *name, const char *cwd,
			char *const argv[], char *const env[], struct tmux_window *out,
			char **err)
{
	return new_window(t, name, cwd, argv, env, true, NULL, NULL, false, false, NULL, out, err);
}

static int respawn_window(const struct tmux *t, const char *window, const char *cwd,
			  char *const argv[], char *const env[], const char *label,
			  const char *start, bool box, const struct tmux_open *o,
			  struct tmux_window *out, char **err);

int
tmux_open_window(const struct tmux *t, const char *name, const char *cwd, char *const argv[],
		 char *const env[], const struct tmux_open *o, struct tmux_window *out,
		 char **err)
{
	if (o->respawn)
		return respawn_window(t, name, cwd, argv, env, o->label, o->start, o->box, o,
				      out, err);
	return new_window(t, name, cwd, argv, env, o->replace, o->label, o->start, o->box,
			  true, o, out, err);
}

int
tmux_respawn_window(const struct tmux *t, const char *window, const char *cwd,
		    char *const argv[], char *const env[], struct tmux_window *out, char **err)
{
	return respawn_window(t, window, cwd, argv, env, NULL, NULL, false, NULL, out, err);
}

static int
respawn_window(const struct tmux *t, const char *window, const char *cwd,
	       char *const argv[], char *const env[], const char *label, const char *start,
	       bool box, const struct tmux_open *o, struct tmux_window *out, char **err)
{
	struct once mw;
	const struct tmux_open *busy = once_init(&mw, o);
	struct strv a = STRV_INIT, envp = STRV_INIT;
	struct spawn_result r;
	struct tmux_window w;
	char *target;
	int rc = -1;

	if ((target = window_target(t, window, err)) == NULL)
		return -1;
	tmux_argv_init(t, &a);
	strv_push(&a, "respawn-pane");
	strv_push(&a, "-k");
	strv_push(&a, "-t");
	strv_push(&a, target);
	if (push_spawn_args(&a, cwd, argv, env, err) != 0)
		goto out;
	push_window_options(&a, target);
	if (label != NULL)
		push_label(&a, target, label);
	push_start(&a, target, start);
	push_display(&a, target);
	if (box)
		push_box(&a, target);
	if (check_size(&a, err) != 0 || window_client_env(t, &a, env, &envp, err) != 0)
		goto out;
	if (run_full_env(t, &a, &envp, busy, &r, err) == 0) {
		const char *nl = strchr(r.out, '\n');

		if (parse_window_line(r.out, &w) != 0)
			set_err(err, "tmux: unexpected answer from respawn-pane: '%.80s'", r.out);
		else {
			*out = w;
			out->clipboard_was_on = box && clipboard_was_on(nl != NULL ? nl + 1 : NULL);
			rc = 0;
		}
	} else if (box && parse_window_line(r.out != NULL ? r.out : "", &w) == 0) {
		/* Respawned but not boxed: nothing may run there (fail closed). */
		tmux_kill_window(t, w.window_id, NULL);
	}
	spawn_result_free(&r);
out:
	free(target);
	strv_clear(&a);
	strv_clear(&envp);
	return rc;
}

int
tmux_kill_window(const struct tmux *t, const char *window, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	char *target, *e = NULL;
	int rc;

	if ((target = window_target(t, window, err)) == NULL)
		return -1;
	tmux_argv_init(t, &a);
	strv_push(&a, "kill-window");
	strv_push(&a, "-t");
	strv_push(&a, target);
	rc = run_full(t, &a, &r, &e);
	if (rc == -1 && (no_server(&r) || err_has(&r, "can't find")))
		rc = 0; /* already gone */
	if (rc != 0)
		set_err(err, "%s", e);
	free(e);
	free(target);
	spawn_result_free(&r);
	strv_clear(&a);
	return rc < 0 ? -1 : 0;
}

int
tmux_resize_window(const struct tmux *t, const char *window, unsigned width,
		   unsigned height, char **err)
{
	struct strv a = STRV_INIT;
	char *target;
	int rc;

	if (width == 0 || height == 0 || width > 10000 || height > 10000) {
		set_err(err, "tmux: bad window size %ux%u", width, height);
		return -1;
	}
	if ((target = window_target(t, window, err)) == NULL)
		return -1;
	tmux_argv_init(t, &a);
	strv_push(&a, "resize-window");
	strv_push(&a, "-t");
	strv_push(&a, target);
	strv_push(&a, "-x");
	strv_pushf(&a, "%u", width);
	strv_push(&a, "-y");
	strv_pushf(&a, "%u", height);
	rc = tmux_run(t, &a, NULL, err);
	free(target);
	strv_clear(&a);
	return rc;
}

/* ---- list-panes ---- */

/* 16 random hex digits: the marks no pane can guess. */
static void
make_nonce(char out[17])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char b[8];
	struct timespec ts;

	if (getrandom(b, sizeof b, GRND_NONBLOCK) != (ssize_t)sizeof b) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^
			     ((uint64_t)getpid() << 40);
		memcpy(b, &x, sizeof b);
	}
	for (int i = 0; i < 8; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[16] = '\0';
}


/*
 * Fourteen tab-terminated fields; then the session and window names back to
 * back, cut by their byte lengths (#{n:}, given among the fourteen); then
 * "\t<nonce>\n".  Only what hqt uses: #{pane_current_command}, which made
 * the server read /proc for every pane, is not asked for (issue 11).
 */
#define PANES_FORMAT                                                              \
	"#{pane_id}\t#{window_id}\t#{pane_dead}\t#{pane_dead_status}\t"            \
	"#{pane_dead_signal}\t#{pane_pid}\t#{window_activity}\t#{pane_width}\t"    \
	"#{pane_height}\t#{pane_active}\t#{history_size}\t#{pid}\t"                 \
	"#{n:session_name}\t#{n:window_name}\t"                                     \
	"#{session_name}#{window_name}\t%s"
#define PANES_NFIELDS 14
enum { F_PANE, F_WINDOW, F_DEAD, F_STATUS, F_SIGNAL, F_PID, F_ACTIVITY, F_WIDTH,
       F_HEIGHT, F_ACTIVE, F_HSIZE, F_SERVER, F_NSESSION, F_NWINDOW };

static void
pane_clear(struct tmux_pane *p)
{
	free(p->session);
	free(p->window_name);
	free(p->window_id);
	free(p->pane_id);
	memset(p, 0, sizeof *p);
}

void
tmux_panes_free(struct tmux_panes *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++)
		pane_clear(&p->v[i]);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

const struct tmux_pane *
tmux_panes_find(const struct tmux_panes *p, const char *name)
{
	size_t hint = 0;

	return tmux_panes_find_near(p, name, &hint);
}

const struct tmux_pane *
tmux_panes_find_near(const struct tmux_panes *p, const char *name, size_t *hint)
{
	size_t n = p != NULL ? p->n : 0, start = *hint < n ? *hint : 0;

	/* From the hint to the end, then from the start: the first pane of
	 * the window either way, since a window's panes are listed together. */
	for (size_t i = start; i < n; i++)
		if (strcmp(p->v[i].window_name, name) == 0 &&
		    (i == 0 || strcmp(p->v[i - 1].window_name, name) != 0)) {
			*hint = i + 1;
			return &p->v[i];
		}
	for (size_t i = 0; i < start; i++)
		if (strcmp(p->v[i].window_name, name) == 0) {
			*hint = i + 1;
			return &p->v[i];
		}
	return NULL;
}

/* An optional number: empty is -1. */
static int
parse_opt_num(const char *s, size_t len, long long *out)
{
	if (len == 0) {
		*out = -1;
		return 0;
	}
	return parse_num(s, len, out);
}

/*
 * One record at buf[*off]; advances *off and sets *server (the server's
 * pid).  0, or -1 on malformed input.
 */
static int
parse_pane(const char *buf, size_t len, size_t *off, const char *end_mark,
	   struct tmux_pane *p, long *server)
{
	const char *f[PANES_NFIELDS];
	size_t fl[PANES_NFIELDS], pos = *off, tl[2], mlen = strlen(end_mark);
	long long v[PANES_NFIELDS];

	memset(p, 0, sizeof *p);
	for (int i = 0; i < PANES_NFIELDS; i++) {
		size_t s = pos;

		while (pos < len && buf[pos] != '\t' && buf[pos] != '\n')
			pos++;
		if (pos >= len || buf[pos] != '\t')
			return -1;
		f[i] = buf + s;
		fl[i] = pos - s;
		pos++;
	}
	for (int i = F_DEAD; i < PANES_NFIELDS; i++)
		if (parse_opt_num(f[i], fl[i], &v[i]) != 0)
			return -1;
	for (int i = 0; i < 2; i++) {
		if (v[F_NSESSION + i] < 0 || (size_t)v[F_NSESSION + i] > len - pos)
			return -1;
		tl[i] = (size_t)v[F_NSESSION + i];
	}
	if (len - pos < tl[0] + tl[1])
		return -1;
	/* The nonce right after the names: a record cut or padded is refused. */
	if (len - pos - tl[0] - tl[1] < mlen ||
	    memcmp(buf + pos + tl[0] + tl[1], end_mark, mlen) != 0)
		return -1;
	if (v[F_PID] <= 0 || v[F_PID] > LONG_MAX || v[F_SERVER] > LONG_MAX ||
	    v[F_WIDTH] < 0 || v[F_HEIGHT] < 0 || v[F_WIDTH] > UINT_MAX || v[F_HEIGHT] > UINT_MAX ||
	    v[F_HSIZE] < 0 || v[F_HSIZE] > UINT_MAX)
		return -1;
	p->pane_id = xstrndup(f[F_PANE], fl[F_PANE]);
	p->window_id = xstrndup(f[F_WINDOW], fl[F_WINDOW]);
	if (!valid_id(p->pane_id, '%') || !valid_id(p->window_id, '@')) {
		pane_clear(p);
		return -1;
	}
	p->dead = v[F_DEAD] == 1;
	p->dead_status = v[F_STATUS] >= 0 && v[F_STATUS] <= 255 ? (int)v[F_STATUS] : -1;
	p->dead_signal = v[F_SIGNAL] > 0 && v[F_SIGNAL] < 256 ? (int)v[F_SIGNAL] : -1;
	p->pid = (long)v[F_PID];
	p->activity = v[F_ACTIVITY];
	p->width = (unsigned)v[F_WIDTH];
	p->height = (unsigned)v[F_HEIGHT];
	p->active = v[F_ACTIVE] == 1;
	p->history_size = (unsigned)v[F_HSIZE];
	*server = (long)v[F_SERVER];
	p->session = xstrndup(buf + pos, tl[0]);
	pos += tl[0];
	p->window_name = xstrndup(buf + pos, tl[1]);
	pos += tl[1];
	pos += mlen;
	*off = pos;
	return 0;
}

/*
 * The records at buf[*off], up to the end or up to a line `stop` (may be
 * NULL): those of t->session into *ps.  *unreaped: a pane of ours is dead
 * with neither status nor signal known.  0, or -1 on malformed input.
 */
static int
parse_panes(const struct tmux *t, const char *buf, size_t len, size_t *off, const char *end_mark,
	    const char *stop, struct tmux_panes *ps, long *server, bool *unreaped)
{
	size_t cap = 0, slen = stop != NULL ? strlen(stop) : 0;

	ps->v = NULL;
	ps->n = 0;
	*server = -1;
	*unreaped = false;
	while (*off < len) {
		struct tmux_pane p;

		if (slen > 0 && len - *off >= slen && memcmp(buf + *off, stop, slen) == 0)
			break;
		if (parse_pane(buf, len, off, end_mark, &p, server) != 0) {
			tmux_panes_free(ps);
			return -1;
		}
		if (strcmp(p.session, t->session) != 0) {
			pane_clear(&p);
			continue;
		}
		if (p.dead && p.dead_status < 0 && p.dead_signal < 0)
			*unreaped = true;
		if (ps->n == cap) {
			cap = cap ? cap * 2 : 16;
			ps->v = xreallocarray(ps->v, cap, sizeof *ps->v);
		}
		ps->v[ps->n++] = p;
	}
	return 0;
}

static void
push_list_panes(struct strv *a, const char *nonce)
{
	strv_push(a, "list-panes");
	strv_push(a, "-a");
	strv_push(a, "-F");
	strv_pushf(a, PANES_FORMAT, nonce);
}

/*
 * One list-panes call.  *unreaped: a pane of ours is dead with neither
 * status nor signal known.  1 when there is no server.
 */
static int
list_once(const struct tmux *t, struct tmux_panes *out, long *server, bool *unreaped,
	  char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	size_t off = 0;
	char *e = NULL, nonce[17], end_mark[24];
	int rc;

	*server = -1;
	*unreaped = false;
	make_nonce(nonce);
	snprintf(end_mark, sizeof end_mark, "\t%s\n", nonce);
	tmux_argv_init(t, &a);
	push_list_panes(&a, nonce);
	rc = run_full(t, &a, &r, &e);
	strv_clear(&a);
	if (rc == -1 && no_server(&r)) {
		spawn_result_free(&r);
		free(e);
		out->v = NULL;
		out->n = 0;
		return 1;
	}
	if (rc != 0) {
		set_err(err, "%s", e);
		free(e);
		spawn_result_free(&r);
		return -1;
	}
	if (parse_panes(t, r.out, r.out_len, &off, end_mark, NULL, out, server, unreaped) != 0) {
		set_err(err, "tmux: cannot parse list-panes output near byte %zu", off);
		spawn_result_free(&r);
		return -1;
	}
	spawn_result_free(&r);
	return 0;
}

/*
 * tmux 3.3a sometimes misses the SIGCHLD of a pane's process: the pane
 * reads dead (its pty closed) but the process stays a zombie and its status
 * unknown until the server happens to reap another child (seen in about 1
 * exit in 5 here).  Any SIGCHLD makes the server reap every zombie it has,
 * so nudge it and ask once more; *out is replaced when that works.
 */
static void
nudge_and_relist(const struct tmux *t, struct tmux_panes *out, long server)
{
	struct timespec settle = { 0, 30 * 1000 * 1000 };
	struct tmux_panes again;
	bool unreaped;

	if (server <= 1 || kill((pid_t)server, SIGCHLD) != 0)
		return;
	nanosleep(&settle, NULL);
	if (list_once(t, &again, &server, &unreaped, NULL) == 0) {
		tmux_panes_free(out);
		*out = again;
	}
}

int
tmux_list_panes(const struct tmux *t, struct tmux_panes *out, char **err)
{
	long server;
	bool unreaped;
	int rc;

	rc = list_once(t, out, &server, &unreaped, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (unreaped)
		nudge_and_relist(t, out, server);
	return 0;
}

/* ---- capture ---- */

/* The end of the line starting at pos (index of its '\n'), or len. */
static size_t
line_end(const char *s, size_t len, size_t pos)
{
	const char *nl = memchr(s + pos, '\n', len - pos);

	return nl != NULL ? (size_t)(nl - s) : len;
}

/*
 * The capture chain: ONE invocation of
 *
 *   list-panes -a -F PANES ; list-sessions -F MARK ; capture-pane -p -t T1 ; ...
 *
 * tmux runs one client's chained commands back to back: no pane output is
 * read, no pane resized and no child reaped between them.  So the height
 * and history size the list gives for a pane are exactly what its capture
 * prints: height + min(history, history_size) lines, each ending in '\n'.
 * The texts are cut by counting lines, without a `display` header per pane
 * (which doubled the commands tmux ran) and without searching for a
 * separator a pane could print.  MARK ("hqt:NONCE:end", one line per
 * session) ends the list.  A target that does not exist makes tmux skip the
 * rest of the chain: the output then ends at a text boundary.
 *
 * Targets are pane ids ("%7", BY_PANE) or window names of t->session
 * (BY_NAME: the window's active pane, as capture-pane -t =S:=NAME takes it).
 */
enum target_kind { BY_PANE, BY_NAME };

struct chain {
	struct tmux_panes panes; /* the list, t->session's panes only */
	long server;             /* the server's pid */
	bool unreaped;           /* as list_once */
	size_t done;             /* targets captured before the chain stopped */
};

static const struct tmux_pane *
target_pane(const struct tmux_panes *ps, const char *target, enum target_kind kind)
{
	for (size_t i = 0; i < ps->n; i++) {
		const struct tmux_pane *p = &ps->v[i];

		if (kind == BY_PANE ? strcmp(p->pane_id, target) == 0
				    : p->active && strcmp(p->window_name, target) == 0)
			return p;
	}
	return NULL;
}

static void
push_chain_capture(struct strv *a, const struct tmux *t, const char *target,
		   enum target_kind kind, unsigned history)
{
	tmux_argv_sep(a);
	strv_push(a, "capture-pane");
	strv_push(a, "-p");
	strv_push(a, "-t");
	if (kind == BY_PANE)
		strv_push(a, target);
	else
		strv_pushf(a, "=%s:=%s", t->session, target);
	if (history > 0) {
		strv_push(a, "-S");
		strv_pushf(a, "-%u", history);
	}
}

/* How many of targets[from..n) fit one command line with the list (at least one). */
static size_t
chain_fit(const struct tmux *t, char *const targets[], size_t from, size_t n)
{
	struct strv a = STRV_INIT;
	size_t used, to;

	tmux_argv_init(t, &a);
	used = argv_bytes(&a) + sizeof PANES_FORMAT + 16 + 64;
	strv_clear(&a);
	for (to = from; to < n; to++) {
		/* "capture-pane -p -t =S:=NAME -S -100000 ;" */
		size_t need = strlen(targets[to]) + strlen(t->session) + 48;

		if (to > from && used + need > TMUX_ARGV_MAX)
			break;
		used += need;
	}
	return to;
}

/*
 * Run the chain for targets[0..n).  0: c->panes is the list, texts[0..c->done)
 * are set (c->done < n: tmux stopped at targets[c->done], which did not
 * exist).  1: no server (c empty, nothing captured).  -1: error with *err.
 * -2: the output does not split as the list says it must (never seen; the
 * caller falls back to per-pane headers).
 */
static int
chain_run(const struct tmux *t, char *const targets[], size_t n, enum target_kind kind,
	  unsigned history, struct chain *c, char **texts, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	char nonce[17], end_mark[24], *stop, *e = NULL;
	size_t off = 0, slen, k = 0;
	bool marked = false;
	int st, rc = -1;

	memset(c, 0, sizeof *c);
	c->server = -1;
	make_nonce(nonce);
	snprintf(end_mark, sizeof end_mark, "\t%s\n", nonce);
	stop = xasprintf("hqt:%s:end\n", nonce);
	slen = strlen(stop);
	tmux_argv_init(t, &a);
	push_list_panes(&a, nonce);
	tmux_argv_sep(&a);
	strv_push(&a, "list-sessions");
	strv_push(&a, "-F");
	strv_pushf(&a, "hqt:%s:end", nonce);
	for (size_t i = 0; i < n; i++)
		push_chain_capture(&a, t, targets[i], kind, history);
	/* Through tmux_prestart's client when there is one: it connected
	 * while the caller read the database. */
	memset(&r, 0, sizeof r);
	if ((st = run_early(t, &a, NULL, &r, &e)) == -3)
		st = run_full(t, &a, &r, &e);
	else if (st == -1 && r.out == NULL)
		st = -2;
	strv_clear(&a);
	if (st == -2 || (st == -1 && r.timed_out)) {
		set_err(err, "%s", e);
		goto out;
	}
	if (st == -1 && no_server(&r)) {
		rc = 1;
		goto out;
	}
	/* Only a capture-pane names a target: "can't find pane/window/session". */
	if (st == -1 && !err_has(&r, "can't find")) {
		set_err(err, "%s", e);
		goto out;
	}
	if (parse_panes(t, r.out, r.out_len, &off, end_mark, stop, &c->panes, &c->server,
			&c->unreaped) != 0) {
		set_err(err, "tmux: cannot parse list-panes output near byte %zu", off);
		goto out;
	}
	while (r.out_len - off >= slen && memcmp(r.out + off, stop, slen) == 0) {
		off += slen;
		marked = true;
	}
	rc = -2;
	if (!marked && off < r.out_len)
		goto out;
	for (k = 0; k < n && off < r.out_len; k++) {
		const struct tmux_pane *p = target_pane(&c->panes, targets[k], kind);
		size_t want, got = 0, start = off;

		if (p == NULL)
			goto out;
		want = (size_t)p->height + (p->history_size < history ? p->history_size : history);
		while (got < want && off < r.out_len) {
			off = line_end(r.out, r.out_len, off);
			if (off == r.out_len)
				goto out; /* a last line without its '\n' */
			off++;
			got++;
		}
		if (got < want)
			goto out;
		texts[k] = xstrndup(r.out + start, off - start);
	}
	/* Everything read, and tmux stopped exactly when a target was missing. */
	if (off != r.out_len || (k < n) != (st != 0))
		goto out;
	c->done = k;
	rc = 0;
out:
	if (rc != 0) {
		for (size_t i = 0; i < k; i++) {
			free(texts[i]);
			texts[i] = NULL;
		}
		tmux_panes_free(&c->panes);
	}
	free(stop);
	free(e);
	spawn_result_free(&r);
	return rc;
}

/* ---- capture, the fallback: a header before each pane ---- */

/* Append display + capture-pane for one pane. */
static void
push_capture(struct strv *a, const char *pane, unsigned history, const char *header)
{
	strv_push(a, "display-message");
	strv_push(a, "-p");
	strv_push(a, "-t");
	strv_push(a, pane);
	strv_push(a, header);
	tmux_argv_sep(a);
	strv_push(a, "capture-pane");
	strv_push(a, "-p");
	strv_push(a, "-t");
	strv_push(a, pane);
	if (history > 0) {
		strv_push(a, "-S");
		strv_pushf(a, "-%u", history);
	}
}
/* Does a line starting at pos begin with prefix? */
static bool
header_at(const char *out, size_t len, size_t pos, const char *prefix, size_t plen)
{
	return pos < len && len - pos > plen && memcmp(out + pos, prefix, plen) == 0;
}

/*
 * Read panes[from..to) out of one invocation's output: for each, a header
 * line "hqt:NONCE:%ID:HEIGHT:HSIZE", then exactly HEIGHT + min(history,
 * HSIZE) lines.  Returns the index of the first pane it could not read (to
 * when all were).
 */
static size_t
split_captures(const char *out, size_t len, char *const panes[], size_t from, size_t to,
	       unsigned history, const char *nonce, char **texts)
{
	size_t pos = 0, k, plen;
	char prefix[40];

	plen = (size_t)snprintf(prefix, sizeof prefix, "hqt:%s:", nonce);
	for (k = from; k < to; k++) {
		size_t e = line_end(out, len, pos), start, end, nlines, got = 0;
		long long height, hsize;
		const char *h = out + pos, *c1, *c2;

		if (!header_at(out, len, pos, prefix, plen))
			break;
		h += plen;
		c1 = memchr(h, ':', (size_t)(out + e - h));
		c2 = c1 != NULL ? memchr(c1 + 1, ':', (size_t)(out + e - c1 - 1)) : NULL;
		if (c2 == NULL || (size_t)(c1 - h) != strlen(panes[k]) ||
		    memcmp(h, panes[k], (size_t)(c1 - h)) != 0 ||
		    parse_num(c1 + 1, (size_t)(c2 - c1 - 1), &height) != 0 ||
		    parse_num(c2 + 1, (size_t)(out + e - c2 - 1), &hsize) != 0 ||
		    height <= 0 || hsize < 0)
			break; /* display fell back to another pane: this one is gone */
		nlines = (size_t)height + ((unsigned long long)hsize < history ? (size_t)hsize : history);
		start = end = e + 1;
		if (start >= len)
			break; /* its capture-pane failed: the chain stopped here */
		while (got < nlines && end < len) {
			end = line_end(out, len, end);
			end += end < len;
			got++;
		}
		if (got < nlines || (end < len && !header_at(out, len, end, prefix, plen))) {
			/* Not the line count tmux announced (never seen): fall back
			 * to the next header, which carries the unguessable nonce. */
			end = start;
			while (end < len && !header_at(out, len, end, prefix, plen)) {
				end = line_end(out, len, end);
				end += end < len;
			}
		}
		texts[k] = xstrndup(out + start, end - start);
		pos = end;
	}
	return k;
}

/*
 * The captures of n panes with a `display` header line before each
 * ("hqt:NONCE:%ID:HEIGHT:HSIZE"): twice the commands of the chain above, so
 * only used when the chain's output does not split (never seen).
 */
static int
capture_with_headers(const struct tmux *t, char *const panes[], size_t n, unsigned history,
		     char **texts, char **err)
{
	char nonce[17], *header, **got;
	size_t i = 0;
	int rc = 0;

	make_nonce(nonce);
	header = xasprintf("hqt:%s:#{pane_id}:#{pane_height}:#{history_size}", nonce);
	got = xcalloc(n ? n : 1, sizeof *got);

	while (i < n) {
		struct strv a = STRV_INIT;
		struct spawn_result r;
		size_t to = i, base, next = i;
		char *e = NULL;
		int st;

		tmux_argv_init(t, &a);
		base = argv_bytes(&a);
		/* As many panes as fit one command line: ~100 per process. */
		for (size_t used = base; to < n; to++) {
			size_t need = 2 * (strlen(panes[to]) + 1) + strlen(header) + 1 + 64;

			if (to > i && used + need > TMUX_ARGV_MAX)
				break;
			if (to > i)
				tmux_argv_sep(&a);
			push_capture(&a, panes[to], history, header);
			used += need;
		}
		st = run_full(t, &a, &r, &e);
		strv_clear(&a);
		if (st == -2 || (st == -1 && r.timed_out)) {
			set_err(err, "%s", e);
			rc = -1;
		} else if (st == -1 && no_server(&r)) {
			next = n; /* every pane is gone */
		} else {
			next = split_captures(r.out, r.out_len, panes, i, to, history, nonce, got);
			if (next < to && st == -1 && err_has(&r, "can't find")) {
				next++; /* panes[next] does not exist: tmux stopped there */
			} else if (next < to || st != 0) {
				if (st == 0)
					set_err(err, "tmux: cannot split the output of capture-pane");
				else
					set_err(err, "%s", e);
				rc = -1;
			}
		}
		free(e);
		spawn_result_free(&r);
		if (rc != 0)
			break;
		i = next;
	}
	free(header);
	if (rc != 0) {
		for (size_t k = 0; k < n; k++)
			free(got[k]);
	} else
		memcpy(texts, got, n * sizeof *texts);
	free(got);
	return rc;
}

int
tmux_capture_many(const struct tmux *t, char *const panes[], size_t n, unsigned history,
		  char **texts, char **err)
{
	char **got;
	size_t i = 0;
	int rc = 0;

	for (size_t k = 0; k < n; k++)
		if (!valid_id(panes[k], '%')) {
			set_err(err, "tmux: bad pane id '%s'", panes[k] != NULL ? panes[k] : "");
			return -1;
		}
	if (history > 100000)
		history = 100000;
	got = xcalloc(n ? n : 1, sizeof *got);
	while (i < n) {
		size_t to = chain_fit(t, panes, i, n);
		struct chain c;
		int st = chain_run(t, panes + i, to - i, BY_PANE, history, &c, got + i, err);

		if (st == 1)
			break; /* no server: every pane is gone */
		if (st == -2) {
			rc = capture_with_headers(t, panes + i, n - i, history, got + i, err);
			break;
		}
		if (st != 0) {
			rc = -1;
			break;
		}
		tmux_panes_free(&c.panes);
		/* panes[i + c.done] does not exist: tmux stopped there. */
		i += c.done < to - i ? c.done + 1 : c.done;
	}
	if (rc != 0) {
		for (size_t k = 0; k < n; k++)
			free(got[k]);
	} else
		memcpy(texts, got, n * sizeof *texts);
	free(got);
	return rc;
}

void
tmux_seen_of(struct tmux_seen *s, const struct tmux_pane *p, long long at)
{
	memset(s, 0, sizeof *s);
	s->want = TMUX_WANT_CHANGED;
	snprintf(s->pane_id, sizeof s->pane_id, "%s", p->pane_id);
	s->pid = p->pid;
	s->width = p->width;
	s->height = p->height;
	s->activity = p->activity;
	s->at = at;
}

/* Read a whole second after its window's last output: any output since
 * has a later second than s->activity. */
static bool
seen_settled(const struct tmux_seen *s)
{
	return s->want == TMUX_WANT_CHANGED && valid_id(s->pane_id, '%') && s->pid > 0 &&
	       s->activity >= 0 && s->activity < s->at;
}

/*
 * Settled, and quiet for a while before that read: likely still now, so
 * left out of the chain (a change costs one more call).  A screen that had
 * output within TMUX_QUIET_SECONDS of its read is likely at work (a
 * harness's spinner redraws many times a second): captured in the chain,
 * which costs no more call.
 */
#define TMUX_QUIET_SECONDS 2

static bool
seen_quiet(const struct tmux_seen *s)
{
	return seen_settled(s) && s->at - s->activity > TMUX_QUIET_SECONDS;
}

bool
tmux_seen_still(const struct tmux_seen *s, const struct tmux_pane *p)
{
	return s != NULL && p != NULL && !p->dead && seen_settled(s) &&
	       strcmp(s->pane_id, p->pane_id) == 0 && s->pid == p->pid &&
	       s->width == p->width && s->height == p->height && s->activity == p->activity;
}

/*
 * tmux_status (seen NULL) and tmux_status_since.  The chain captures, by
 * name, the windows that are to be read and not quiet (seen_quiet: so
 * likely to have changed, a session at work); a quiet one is left out, and
 * the list says whether it is still as seen.  What remains to be read (a settled
 * window that changed, what the chain did not give) costs one more call,
 * by pane id, only when there is such a window.
 */
static int
status_read(const struct tmux *t, char *const windows[], size_t n, const struct tmux_seen *seen,
	    struct tmux_panes *panes, char **texts, char **err)
{
	struct chain c;
	char **ids, **chained, **got;
	size_t *at, *of, nids = 0, nch = 0, to;
	int st, rc = -1;

	panes->v = NULL;
	panes->n = 0;
	for (size_t k = 0; k < n; k++) {
		if (!valid_window_name(windows[k])) {
			set_err(err, "tmux: bad window name '%s'", windows[k] != NULL ? windows[k] : "");
			return -1;
		}
		texts[k] = NULL;
	}
	chained = xcalloc(n + 1, sizeof *chained);
	of = xcalloc(n + 1, sizeof *of);
	got = xcalloc(n + 1, sizeof *got);
	ids = xcalloc(n + 1, sizeof *ids);
	at = xcalloc(n + 1, sizeof *at);
	for (size_t k = 0; k < n; k++)
		if (seen == NULL || seen[k].want == TMUX_WANT_SCREEN ||
		    (seen[k].want == TMUX_WANT_CHANGED && !seen_quiet(&seen[k]))) {
			chained[nch] = windows[k];
			of[nch++] = k;
		}
	to = chain_fit(t, chained, 0, nch);
	st = chain_run(t, chained, to, BY_NAME, 0, &c, got, err);
	if (st == 1) {
		rc = 0; /* no server: no panes, no texts */
		goto out;
	}
	if (st == -1)
		goto out;
	if (st == -2) {
		/* Never seen: the list alone, then every pane with headers below. */
		if (tmux_list_panes(t, panes, err) != 0)
			goto out;
		c.done = 0;
		c.unreaped = false;
	} else
		*panes = c.panes;
	for (size_t j = 0; j < c.done; j++) {
		texts[of[j]] = got[j];
		got[j] = NULL;
	}
	/*
	 * What the chain did not capture: the windows after the one it stopped
	 * at (a session whose window is gone), those beyond one command line,
	 * a window split by hand whose active pane is not its first (the one
	 * tmux_panes_find gives), and a settled window that changed.  One more
	 * call, by pane id.
	 */
	for (size_t k = 0, hint = 0; k < n; k++) {
		const struct tmux_pane *first = tmux_panes_find_near(panes, windows[k], &hint);

		if (seen != NULL &&
		    (first == NULL || first->dead || seen[k].want == TMUX_WANT_NOTHING)) {
			free(texts[k]);
			texts[k] = NULL;
			continue;
		}
		if (texts[k] != NULL && first != NULL && first->active)
			continue;
		free(texts[k]);
		texts[k] = NULL;
		if (first == NULL ||
		    (seen != NULL && seen[k].want == TMUX_WANT_CHANGED &&
		     tmux_seen_still(&seen[k], first)))
			continue;
		ids[nids] = first->pane_id;
		at[nids++] = k;
	}
	if (nids > 0) {
		char **more = xcalloc(nids, sizeof *more);

		if (tmux_capture_many(t, ids, nids, 0, more, err) != 0) {
			free(more);
			goto out;
		}
		for (size_t j = 0; j < nids; j++)
			texts[at[j]] = more[j];
		free(more);
	}
	if (c.unreaped)
		nudge_and_relist(t, panes, c.server);
	rc = 0;
out:
	if (rc != 0) {
		for (size_t k = 0; k < n; k++) {
			free(texts[k]);
			texts[k] = NULL;
		}
		tmux_panes_free(panes);
	}
	for (size_t j = 0; j < nch; j++)
		free(got[j]);
	free(got);
	free(chained);
	free(of);
	free(ids);
	free(at);
	return rc;
}

int
tmux_status(const struct tmux *t, char *const windows[], size_t n, struct tmux_panes *panes,
	    char **texts, char **err)
{
	return status_read(t, windows, n, NULL, panes, texts, err);
}

int
tmux_status_since(const struct tmux *t, char *const windows[], size_t n,
		  const struct tmux_seen *seen, long long *at, struct tmux_panes *panes,
		  char **texts, char **err)
{
	*at = (long long)time(NULL);
	return status_read(t, windows, n, seen, panes, texts, err);
}

int
tmux_capture(const struct tmux *t, const char *pane, unsigned history, char **text, char **err)
{
	char *const panes[] = { (char *)pane, NULL };

	return tmux_capture_many(t, panes, 1, history, text, err);
}

/* ---- what the user sees of hqt's windows ---- */

int
tmux_display(const struct tmux *t, const char *target, const char *format, char **out,
	     char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "display-message");
	strv_push(&a, "-p");
	if (target != NULL) {
		strv_push(&a, "-t");
		strv_push(&a, target);
	}
	tmux_argv_word(&a, format);
	rc = run_full(t, &a, &r, err);
	strv_clear(&a);
	if (rc == 0) {
		*out = xstrndup(r.out != NULL ? r.out : "", strcspn(r.out != NULL ? r.out : "", "\n"));
	}
	spawn_result_free(&r);
	return rc < 0 ? -1 : 0;
}

int
tmux_prefix(const struct tmux *t, char **key, char **err)
{
	struct strv a = STRV_INIT;
	struct spawn_result r;
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "show-options");
	strv_push(&a, "-gv");
	strv_push(&a, "prefix");
	rc = run_full(t, &a, &r, err);
	strv_clear(&a);
	if (rc == 0) {
		const char *o = r.out != NULL ? r.out : "";
		size_t len = strcspn(o, "\n");
		*key = len > 0 && strncmp(o, "None", len) != 0 ? xstrndup(o, len) : NULL;
	}
	spawn_result_free(&r);
	return rc < 0 ? -1 : 0;
}

int
tmux_session_hint(const struct tmux *t, const char *hint, char **err)
{
	struct strv a = STRV_INIT;
	char *shown = text_escape(hint, 80), *escaped = tmux_format_escape(shown);
	int rc;

	tmux_argv_init(t, &a);
	strv_push(&a, "set-option");
	strv_push(&a, "-t");
	strv_pushf(&a, "=%s:", t->session);
	strv_push(&a, "status-right");
	strv_pushf(&a, "#[reverse] %s #[default]", escaped);
	/* The default status-right-length (40) would cut it. */
	tmux_argv_sep(&a);
	strv_push(&a, "set-option");
	strv_push(&a, "-t");
	strv_pushf(&a, "=%s:", t->session);
	strv_push(&a, "status-right-length");
	strv_pushf(&a, "%zu", strlen(escaped) + 8);
	rc = tmux_run(t, &a, NULL, err);
	strv_clear(&a);
	free(escaped);
	free(shown);
	return rc;
}

/* ---- attach ---- */

static bool
same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (strcmp(a, b) == 0)
		return true;
	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
	       sa.st_ino == sb.st_ino;
}

int
tmux_attach_argv(const struct tmux *t, const char *window, struct strv *argv,
		 struct strv *envp, bool *switch_client, char **err)
{
	const char *tm = getenv("TMUX");
	bool same = false;
	char *target;

	if ((target = window_target(t, window, err)) == NULL)
		return -1;
	if (tm != NULL && *tm != '\0') {
		/* $TMUX is "SOCKET_PATH,SERVER_PID,SESSION_INDEX". */
		struct strv a = STRV_INIT;
		struct spawn_result r;
		char *ours, *theirs = xstrndup(tm, strcspn(tm, ","));
		int rc;

		tmux_argv_init(t, &a);
		strv_push(&a, "display-message");
		strv_push(&a, "-p");
		strv_push(&a, "#{socket_path}");
		rc = run_full(t, &a, &r, err);
		strv_clear(&a);
		if (rc != 0) {
			spawn_result_free(&r);
			free(theirs);
			free(target);
			return -1;
		}
		ours = first_line(r.out, r.out_len);
		same = ours != NULL && same_file(ours, theirs);
		free(ours);
		free(theirs);
		spawn_result_free(&r);
	}
	argv_start(t, argv, false);
	strv_push(argv, same ? "switch-client" : "attach-session");
	strv_push(argv, "-t");
	strv_push(argv, target);
	free(target);
	if (!same && tm != NULL) {
		/* Inside another server: a nested client, which tmux refuses
		 * while $TMUX is set. */
		for (char **e = environ; *e != NULL; e++)
			if (strncmp(*e, "TMUX=", 5) != 0 && strncmp(*e, "TMUX_PANE=", 10) != 0)
				strv_push(envp, *e);
	}
	if (switch_client != NULL)
		*switch_client = same;
	return 0;
}

int
tmux_attach(const struct tmux *t, const char *window, bool wait, char **err)
{
	struct strv argv = STRV_INIT, envp = STRV_INIT;
	char *const *env;
	bool sw = false;
	char *e = NULL;
	int rc, status = 0;

	if (tmux_attach_argv(t, window, &argv, &envp, &sw, err) != 0)
		return -1;
	env = envp.n > 0 ? strv_v(&envp) : NULL;
	if (sw)
		rc = tmux_run(t, &argv, NULL, err);
	else if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		/* Say it here: once exec'ed, tmux's own complaint would be all. */
		char *cmd = strv_join_quoted(&argv);

		set_err(err, "tmux: cannot attach: not a terminal (run hqt from one, or: %s)",
			cmd);
		free(cmd);
		rc = -1;
	} else if (!wait) {
		rc = spawn_exec(strv_v(&argv), env, &e);
		/* Only on failure. */
		if (rc == -ENOENT && t->bin == NULL)
			set_err(err, "tmux not found; install it: apt-get install tmux");
		else
			set_err(err, "tmux: %s", e);
		rc = -1;
	} else {
		rc = spawn_run(strv_v(&argv), env, &status, &e);
		if (rc == -ENOENT && t->bin == NULL)
			set_err(err, "tmux not found; install it: apt-get install tmux");
		else if (rc < 0)
			set_err(err, "tmux: %s", e);
		else if (status != 0)
			set_err(err, "tmux: attach-session failed (exit status %d)", status);
		rc = rc < 0 || status != 0 ? -1 : 0;
	}
	free(e);
	strv_clear(&argv);
	strv_clear(&envp);
	return rc;
}

/* ---- the window's side ---- */

int
tmux_window_env(char *const envp[], struct strv *out)
{
	const char *names = envp_get(envp, TMUX_WINDOW_ENV);

	if (names == NULL)
		return -1;
	for (char *const *e = envp; *e != NULL; e++) {
		size_t len = strcspn(*e, "=");
		const char *p = names;
		bool keep = len == 4 && strncmp(*e, "TERM", 4) == 0;

		if ((*e)[len] != '=' || (len == strlen(TMUX_WINDOW_ENV) &&
					 strncmp(*e, TMUX_WINDOW_ENV, len) == 0))
			continue;
		while (!keep && *p != '\0') {
			size_t l = strcspn(p, ",");

			if (l == len && strncmp(p, *e, len) == 0)
				keep = true;
			p += l;
			if (*p == ',')
				p++;
		}
		if (keep)
			strv_push(out, *e);
	}
	return 0;
}

/* ---- watching the session (tmux.h) ---- */

/* How long tmux_watch_start waits for the attach to be confirmed. */
#define WATCH_START_MS 5000

static long long
mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool
word_is(const char *line, size_t len, const char *word)
{
	size_t wl = strlen(word);

	return len >= wl && memcmp(line, word, wl) == 0 && (len == wl || line[wl] == ' ');
}

/* One whole line of the client's (without its '\n'): its TMUX_WATCH_* bits;
 * *attached set at the session's confirmation, *why at an error line. */
static int
watch_line(struct tmux_watch *w, const char *line, size_t len, bool *attached, char **why)
{
	static const char *const windows[] = {
		"%window-add", "%window-close", "%window-renamed", "%window-pane-changed",
		"%unlinked-window-add", "%unlinked-window-close", "%unlinked-window-renamed",
		"%layout-change", "%session-window-changed", "%sessions-changed",
		"%session-renamed", "%pane-mode-changed",
	};

	if (w->in_block) {
		/* A command's output (the attach's own, or its error). */
		if (word_is(line, len, "%end") || word_is(line, len, "%error"))
			w->in_block = false;
		else if (why != NULL && *why == NULL && len > 0)
			*why = xstrndup(line, len);
		return 0;
	}
	if (word_is(line, len, "%begin")) {
		w->in_block = true;
		return 0;
	}
	if (word_is(line, len, "%output") || word_is(line, len, "%extended-output"))
		return TMUX_WATCH_OUTPUT;
	if (word_is(line, len, "%exit"))
		return TMUX_WATCH_ENDED;
	if (word_is(line, len, "%session-changed")) {
		if (attached != NULL)
			*attached = true;
		return TMUX_WATCH_WINDOWS;
	}
	for (size_t i = 0; i < ARRAY_SIZE(windows); i++)
		if (word_is(line, len, windows[i]))
			return TMUX_WATCH_WINDOWS;
	return 0;
}

/* Read what is there; the bits of every whole line. */
static int
watch_drain(struct tmux_watch *w, bool *attached, char **why)
{
	char chunk[4096];
	int bits = 0;

	for (;;) {
		ssize_t n = read(w->out, chunk, sizeof chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return bits;
		if (n <= 0)
			return bits | TMUX_WATCH_ENDED;
		for (ssize_t i = 0; i < n; i++) {
			char c = chunk[i];

			if (c != '\n') {
				if (w->skipping)
					continue;
				if (w->len < sizeof w->buf)
					w->buf[w->len++] = c;
				else {
					/* Only a pane's output makes lines this long;
					 * its first word is what counts. */
					bits |= watch_line(w, w->buf, w->len, attached, why);
					w->skipping = true;
				}
				continue;
			}
			if (!w->skipping)
				bits |= watch_line(w, w->buf, w->len, attached, why);
			w->len = 0;
			w->skipping = false;
		}
	}
}

int
tmux_watch_start(const struct tmux *t, struct tmux_watch *w, char **err)
{
	struct strv a = STRV_INIT, env = STRV_INIT;
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, fds[3], devnull = -1, rc = -1;
	char *exe = NULL, *target = NULL, *why = NULL, *e = NULL;
	bool attached = false;
	long long until = 0;

	memset(w, 0, sizeof *w);
	w->in = w->out = -1;
	exe = t->bin != NULL ? xstrdup(t->bin) : find_in_path("tmux", NULL);
	if (exe == NULL) {
		set_err(err, "tmux not found; install it: apt-get install tmux");
		return -1;
	}
	if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0 ||
	    (devnull = open("/dev/null", O_WRONLY | O_CLOEXEC)) < 0) {
		set_err(err, "tmux: cannot make a pipe: %s", strerror(errno));
		goto out;
	}
	argv_start(t, &a, true);
	strv_push(&a, "-C");
	strv_push(&a, "attach-session");
	strv_push(&a, "-f");
	strv_push(&a, "ignore-size");
	strv_push(&a, "-t");
	target = xasprintf("=%s:", t->session);
	strv_push(&a, target);
	/* Not nested in the TUI's own tmux: $TMUX would make tmux refuse. */
	for (char **v = environ; *v != NULL; v++)
		if (strncmp(*v, "TMUX=", 5) != 0 && strncmp(*v, "TMUX_PANE=", 10) != 0)
			strv_push(&env, *v);
	fds[0] = in[0];
	fds[1] = out[1];
	fds[2] = devnull;
	if (spawn_program(exe, strv_v(&a), strv_v(&env), fds, 3, &w->pid, &e) != 0) {
		set_err(err, "tmux: %s", e != NULL ? e : "cannot start a control client");
		w->pid = 0;
		goto out;
	}
	w->in = in[1];
	w->out = out[0];
	in[1] = out[0] = -1;
	(void)fcntl(w->out, F_SETFL, fcntl(w->out, F_GETFL) | O_NONBLOCK);
	/* Attached once tmux says which session the client is on. */
	until = mono_ms() + WATCH_START_MS;
	while (!attached) {
		struct pollfd p = { w->out, POLLIN, 0 };
		long long left = until - mono_ms();
		int bits;

		if (left <= 0 || poll(&p, 1, (int)left) == 0) {
			set_err(err, "tmux: the control client did not attach in time");
			goto out;
		}
		bits = watch_drain(w, &attached, &why);
		if (!attached && (bits & TMUX_WATCH_ENDED)) {
			set_err(err, "tmux: %s", why != NULL ? why : "the control client ended");
			goto out;
		}
	}
	rc = 0;
out:
	if (rc != 0)
		tmux_watch_stop(w);
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (out[i] >= 0)
			close(out[i]);
	}
	if (devnull >= 0)
		close(devnull);
	strv_clear(&a);
	strv_clear(&env);
	free(exe);
	free(target);
	free(why);
	free(e);
	return rc;
}

int
tmux_watch_read(struct tmux_watch *w)
{
	if (w->out < 0)
		return TMUX_WATCH_ENDED;
	return watch_drain(w, NULL, NULL);
}

void
tmux_watch_stop(struct tmux_watch *w)
{
	if (w->in >= 0)
		close(w->in);  /* EOF on its stdin: the client detaches and ends */
	if (w->out >= 0)
		close(w->out);
	if (w->pid > 0) {
		/* Ended by the EOF nearly at once; a wedged one is not waited for. */
		for (int i = 0; i < 100 && waitpid(w->pid, NULL, WNOHANG) == 0; i++) {
			struct timespec ms = { 0, 1000 * 1000 };

			if (i == 50)
				kill(w->pid, SIGTERM);
			nanosleep(&ms, NULL);
		}
		if (waitpid(w->pid, NULL, WNOHANG) == 0) {
			kill(w->pid, SIGKILL);
			(void)waitpid(w->pid, NULL, 0);
		}
	}
	memset(w, 0, sizeof *w);
	w->in = w->out = -1;
}
