/* e2e-qwen.c: the real Qwen Code (tests/e2e/versions) under hqt, talking to
 * the stand-in's Chat Completions: a plain turn reads working then waiting
 * from its hooks (Claude Code's schema, from the settings file beside the
 * plugin), a real approval reads needs-you and approving it runs the
 * command, resume by the id hqt chose brings the conversation back, a
 * sandboxed session works and its events come out, and after `hqt kill`
 * no process of it is left. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e.h"

static struct e2e e;

/* The stand-in's address and key pass into the sandbox by name. */
static const char INI[] = "[sandbox]\n"
			  "env = OPENAI_BASE_URL, OPENAI_API_KEY, QWEN_USAGE_STATISTICS_ENABLED\n";

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, INI); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(qwen, .init = setup, .fini = teardown, .timeout = 240);

static const char IDLE[] = "Type your message or @path/to/file";

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

Test(qwen, turns_approval_resume_and_kill)
{
	long id = run_new(&e.te, "p", "qwen", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	cr_assert_not_null(hsid, "qwen's session id is chosen by hqt");
	e2e_wait_screen(&e, id, IDLE, 60000);
	/* SessionStart, at launch, names the id hqt chose. */
	wait_event(id, "\"hook_event_name\":\"SessionStart\"", 15000);
	wait_event(id, hsid, 1000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "idle");

	/* A slow turn: UserPromptSubmit says working, Stop waiting. */
	e2e_send(&e, id, "e2e-slow s1");
	wait_event(id, "\"hook_event_name\":\"UserPromptSubmit\"", 10000);
	cr_assert(e2e_sees_status(&e, id, "working", 5000), "a slow turn never read working");
	wait_event(id, "\"hook_event_name\":\"Stop\"", 30000);
	e2e_wait_screen(&e, id, "pong: e2e-slow s1", 5000);
	e2e_wait_status(&e, id, "waiting", 3000);

	/* A real approval: needs you; approved, the command runs. */
	e2e_send(&e, id, "e2e-ask");
	e2e_wait_screen(&e, id, "Allow execution of", 30000);
	wait_event(id, "\"hook_event_name\":\"PermissionRequest\"", 10000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "needs_input");
	for (int tries = 0; tries < 20; tries++) {
		char *scr = e2e_screen(&e, id);
		bool still = scr != NULL && strstr(scr, "Allow execution of") != NULL;

		free(scr);
		if (!still)
			break;
		e2e_keys(&e, id, "Enter");
		sleep_ms(500);
	}
	char *seen = e2e_wait_record(&e, "tool-result", 20000);
	cr_assert(strstr(seen, "E2E_APPROVED_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	char *f = fmt("%s/e2e-approved.txt", e.proj);
	cr_expect_eq(access(f, F_OK), 0, "the approved command wrote no %s", f);
	free(f);
	e2e_wait_screen(&e, id, "tool said: E2E_APPROVED_42", 30000);
	e2e_wait_status(&e, id, "waiting", 5000);

	e2e_send(&e, id, "/quit");
	e2e_wait_status(&e, id, "exited", 15000);

	/* The same conversation, by the same id. */
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, IDLE, 60000);
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_assert_str_eq(again, hsid);
	e2e_send(&e, id, "ping2");
	e2e_wait_screen(&e, id, "pong: ping2", 30000);
	char *history = e2e_record(&e, "history");
	cr_assert(history != NULL && strstr(history, "e2e-slow s1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	free(history);
	free(again);

	e2e_kill_leaves_nothing(&e, id, "qwen");
	free(hsid);
}

Test(qwen, sandboxed_works_and_its_events_come_out)
{
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), "E2E-HOST-SECRET\n", 0600);
	long id = run_new(&e.te, "p", "qwen", "--sandbox", "--net", "on", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	e2e_wait_screen(&e, id, IDLE, 60000);
	wait_event(id, "\"hook_event_name\":\"SessionStart\"", 15000);
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
	/* The host's ~/.qwen got no transcript: it is the session's own. */
	char *host_projects = fmt("%s/.qwen/projects", e.te.home);
	cr_expect(access(host_projects, F_OK) != 0, "the sandboxed session wrote %s", host_projects);
	free(host_projects);
	e2e_kill_leaves_nothing(&e, id, "qwen");
	free(hsid);
}
