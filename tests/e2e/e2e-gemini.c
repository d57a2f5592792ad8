/* e2e-gemini.c: the real Gemini CLI (tests/e2e/versions) under hqt, talking
 * to the stand-in's Gemini API: its folder-trust dialog reads needs-you, a
 * plain turn reads working then waiting from its hooks (the root-owned
 * settings file beside the plugin), a real approval reads needs-you and
 * approving it runs the command, resume by the id hqt chose brings the
 * conversation back, a sandboxed session works and its events come out, and
 * after `hqt kill` no process of it is left (it relaunches itself as a child
 * that ignores SIGHUP and SIGTERM). */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "e2e.h"

static struct e2e e;

/* The stand-in's address and key pass into the sandbox by name. */
static const char INI[] = "[sandbox]\n"
			  "env = GEMINI_API_KEY, GOOGLE_GEMINI_BASE_URL\n";

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, INI); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(gemini, .init = setup, .fini = teardown, .timeout = 240);

static const char IDLE[] = "Type your message or @path/to/file";

/* Whether the plugin's hooks file is one gemini reads (root-owned, as
 * installed, and so is a build tree of root's outside /tmp). */
static bool
hooks_readable(void)
{
	char *f = fmt("%s/gemini-settings.json", getenv("HQT_TEST_PLUGIN_DIR"));
	char *p = realpath(f, NULL);
	bool ok = p != NULL;

	while (ok) {
		struct stat st;
		char *slash;

		ok = stat(p, &st) == 0 && st.st_uid == 0 && !(st.st_mode & 022);
		if (!ok || strcmp(p, "/") == 0)
			break;
		slash = strrchr(p, '/');
		if (slash == p)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	free(p);
	free(f);
	return ok;
}

/* Wait until the session's event file has needle. */
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

/* Gemini takes text typed at once as a paste: e2e_send sends Enter apart. */
/* Its folder-trust dialog (no event comes before it) reads needs-you; it
 * is left unanswered: answered, gemini restarts itself, which takes up to
 * a minute on a loaded machine.  The session is killed at the dialog, and
 * nothing of it is left. */
Test(gemini, trust_dialog_reads_needs_you)
{
	char *dir = fmt("%s/untrusted", e.te.root);

	mkdir(dir, 0755);
	run_ok(&e.te, "project", "add", "u", dir, NULL);
	long id = run_new(&e.te, "u", "gemini", NULL);

	e2e_wait_screen(&e, id, "Do you trust the files in this folder?", 60000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "needs_input");
	e2e_kill_leaves_nothing(&e, id, "gemini");
	free(dir);
}

Test(gemini, turns_approval_resume_and_kill)
{
	if (!hooks_readable())
		cr_skip_test("the build tree is not root-owned all the way up (under /tmp, say): "
			     "gemini skips a hooks file there, so its events cannot be tested");
	/* the project trusted, as "1. Trust folder" leaves it */
	char *trusted = fmt("%s/.gemini/trustedFolders.json", e.te.home);
	char *text = fmt("{\"%s\": \"TRUST_FOLDER\"}\n", e.proj);
	write_file(trusted, text, 0600);
	free(text);
	free(trusted);
	long id = run_new(&e.te, "p", "gemini", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	cr_assert_not_null(hsid, "gemini's session id is chosen by hqt");
	e2e_wait_screen(&e, id, IDLE, 60000);
	/* SessionStart names the id hqt chose. */
	wait_event(id, "\"hook_event_name\":\"SessionStart\"", 15000);
	wait_event(id, hsid, 1000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "idle");

	/* A slow turn: BeforeAgent says working, AfterAgent waiting. */
	e2e_send(&e, id, "e2e-slow s1");
	wait_event(id, "\"hook_event_name\":\"BeforeAgent\"", 15000);
	cr_assert(e2e_sees_status(&e, id, "working", 5000), "a slow turn never read working");
	wait_event(id, "\"hook_event_name\":\"AfterAgent\"", 30000);
	e2e_wait_screen(&e, id, "pong: e2e-slow s1", 5000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "idle");

	/* A real approval: needs you; approved, the command runs. */
	e2e_send(&e, id, "e2e-ask");
	e2e_wait_screen(&e, id, "Allow execution of", 30000);
	wait_event(id, "\"notification_type\":\"ToolPermission\"", 10000);
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
	expect_attention(id, "idle");

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

	/* Nothing of it left, by pid: not the relaunched child either. */
	e2e_kill_leaves_nothing(&e, id, "gemini");
	free(hsid);
}

Test(gemini, sandboxed_works_and_its_events_come_out)
{
	if (!hooks_readable())
		cr_skip_test("the build tree is not root-owned all the way up (under /tmp, say): "
			     "gemini skips a hooks file there, so its events cannot be tested");
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), "E2E-HOST-SECRET\n", 0600);
	long id = run_new(&e.te, "p", "gemini", "--sandbox", "--net", "on", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	/* --yolo --skip-trust: straight to the prompt; SessionStart at once. */
	e2e_wait_screen(&e, id, IDLE, 60000);
	wait_event(id, "\"hook_event_name\":\"SessionStart\"", 15000);
	e2e_wait_status(&e, id, "waiting", 5000);
	e2e_send(&e, id, "e2e-sbxtool");
	char *seen = e2e_wait_record(&e, "tool-result", 60000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	cr_expect(strstr(seen, "E2E-HOST-SECRET") == NULL, "the agent read a host secret: %s", seen);
	free(seen);
	char *wrote = slurp(fmt("%s/e2e-from-agent.txt", e.proj));
	cr_expect(wrote != NULL && strcmp(wrote, "from-the-agent\n") == 0,
		  "the agent's write did not land in the project: %s", wrote ? wrote : "(none)");
	free(wrote);
	wait_event(id, "\"hook_event_name\":\"AfterAgent\"", 30000);
	wait_event(id, hsid, 1000);
	e2e_wait_status(&e, id, "waiting", 5000);
	/* The host's ~/.gemini got no transcript: it is the session's own. */
	char *host_chats = fmt("%s/.gemini/tmp", e.te.home);
	cr_expect(access(host_chats, F_OK) != 0, "the sandboxed session wrote %s", host_chats);
	free(host_chats);
	e2e_kill_leaves_nothing(&e, id, "gemini");
	free(hsid);
}
