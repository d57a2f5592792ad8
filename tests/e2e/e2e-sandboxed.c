/* e2e-sandboxed.c: the real Claude Code and Codex CLIs (tests/e2e/versions)
 * in hqt's sandbox (SPEC §8), talking to the stand-in model server on the
 * host's loopback: each starts at its prompt with nothing to answer (no
 * Bypass Permissions warning: hqt carries the consent), its own tool call
 * writes the project and reads no host secret, /exit reads exited, resume
 * brings the same conversation back from the session's private state, and
 * the host's harness state is never written. */
#include <criterion/criterion.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "e2e.h"

static struct e2e e;

/* The stand-in's address and keys pass into the sandbox by name. */
static const char INI[] =
	"[sandbox]\n"
	"env = ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, OPENAI_API_KEY, DISABLE_AUTOUPDATER, "
	"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC\n";

static void setup(void) { e2e_init(&e, E2E_CODEX_GLOBAL, INI); }
static void teardown(void) { e2e_fini(&e); }

TestSuite(sandboxed, .init = setup, .fini = teardown, .timeout = 240);

static const char SECRET[] = "E2E-HOST-SECRET";

/* A listing of every file under dir with its size and mtime: what the host
 * harness state looked like. */
static char *
listing(const char *dir)
{
	struct run r;
	const char *argv[] = { "sh", "-c",
			       "cd \"$1\" 2>/dev/null && find . -printf '%p %s %T@\\n' | sort", "sh",
			       dir, NULL };
	char *out;

	run_argv(&r, &e.te, argv, NULL);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	return out;
}

/* The turn's tool ran inside: it wrote the project, and the host secret
 * was not there to read. */
static void
tool_turn(long id, const char *reply_marker)
{
	e2e_send(&e, id, "e2e-sbxtool");
	char *seen = e2e_wait_record(&e, "tool-result", 60000);
	cr_assert(strstr(seen, "E2E_TOOL_OUTPUT_42") != NULL, "the tool printed: %s", seen);
	cr_expect(strstr(seen, SECRET) == NULL, "the agent read a host secret: %s", seen);
	free(seen);
	char *wrote = slurp(fmt("%s/e2e-from-agent.txt", e.proj));
	cr_expect(wrote != NULL && strcmp(wrote, "from-the-agent\n") == 0,
		  "the agent's write did not land in the project: %s", wrote ? wrote : "(none)");
	free(wrote);
	e2e_wait_screen(&e, id, reply_marker, 30000);
}

/* The harness's events came out of the sandbox: its hook or notify ran
 * hqt-event inside, which wrote the one file bound writable for it. */
static void
events_have(long id, const char *a, const char *b)
{
	char *t = NULL;

	for (long long end = now_ms() + 10000; now_ms() < end; sleep_ms(100)) {
		free(t);
		t = e2e_events(&e, id);
		if (t != NULL && strstr(t, a) != NULL && strstr(t, b) != NULL)
			break;
	}
	cr_expect(t != NULL && strstr(t, a) != NULL && strstr(t, b) != NULL,
		  "no event with %s and %s from the sandbox:\n%s", a, b, t ? t : "(no file)");
	free(t);
}

Test(sandboxed, claude_starts_works_and_resumes_in_its_sandbox)
{
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), fmt("%s\n", SECRET), 0600);
	char *before = listing(fmt("%s/.claude", e.te.home));
	long id = run_new(&e.te, "p", "claude", "--sandbox", "--net", "on", NULL);
	char *hsid = e2e_field(&e, id, "harness_session_id");

	e2e_wait_screen(&e, id, "Claude Code v", 30000);
	e2e_wait_status(&e, id, "waiting", 15000);
	char *scr = e2e_screen(&e, id);
	cr_expect(strstr(scr, "Bypass Permissions mode") == NULL || strstr(scr, "Yes, I accept") == NULL,
		  "claude stopped at its bypass warning:\n%s", scr);
	free(scr);

	e2e_send(&e, id, "ping1");
	e2e_wait_screen(&e, id, "pong: ping1", 30000);
	e2e_wait_status(&e, id, "waiting", 5000);
	events_have(id, "\"hook_event_name\":\"Stop\"", hsid);
	tool_turn(id, "tool said:");

	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, "tool said:", 30000);
	e2e_wait_status(&e, id, "waiting", 15000);
	e2e_send(&e, id, "ping2");
	e2e_wait_screen(&e, id, "pong: ping2", 30000);
	char *history = e2e_record(&e, "history");
	cr_expect(history != NULL && strstr(history, "ping1\n") && strstr(history, "ping2\n"),
		  "the resumed turn carried: %s", history ? history : "nothing");
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_expect_str_eq(again, hsid);

	/* The conversation is in the session's private state; the host's
	 * ~/.claude is as it was. */
	char *after = listing(fmt("%s/.claude", e.te.home));
	cr_expect_str_eq(after, before, "the host's ~/.claude changed");
	run_ok(&e.te, "kill", n, NULL);
	free(after);
	free(again);
	free(history);
	free(hsid);
	free(before);
}

Test(sandboxed, codex_starts_works_and_resumes_in_its_sandbox)
{
	write_file(fmt("%s/.ssh/id_ed25519", e.te.home), fmt("%s\n", SECRET), 0600);
	char *before = listing(fmt("%s/.codex", e.te.home));
	long id = run_new(&e.te, "p", "codex", "--sandbox", "--net", "on", NULL);

	e2e_wait_screen(&e, id, "OpenAI Codex (v", 30000);
	e2e_wait_status(&e, id, "waiting", 15000);
	e2e_send(&e, id, "ping1");
	e2e_wait_screen(&e, id, "pong: ping1", 30000);
	e2e_wait_status(&e, id, "waiting", 5000);
	/* its id, from the rollout in its own state */
	char *hsid = e2e_wait_session_id(&e, id, 15000);
	events_have(id, "\"type\":\"agent-turn-complete\"", hsid);
	tool_turn(id, "E2E_TOOL_OUTPUT_42");

	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "resume", n, NULL);
	e2e_wait_screen(&e, id, "E2E_TOOL_OUTPUT_42", 30000);
	e2e_wait_status(&e, id, "waiting", 15000);
	char *again = e2e_field(&e, id, "harness_session_id");
	cr_expect_str_eq(again, hsid);

	char *after = listing(fmt("%s/.codex", e.te.home));
	cr_expect_str_eq(after, before, "the host's ~/.codex changed");
	run_ok(&e.te, "kill", n, NULL);
	long long end = now_ms() + 5000;
	while (e2e_leftovers(&e) > 0 && now_ms() < end)
		sleep_ms(100);
	cr_expect_eq(e2e_leftovers(&e), 0, "processes left after hqt kill");
	free(after);
	free(again);
	free(hsid);
	free(before);
}
