/* e2e-copilot.c: the real GitHub Copilot CLI (tests/e2e/versions) under hqt,
 * with a BYOK provider (the stand-in's Anthropic side) and COPILOT_OFFLINE:
 * its folder-trust box reads needs-you, a turn reads working then waiting
 * from its hooks (--plugin-dir beside the plugin), a real approval reads
 * needs-you and approving it runs the command, resume by the id hqt chose
 * brings the conversation back, a sandboxed session (COPILOT_ALLOW_ALL
 * there only) works and its events come out, and after `hqt kill` no
 * process of it is left. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e.h"

static struct e2e e;

static const char INI[] = "[sandbox]\n"
			  "env = COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_TYPE, "
			  "COPILOT_PROVIDER_API_KEY, COPILOT_MODEL, COPILOT_PROVIDER_WIRE_MODEL, "
			  "COPILOT_OFFLINE\n";

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, INI); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(copilot, .init = setup, .fini = teardown, .timeout = 240);

static const char IDLE[] = "· / commands";

static void
wait_event(long id, const char *needle, int timeout_ms)
{
	char *t = NULL;

	for (long long end = now_ms() + timeout_ms; now_ms() < end; sleep_ms(100)) {
		free(t);
		t = e2e_events(&e, id);
		if (t != NULL && strstr(t, needle) != NULL) {
			free(t);
			return;
		}
	}
	e2e_dump(&e);
	cr_assert_fail("no event with %s; the file:\n%s", needle, t ? t : "(none)");
}

static void
expect_attention(long id, const char *want)
{
	char *a = NULL;

	for (long long end = now_ms() + 5000;;) {
		free(a);
		a = e2e_attention(&e, id);
		if (strcmp(a, want) == 0 || now_ms() >= end)
			break;
		sleep_ms(100);
	}
	cr_expect_str_eq(a, want);
	free(a);
}

/* Enter while the question stays on screen. */
static void
answer(long id, const char *question)
{
	for (int tries = 0; tries < 20; tries++) {
		char *scr = e2e_screen(&e, id);
		bool still = scr != NULL && strstr(scr, question) != NULL;

		free(scr);
		if (!still)
			return;
		e2e_keys(&e, id, "Enter");
		sleep_ms(500);
	}
	cr_assert_fail("\"%s\" stayed on screen", question);
}

Test(copilot, trust_turns_approval_resume_and_kill)
{
	long id = run_new(&e.te, "p", "copilot", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	cr_assert_not_null(hsid, "copilot's session id is chosen by hqt");
	/* No event comes before its folder-trust box: the screen says it. */
	e2e_wait_screen(&e, id, "Do you trust the files in this folder?", 60000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "needs_input");
	answer(id, "Do you trust the files in this folder?");
	e2e_wait_screen(&e, id, IDLE, 20000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "idle");

	e2e_send(&e, id, "e2e-slow s1");
	wait_event(id, "\"hook_event_name\":\"UserPromptSubmit\"", 10000);
	wait_event(id, hsid, 1000);
	cr_assert(e2e_sees_status(&e, id, "working", 3000), "a slow turn never read working");
	wait_event(id, "\"hook_event_name\":\"Stop\"", 30000);
	e2e_wait_screen(&e, id, "pong: e2e-slow s1", 5000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "idle");

	e2e_send(&e, id, "e2e-ask");
	e2e_wait_screen(&e, id, "Do you want to run this command?", 30000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "needs_input");
	answer(id, "Do you want to run this command?");
	char *seen = e2e_wait_record(&e, "tool-result", 20000);
	cr_assert(strstr(seen, "E2E_APPROVED_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	char *f = fmt("%s/e2e-approved.txt", e.proj);
	cr_expect_eq(access(f, F_OK), 0, "the approved command wrote no %s", f);
	free(f);
	e2e_wait_screen(&e, id, "tool said: E2E_APPROVED_42", 30000);
	wait_event(id, "\"notification_type\":\"permission_prompt\"", 1000);
	e2e_wait_status(&e, id, "waiting", 5000);

	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);

	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	/* "1. Yes" trusted the folder for that session only: asked again. */
	e2e_wait_screen(&e, id, "Do you trust the files in this folder?", 60000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "needs_input");
	answer(id, "Do you trust the files in this folder?");
	e2e_wait_screen(&e, id, IDLE, 20000);
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_assert_str_eq(again, hsid);
	e2e_send(&e, id, "ping2");
	e2e_wait_screen(&e, id, "pong: ping2", 30000);
	char *history = e2e_record(&e, "history");
	cr_assert(history != NULL && strstr(history, "e2e-slow s1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	free(history);
	free(again);

	e2e_kill_leaves_nothing(&e, id, "copilot");
	free(hsid);
}

Test(copilot, sandboxed_works_and_its_events_come_out)
{
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), "E2E-HOST-SECRET\n", 0600);
	long id = run_new(&e.te, "p", "copilot", "--sandbox", "--net", "on", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	/* COPILOT_ALLOW_ALL: no trust box; its first run unpacks into the
	 * session's own cache. */
	e2e_wait_screen(&e, id, IDLE, 90000);
	e2e_send(&e, id, "e2e-sbxtool");
	char *seen = e2e_wait_record(&e, "tool-result", 60000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	cr_expect(strstr(seen, "E2E-HOST-SECRET") == NULL, "the agent read a host secret: %s", seen);
	free(seen);
	char *wrote = slurp(fmt("%s/e2e-from-agent.txt", e.proj));
	cr_expect(wrote != NULL && strcmp(wrote, "from-the-agent\n") == 0,
		  "the agent's write did not land in the project: %s", wrote ? wrote : "(none)");
	free(wrote);
	wait_event(id, "\"hook_event_name\":\"Stop\"", 30000);
	wait_event(id, hsid, 1000);
	e2e_wait_status(&e, id, "waiting", 5000);
	char *host_state = fmt("%s/.copilot/session-state", e.te.home);
	cr_expect(access(host_state, F_OK) != 0, "the sandboxed session wrote %s", host_state);
	free(host_state);
	char *host_cache = fmt("%s/.cache/copilot", e.te.home);
	cr_expect(access(host_cache, F_OK) != 0, "the sandboxed session wrote %s", host_cache);
	free(host_cache);
	e2e_kill_leaves_nothing(&e, id, "copilot");
	free(hsid);
}
