/* notify.c: telling the user that a session began to need them. */
#include "notify.h"
#include "app.h"
#include "db.h"
#include "process.h"
#include "strv.h"
#include "text.h"
#include "tmux.h"
#include "util.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/*
 * The bell on each terminal showing the hqt session: BEL written to its
 * client's tty (one path a line, from list-clients), as tmux rings a pane's
 * bell there.  hqt prints nothing in a harness's pane, so tmux has no bell
 * of its own to ring.  Only a character device of ours, never blocking.
 */
static void
ring_clients(const char *ttys)
{
	for (const char *p = ttys; p != NULL && *p != '\0';) {
		const char *nl = strchr(p, '\n');
		size_t len = nl != NULL ? (size_t)(nl - p) : strlen(p);
		char *tty = xstrndup(p, len);
		struct stat st;
		int fd;

		if (tty[0] == '/' &&
		    (fd = open(tty, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)) >= 0) {
			if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && st.st_uid == getuid() &&
			    isatty(fd))
				(void)!write(fd, "\a", 1);
			close(fd);
		}
		free(tty);
		p = nl != NULL ? nl + 1 : p + len;
	}
}

/*
 * Run argv (argv[0] looked up on PATH) with envp, detached: a grandchild
 * in a session of its own, stdin and stdout /dev/null, nothing else open,
 * so neither a slow notifier nor its children hold this command up.
 */
static void
run_detached(char *const argv[], char *const envp[])
{
	char *path = find_in_path(argv[0], envp_get(envp, "PATH"));
	sigset_t all, old;
	pid_t pid;

	if (path == NULL)
		return;
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0) {
		int fd;

		if (setsid() < 0 || fork() != 0)
			_exit(0);
		for (int sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		fd = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (fd >= 0) {
			dup2(fd, 0);
			dup2(fd, 1);
		}
		(void)close_range(3, ~0U, 0);
		execve(path, argv, envp);
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid > 0)
		(void)waitpid(pid, NULL, 0);
	free(path);
}

/* NAME=VALUE with VALUE escaped as a terminal would show it safely: the
 * user's [notify] command may print it, and a host's session wrote it. */
static char *
env_text(const char *name, const char *value)
{
	char *v = text_escape(value, 200), *out = xasprintf("%s=%s", name, v);

	free(v);
	return out;
}

void
notify_needs(struct hqt_app *app, const struct db_session *s, const char *reason)
{
	notify_needs_on(app, NULL, s, reason);
}

void
notify_needs_on(struct hqt_app *app, const char *host, const struct db_session *s,
		const char *reason)
{
	char *num = host != NULL ? xasprintf("%s:%lld", host, s->id) : xasprintf("%lld", s->id);
	char *who = s->nickname != NULL ? xasprintf("session %s '%s'", num, s->nickname)
				       : xasprintf("session %s", num);
	char *title = xasprintf("hqt: %s needs you", who);
	char *body = xasprintf("%s in %s: %s", s->harness, s->project, reason);
	/* What a harness or a user named may hold anything: shown escaped. */
	char *line = xasprintf("%s (%s)", title, body), *shown = text_escape(line, 300);
	char *err = NULL;

	if (app->cfg.notify_tmux && app_tmux(app, &err) == 0) {
		struct strv a = STRV_INIT;
		struct spawn_result r = { 0 };
		char *target = xasprintf("=%s:", app->cfg.tmux_session), *msg = tmux_format_escape(shown);

		/* Every terminal on the hqt session sees it and hears the bell;
		 * none attached is fine.  The message goes to each by name: a
		 * display-message to the session reaches one client only, tmux's
		 * "best" (the TUI's control client, when it is the newest). */
		tmux_argv_init(&app->tmux, &a);
		strv_push(&a, "list-clients");
		strv_push(&a, "-t");
		strv_push(&a, target);
		strv_push(&a, "-F");
		strv_push(&a, "#{?client_control_mode,,#{client_tty}}");
		if (tmux_run(&app->tmux, &a, &r, NULL) == 0 && r.out != NULL) {
			struct strv d = STRV_INIT;
			bool any = false;

			ring_clients(r.out);
			tmux_argv_init(&app->tmux, &d);
			for (const char *p = r.out; *p != '\0';) {
				size_t len = strcspn(p, "\n");

				if (len > 0 && p[0] == '/') {
					if (any)
						tmux_argv_sep(&d);
					any = true;
					strv_push(&d, "display-message");
					strv_push(&d, "-c");
					strv_take(&d, xstrndup(p, len));
					strv_push(&d, "-d");
					strv_push(&d, "5000");
					strv_push(&d, msg);
				}
				p += len + (p[len] == '\n');
			}
			if (any) {
				struct spawn_result dr = { 0 };

				(void)tmux_run(&app->tmux, &d, &dr, NULL);
				spawn_result_free(&dr);
			}
			strv_clear(&d);
		}
		spawn_result_free(&r);
		strv_clear(&a);
		free(msg);
		free(target);
	}
	/* Only where a desktop is (notify-send missing: nothing happens). */
	/* The text is a session's (another machine's, for a host's): escaped,
	 * and after "--", so a nickname or harness name that begins with "-"
	 * is no option of notify-send's. */
	if (app->cfg.notify_desktop && (getenv("DISPLAY") != NULL || getenv("WAYLAND_DISPLAY") != NULL)) {
		char *t = text_escape(title, 200), *b = text_escape(body, 300);
		char *const argv[] = { "notify-send", "-a", "hqt", "--", t, b, NULL };

		run_detached(argv, environ);
		free(t);
		free(b);
	}
	if (app->cfg.notify_command != NULL) {
		struct strv av = STRV_INIT, env = STRV_INIT;

		/* Words, never a shell; what it is about in its environment. */
		strv_split(&av, app->cfg.notify_command, ' ', 1);
		strv_pushf(&env, "HQT_SESSION=%lld", s->id);
		strv_pushf(&env, "HQT_HOST=%s", host != NULL ? host : "");
		strv_take(&env, env_text("HQT_NICKNAME", s->nickname != NULL ? s->nickname : ""));
		strv_take(&env, env_text("HQT_PROJECT", s->project));
		strv_take(&env, env_text("HQT_HARNESS", s->harness));
		strv_pushf(&env, "HQT_REASON=%s", reason);
		for (char **e = environ; *e != NULL; e++)
			if (strncmp(*e, "HQT_", 4) != 0)
				strv_push(&env, *e);
		if (av.n > 0)
			run_detached(strv_v(&av), strv_v(&env));
		strv_clear(&av);
		strv_clear(&env);
	}
	free(err);
	free(shown);
	free(line);
	free(body);
	free(title);
	free(who);
	free(num);
}
