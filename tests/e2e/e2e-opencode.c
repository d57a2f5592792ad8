/* e2e-opencode.c: the real opencode (tests/e2e/versions) under hqt, talking
 * to the stand-in's Chat Completions: a plain turn reads working then
 * waiting from its bus events (hqt's JS bridge, named per launch in
 * OPENCODE_CONFIG_CONTENT), its id (ses_...) is captured from its own
 * session.created, a real approval reads needs-you and approving it runs
 * the command, resume by that id brings the conversation back, a sandboxed
 * session works and its events come out, and after `hqt kill` no process
 * of it is left. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e.h"

static struct e2e e;

static const char INI[] = "[sandbox]\n"
			  "env = OPENCODE_DISABLE_MODELS_FETCH, OPENCODE_DISABLE_AUTOUPDATE, "
			  "OPENCODE_DISABLE_SHARE, OPENCODE_DISABLE_DEFAULT_PLUGINS, "
			  "OPENCODE_DISABLE_LSP_DOWNLOAD\n";

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, INI); }
static void teardown(void) { e2e_fini(&e); }

/* opencode starts slowly on a loaded machine (10-20 s to its prompt, as
 * much again at its first turn): a test of its own may take minutes. */
TestSuite(opencode, .init = setup, .fini = teardown, .timeout = 480);

static const char IDLE[] = "ctrl+p commands";

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

Test(opencode, turns_approval_resume_and_kill)
{
	long id = run_new(&e.te, "p", "opencode", NULL);

	e2e_wait_screen(&e, id, IDLE, 90000);
	e2e_wait_status(&e, id, "waiting", 10000);

	e2e_send(&e, id, "e2e-slow s1");
	wait_event(id, "\"type\":\"session.created\"", 15000);
	wait_event(id, "\"status\":\"busy\"", 10000);
	cr_assert(e2e_sees_status(&e, id, "working", 3000), "a slow turn never read working");
	/* its own id, from its own event */
	char *hsid = e2e_wait_session_id(&e, id, 10000);
	cr_expect(strncmp(hsid, "ses_", 4) == 0, "captured %s", hsid);
	wait_event(id, "\"type\":\"session.idle\"", 90000);
	e2e_wait_screen(&e, id, "pong: e2e-slow s1", 5000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "idle");

	e2e_send(&e, id, "e2e-ask");
	e2e_wait_screen(&e, id, "Permission required", 90000);
	wait_event(id, "\"type\":\"permission.asked\"", 10000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "needs_input");
	for (int tries = 0; tries < 20; tries++) {
		char *scr = e2e_screen(&e, id);
		bool still = scr != NULL && strstr(scr, "Permission required") != NULL;

		free(scr);
		if (!still)
			break;
		e2e_keys(&e, id, "Enter");
		sleep_ms(500);
	}
	char *seen = e2e_wait_record(&e, "tool-result", 60000);
	cr_assert(strstr(seen, "E2E_APPROVED_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	char *f = fmt("%s/e2e-approved.txt", e.proj);
	cr_expect_eq(access(f, F_OK), 0, "the approved command wrote no %s", f);
	free(f);
	e2e_wait_screen(&e, id, "tool said: E2E_APPROVED_42", 30000);
	e2e_wait_status(&e, id, "waiting", 5000);

	/* Out (its /exit), then back by the captured id. */
	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, "tool said: E2E_APPROVED_42", 90000);
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_assert_str_eq(again, hsid);
	e2e_send(&e, id, "ping2");
	e2e_wait_screen(&e, id, "pong: ping2", 90000);
	char *history = e2e_record(&e, "history");
	cr_assert(history != NULL && strstr(history, "e2e-slow s1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	free(history);
	free(again);

	e2e_kill_leaves_nothing(&e, id, "opencode");
	free(hsid);
}

Test(opencode, sandboxed_works_and_its_events_come_out)
{
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), "E2E-HOST-SECRET\n", 0600);
	long id = run_new(&e.te, "p", "opencode", "--sandbox", "--net", "on", NULL);

	e2e_wait_screen(&e, id, IDLE, 90000);
	e2e_send(&e, id, "e2e-sbxtool");
	char *seen = e2e_wait_record(&e, "tool-result", 180000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	cr_expect(strstr(seen, "E2E-HOST-SECRET") == NULL, "the agent read a host secret: %s", seen);
	free(seen);
	char *wrote = slurp(fmt("%s/e2e-from-agent.txt", e.proj));
	cr_expect(wrote != NULL && strcmp(wrote, "from-the-agent\n") == 0,
		  "the agent's write did not land in the project: %s", wrote ? wrote : "(none)");
	free(wrote);
	wait_event(id, "\"type\":\"session.idle\"", 90000);
	char *hsid = e2e_wait_session_id(&e, id, 10000);
	cr_expect(strncmp(hsid, "ses_", 4) == 0, "captured %s", hsid);
	e2e_wait_status(&e, id, "waiting", 5000);
	/* the host's opencode data untouched: the session's own */
	char *host_db = fmt("%s/.local/share/opencode", e.te.home);
	cr_expect(access(host_db, F_OK) != 0, "the sandboxed session wrote %s", host_db);
	free(host_db);
	e2e_kill_leaves_nothing(&e, id, "opencode");
	free(hsid);
}
