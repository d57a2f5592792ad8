/* notify.c: telling the user that a session began to need them. */
#include "notify.h"
#include "cmd.h"
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
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

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

void
notify_needs(struct cmd_ctx *ctx, const struct db_session *s, const char *reason)
{
	char *who = s->nickname != NULL ? xasprintf("session %lld '%s'", s->id, s->nickname)
				       : xasprintf("session %lld", s->id);
	char *title = xasprintf("hqt: %s needs you", who);
	char *body = xasprintf("%s in %s: %s", s->harness, s->project, reason);
	/* What a harness or a user named may hold anything: shown escaped. */
	char *line = xasprintf("%s (%s)", title, body), *shown = text_escape(line, 300);

	if (ctx->cfg.notify_tmux && cmd_tmux(ctx) == 0) {
		struct strv a = STRV_INIT;
		struct spawn_result r = { 0 };
		char *target = xasprintf("=%s:", ctx->cfg.tmux_session), *msg = tmux_format_escape(shown);

		/* Every client on the hqt session sees it; none attached is fine. */
		tmux_argv_init(&ctx->tmux, &a);
		strv_push(&a, "display-message");
		strv_push(&a, "-d");
		strv_push(&a, "5000");
		strv_push(&a, "-t");
		strv_push(&a, target);
		strv_push(&a, msg);
		(void)tmux_run(&ctx->tmux, &a, &r, NULL);
		spawn_result_free(&r);
		strv_clear(&a);
		free(msg);
		free(target);
	}
	/* Only where a desktop is (notify-send missing: nothing happens). */
	if (ctx->cfg.notify_desktop && (getenv("DISPLAY") != NULL || getenv("WAYLAND_DISPLAY") != NULL)) {
		char *const argv[] = { "notify-send", "-a", "hqt", title, body, NULL };
		run_detached(argv, environ);
	}
	if (ctx->cfg.notify_command != NULL) {
		struct strv av = STRV_INIT, env = STRV_INIT;

		/* Words, never a shell; what it is about in its environment. */
		strv_split(&av, ctx->cfg.notify_command, ' ', 1);
		strv_pushf(&env, "HQT_SESSION=%lld", s->id);
		strv_pushf(&env, "HQT_NICKNAME=%s", s->nickname != NULL ? s->nickname : "");
		strv_pushf(&env, "HQT_PROJECT=%s", s->project);
		strv_pushf(&env, "HQT_HARNESS=%s", s->harness);
		strv_pushf(&env, "HQT_REASON=%s", reason);
		for (char **e = environ; *e != NULL; e++)
			if (strncmp(*e, "HQT_", 4) != 0)
				strv_push(&env, *e);
		if (av.n > 0)
			run_detached(strv_v(&av), strv_v(&env));
		strv_clear(&av);
		strv_clear(&env);
	}
	free(shown);
	free(line);
	free(body);
	free(title);
	free(who);
}
