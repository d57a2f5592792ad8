/* e2e-codex.c: the real Codex CLI (tests/e2e/versions), installed with
 * `npm install -g --prefix`, under hqt without a sandbox, talking to the
 * stand-in model server: idle reads waiting, a slow turn working then
 * waiting (and waiting again at once when it ends), its exec_command tool
 * runs, the session id is captured from its rollout, /exit reads exited,
 * resume brings the same conversation back, and no daemon is left. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "e2e.h"

static struct e2e e;

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, NULL); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(codex, .init = setup, .fini = teardown, .timeout = 240);

/* Waiting soon after the turn's end is on screen: codex draws "Worked for"
 * under a finished turn; the screen markers decide, not the activity
 * fallback (which took seconds). */
static void
turn_ends(long id, const char *reply)
{
	long long end = now_ms() + 30000;

	for (;;) {
		char *s = e2e_screen(&e, id), *r = s ? strstr(s, reply) : NULL;
		bool done = r != NULL && strstr(r, "Worked for") != NULL;

		free(s);
		if (done)
			break;
		cr_assert(now_ms() < end, "no \"Worked for\" under \"%s\"", reply);
		sleep_ms(50);
	}
	e2e_wait_status(&e, id, "waiting", 1000);
}

Test(codex, turns_exit_and_resume)
{
	long id = run_new(&e.te, "p", "codex", NULL);

	e2e_wait_screen(&e, id, "OpenAI Codex (v", 30000);
	e2e_wait_status(&e, id, "waiting", 10000);

	e2e_send(&e, id, "ping1");
	turn_ends(id, "pong: ping1");
	char *hsid = e2e_wait_session_id(&e, id, 10000);

	e2e_send(&e, id, "e2e-slow s1");
	cr_assert(e2e_sees_status(&e, id, "working", 5000), "a slow turn never read working");
	turn_ends(id, "pong: e2e-slow s1");

	e2e_send(&e, id, "e2e-tool");
	char *seen = e2e_wait_record(&e, "tool-result", 30000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	turn_ends(id, "E2E_TOOL_OUTPUT_42");

	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);

	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, "E2E_TOOL_OUTPUT_42", 30000);
	e2e_wait_status(&e, id, "waiting", 10000);
	e2e_send(&e, id, "ping2");
	turn_ends(id, "pong: ping2");
	char *history = e2e_record(&e, "history");
	cr_assert(history != NULL && strstr(history, "ping1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_assert_str_eq(again, hsid);
	free(again);
	free(history);
	free(hsid);

	/* No daemon, nothing else of the session's, once it is killed. */
	run_ok(&e.te, "kill", n, NULL);
	long long end = now_ms() + 5000;
	while (e2e_leftovers(&e) > 0 && now_ms() < end)
		sleep_ms(100);
	cr_assert_eq(e2e_leftovers(&e), 0, "processes left after hqt kill (log above)");
}
