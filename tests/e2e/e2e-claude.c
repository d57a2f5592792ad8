/* e2e-claude.c: the real Claude Code (tests/e2e/versions), laid out as its
 * native installer does, under hqt without a sandbox, talking to the
 * stand-in model server: idle reads waiting, a slow turn working then
 * waiting, its Bash tool runs, /exit reads exited, resume brings the same
 * conversation back. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"

static struct e2e e;

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, NULL); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(claude, .init = setup, .fini = teardown, .timeout = 240);

/* Waiting soon after the turn's end is on screen (the screen markers, not
 * the activity fallback, which takes seconds). */
static void
turn_ends(long id, const char *reply)
{
	e2e_wait_screen(&e, id, reply, 30000);
	e2e_wait_status(&e, id, "waiting", 1500);
}

Test(claude, turns_exit_and_resume)
{
	long id = run_new(&e.te, "p", "claude", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	cr_assert_not_null(hsid, "claude's session id is chosen by hqt");
	/* Started: the empty input box, no dialog to answer. */
	e2e_wait_screen(&e, id, "Claude Code v", 30000);
	e2e_wait_status(&e, id, "waiting", 10000);

	e2e_send(&e, id, "ping1");
	turn_ends(id, "pong: ping1");

	/* A slow reply: the spinner shows, then the turn ends. */
	e2e_send(&e, id, "e2e-slow s1");
	cr_assert(e2e_sees_status(&e, id, "working", 5000), "a slow turn never read working");
	turn_ends(id, "pong: e2e-slow s1");

	/* The Bash tool runs in the project; the model sees its output. */
	e2e_send(&e, id, "e2e-tool");
	char *seen = e2e_wait_record(&e, "tool-result", 30000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	turn_ends(id, "tool said: E2E_TOOL_OUTPUT_42");

	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);

	/* The same conversation, by the same id: its last reply on the
	 * screen, and the next turn carries the earlier ones to the model. */
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, "tool said: E2E_TOOL_OUTPUT_42", 30000);
	e2e_wait_status(&e, id, "waiting", 10000);
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_assert_str_eq(again, hsid);
	e2e_send(&e, id, "ping2");
	turn_ends(id, "pong: ping2");
	char *history = e2e_record(&e, "history");
	cr_assert(history != NULL && strstr(history, "ping1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	free(history);
	free(again);
	free(hsid);
}
