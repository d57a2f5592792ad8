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

/* The real claude, sandboxed in a worktree of its own, commits when the
 * model asks it to: its Bash tool's `git commit` goes to the session's
 * private git store (docs/sandbox.md, "Commits"), and once the harness
 * ends, the launcher imports the commit into the session's branch. */
Test(sandboxed, claude_commits_and_the_commit_reaches_its_branch)
{
	struct run r;
	const char *init[] = { "sh", "-c",
			       "cd \"$1\" && git config user.name 'E2E User' && "
			       "git config user.email e2e@example.com && echo one > a.txt && "
			       "git add a.txt && git commit -qm one",
			       "sh", e.proj, NULL };
	run_argv(&r, &e.te, init, NULL);
	cr_assert_eq(r.code, 0, "git: %s", r.err);
	run_free(&r);
	long id = run_new(&e.te, "p", "claude", "--sandbox", "--net", "on", NULL);
	char *branch = e2e_field(&e, id, "branch");
	char *wt = e2e_field(&e, id, "worktree");
	cr_assert(branch != NULL && wt != NULL, "a sandboxed writable session gets a worktree");

	/* The worktree is a folder claude has not seen: it asks, as it would
	 * a user. */
	e2e_wait_screen(&e, id, "Yes, I trust this folder", 30000);
	for (int i = 0; i < 20; i++) {
		char *scr = e2e_screen(&e, id);
		bool on = strstr(scr, "\u276f Yes, I trust") != NULL;
		free(scr);
		if (on)
			break;
		e2e_keys(&e, id, "Down");
		sleep_ms(250);
	}
	e2e_wait_screen(&e, id, "\u276f Yes, I trust", 5000);
	e2e_keys(&e, id, "Enter");
	e2e_wait_screen(&e, id, "Claude Code v", 30000);
	e2e_wait_status(&e, id, "waiting", 15000);
	e2e_send(&e, id, "e2e-commit");
	char *seen = e2e_wait_record(&e, "tool-result", 60000);
	cr_assert(strstr(seen, "E2E_COMMITTED_42") != NULL, "the commit inside: %s", seen);
	free(seen);
	e2e_wait_status(&e, id, "waiting", 30000);

	/* Not on the branch until imported; /exit ends the harness, and the
	 * launcher imports then. */
	const char *log[] = { "git", "-C", e.proj, "log", "-1", "--format=%s|%an", branch, NULL };
	run_argv(&r, &e.te, log, NULL);
	cr_expect(strstr(r.out, "one|") == r.out, "the branch moved before the import: %s", r.out);
	run_free(&r);
	e2e_send(&e, id, "/exit");
	e2e_wait_status(&e, id, "exited", 15000);
	char *got = NULL;
	for (long long end = now_ms() + 10000; now_ms() < end; sleep_ms(100)) {
		run_argv(&r, &e.te, log, NULL);
		free(got);
		got = r.out;
		r.out = NULL;
		run_free(&r);
		if (got != NULL && strncmp(got, "e2e: the agent commits", 22) == 0)
			break;
	}
	cr_expect(got != NULL && strcmp(got, "e2e: the agent commits|E2E User\n") == 0,
		  "the session's branch after the harness ended: %s", got ? got : "(none)");
	const char *status[] = { "git", "-C", wt, "status", "--porcelain", NULL };
	run_argv(&r, &e.te, status, NULL);
	cr_expect_str_eq(r.out, "", "the worktree after the import");
	run_free(&r);
	char n[32];
	snprintf(n, sizeof n, "%ld", id);
	run_ok(&e.te, "rm", "--force", n, NULL);
	free(got);
	free(wt);
	free(branch);
}
