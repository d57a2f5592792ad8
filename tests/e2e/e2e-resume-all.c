/* e2e-resume-all.c: after the tmux server died (a reboot), `hqt resume
 * --all` brings back a real Claude Code and a real Codex CLI (this one from
 * a project's own node_modules) with their conversations, each at its
 * prompt with nothing to answer. */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>

#include "e2e.h"

static struct e2e e;

static void setup(void) { e2e_init(&e, E2E_CODEX_LOCAL, NULL); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(resume_all, .init = setup, .fini = teardown, .timeout = 240);

/* Nothing on the screen that stops a session before its prompt. */
static void
nothing_to_answer(long id)
{
	static const char *const dialogs[] = {
		"Do you trust", "trust this folder", "Do you want to use this API key",
		"Choose the text style", "Bypass Permissions mode", "Press enter to continue",
		"Would you like to run", "Try new model", NULL,
	};
	char *s = e2e_screen(&e, id);

	for (const char *const *d = dialogs; *d; d++)
		cr_assert(strstr(s, *d) == NULL, "session %ld asks \"%s\":\n%s", id, *d, s);
	free(s);
}

Test(resume_all, after_the_tmux_server_died)
{
	long c = run_new(&e.te, "p", "claude", NULL);
	long x = run_new(&e.te, "p", "codex", NULL);
	struct run r;

	e2e_wait_status(&e, c, "waiting", 30000);
	e2e_wait_status(&e, x, "waiting", 30000);
	e2e_send(&e, c, "alpha1");
	e2e_send(&e, x, "bravo1");
	e2e_wait_screen(&e, c, "pong: alpha1", 30000);
	e2e_wait_screen(&e, x, "pong: bravo1", 30000);
	e2e_wait_status(&e, c, "waiting", 5000);
	e2e_wait_status(&e, x, "waiting", 5000);
	char *xid = e2e_field(&e, x, "harness_session_id");
	for (long long end = now_ms() + 10000; xid == NULL; xid = e2e_field(&e, x, "harness_session_id")) {
		cr_assert(now_ms() < end, "codex's session id was never captured");
		free(e2e_status(&e, x));
		sleep_ms(200);
	}

	run_tmux(&r, &e.te, "kill-server", NULL);
	run_free(&r);
	e2e_wait_status(&e, c, "gone", 5000);
	e2e_wait_status(&e, x, "gone", 5000);

	run_ok(&e.te, "resume", "--all", NULL);
	e2e_wait_screen(&e, c, "pong: alpha1", 30000);
	e2e_wait_screen(&e, x, "pong: bravo1", 30000);
	e2e_wait_status(&e, c, "waiting", 10000);
	e2e_wait_status(&e, x, "waiting", 10000);
	nothing_to_answer(c);
	nothing_to_answer(x);
	char *again = e2e_field(&e, x, "harness_session_id");
	cr_assert_str_eq(again, xid);
	free(again);
	free(xid);
}
