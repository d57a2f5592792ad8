/* e2e-events.c: status and ids from the real harnesses' own events: Claude
 * Code's hooks (given per launch in --settings) and codex's notify (-c
 * notify=[hqt-event]) append to the session's event file; a slow turn
 * reads working then waiting, a real permission prompt reads waiting with
 * attention needs_input, approving it runs the command. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "e2e.h"

static struct e2e e;

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, NULL); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(events, .init = setup, .fini = teardown, .timeout = 240);

/* Wait until the event file's newest line has needle. */
static void
wait_event(long id, const char *needle, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		char *t = e2e_events(&e, id), *last = NULL;

		if (t != NULL) {
			size_t n = strlen(t);
			while (n > 0 && t[n - 1] == '\n')
				t[--n] = '\0';
			last = strrchr(t, '\n');
			last = last != NULL ? last + 1 : t;
		}
		bool hit = last != NULL && strstr(last, needle) != NULL;
		if (hit || now_ms() >= end) {
			cr_assert(hit, "the newest event has no %s; the file:\n%s", needle,
				  t != NULL ? t : "(none)");
			free(t);
			return;
		}
		free(t);
		sleep_ms(50);
	}
}

/* The session's attention comes to want (within 3 s: each `hqt list` reads
 * the screen anew, and claude redraws after its turn). */
static void
expect_attention(long id, const char *want)
{
	char *a = NULL;

	for (long long end = now_ms() + 3000;;) {
		free(a);
		a = e2e_attention(&e, id);
		if (strcmp(a, want) == 0 || now_ms() >= end)
			break;
		sleep_ms(50);
	}
	cr_expect_str_eq(a, want);
	free(a);
}

/* The permission prompt, answered; the command ran in the project. */
static void
approve(long id, const char *prompt_text)
{
	e2e_wait_screen(&e, id, prompt_text, 30000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "needs_input");
	/* Claude drops keys that come at once after its dialog is drawn
	 * (observed): press again while the prompt stays. */
	for (int tries = 0; tries < 20; tries++) {
		char *scr = e2e_screen(&e, id);
		bool still = scr != NULL && strstr(scr, prompt_text) != NULL;

		free(scr);
		if (!still)
			break;
		e2e_keys(&e, id, "Enter");
		sleep_ms(500);
	}
	char *seen = NULL;
	for (long long end = now_ms() + 20000; (seen = e2e_record(&e, "tool-result")) == NULL;) {
		if (now_ms() >= end) {
			char *scr = e2e_screen(&e, id);
			cr_assert_fail("no tool result after approving; screen:\n%s", scr);
		}
		sleep_ms(100);
	}
	cr_assert(strstr(seen, "E2E_APPROVED_42") != NULL, "the tool printed: %s", seen);
	free(seen);
	char *f = fmt("%s/e2e-approved.txt", e.proj);
	cr_expect_eq(access(f, F_OK), 0, "the approved command wrote no %s", f);
	free(f);
}

Test(events, claude_hooks)
{
	/* It asks before a command that writes (claude's "default" mode,
	 * from the project's settings: hqt passes no mode). */
	char *settings = fmt("%s/.claude/settings.json", e.proj);
	write_file(settings, "{\"permissions\":{\"defaultMode\":\"default\"}}\n", 0644);
	free(settings);

	long id = run_new(&e.te, "p", "claude", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	e2e_wait_screen(&e, id, "Claude Code v", 30000);
	/* SessionStart names the session id hqt chose. */
	wait_event(id, "\"hook_event_name\":\"SessionStart\"", 15000);
	wait_event(id, hsid, 1000);
	e2e_wait_status(&e, id, "waiting", 5000);
	expect_attention(id, "idle");

	/* A slow turn: UserPromptSubmit says working, Stop says waiting. */
	e2e_send(&e, id, "e2e-slow s1");
	wait_event(id, "\"hook_event_name\":\"UserPromptSubmit\"", 10000);
	cr_assert(e2e_sees_status(&e, id, "working", 3000), "a slow turn never read working");
	wait_event(id, "\"hook_event_name\":\"Stop\"", 30000);
	e2e_wait_status(&e, id, "waiting", 1000);
	expect_attention(id, "idle");

	/* A real permission prompt: needs you; approved, the command runs. */
	e2e_send(&e, id, "e2e-ask");
	approve(id, "Do you want to proceed?");
	wait_event(id, "\"hook_event_name\":\"Stop\"", 30000);
	e2e_wait_status(&e, id, "waiting", 1000);
	expect_attention(id, "idle");
	{
		char *t = e2e_events(&e, id);
		cr_expect(t != NULL && (strstr(t, "\"PermissionRequest\"") ||
					strstr(t, "\"permission_prompt\"")),
			  "no permission event in:\n%s", t ? t : "(none)");
		cr_expect(strstr(t, "\"PostToolUse\"") != NULL, "no PostToolUse in:\n%s", t);
		free(t);
	}
	free(hsid);
}

Test(events, codex_notify)
{
	/* It asks before a command that is not known safe. */
	char *config = fmt("%s/.codex/config.toml", e.te.home), *text = slurp(config);
	char *more = fmt("approval_policy = \"on-request\"\n%s", text);
	write_file(config, more, 0600);
	free(more);
	free(text);
	free(config);

	long id = run_new(&e.te, "p", "codex", NULL);

	e2e_wait_screen(&e, id, "OpenAI Codex (v", 30000);
	e2e_wait_status(&e, id, "waiting", 10000);

	e2e_send(&e, id, "e2e-slow s1");
	cr_assert(e2e_sees_status(&e, id, "working", 5000), "a slow turn never read working");
	/* The turn's end, from notify, with the session's id: the one hqt
	 * stores (the rollout scan is only the fallback). */
	wait_event(id, "\"type\":\"agent-turn-complete\"", 30000);
	e2e_wait_status(&e, id, "waiting", 1000);
	expect_attention(id, "idle");
	char *hsid = e2e_wait_session_id(&e, id, 5000);
	char *t = e2e_events(&e, id), *want = fmt("\"thread-id\":\"%s\"", hsid);
	cr_expect(t != NULL && strstr(t, want) != NULL, "no %s in:\n%s", want, t ? t : "(none)");
	free(want);
	free(t);

	/* An approval prompt: needs you; approved, the command runs. */
	e2e_send(&e, id, "e2e-ask");
	approve(id, "Would you like to run the following command?");
	e2e_wait_screen(&e, id, "tool said:", 30000);
	e2e_wait_status(&e, id, "waiting", 3000);
	expect_attention(id, "idle");
	free(hsid);
}
