/* test-events.c: the harnesses' own events: the plugins' reading of one
 * event line (claude's hooks, codex's notify), the host's strict checks of
 * hostile lines, the event file's tail, the rule that merges events with
 * the screen, and hqt-event, the helper the harness runs. */
#include <criterion/criterion.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "events.h"
#include "plugin-host.h"
#include "support.h"
#include "util.h"

#define ID  "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6e"
#define ID2 "019aa1b2-0c3d-7e4f-8a9b-0c1d2e3f4a5b"

static char *root;
static struct config cfg;
static struct registry reg;

static void
setup(void)
{
	struct strv warnings = STRV_INIT;
	char *err = NULL;

	root = tmpdir_new();
	cr_assert_eq(config_parse_string(&cfg, "[plugins]\nload = *\n", "test.ini", &warnings,
					 &err), 0, "config: %s", err);
	free(cfg.plugin_dir);
	cfg.plugin_dir = xstrdup(getenv("HQT_TEST_PLUGIN_DIR"));
	cr_assert_eq(registry_load(&reg, &cfg, &err), 0, "registry: %s", err);
	strv_clear(&warnings);
}

static void
teardown(void)
{
	registry_free(&reg);
	config_free(&cfg);
	rm_rf(root);
	free(root);
}

TestSuite(events, .init = setup, .fini = teardown);

static const struct harness *
harness(const char *name)
{
	const struct harness *h = registry_harness(&reg, name);

	cr_assert_not_null(h, "no harness %s", name);
	return h;
}

static enum hqt_status
parse(const char *harness_name, const char *line, char id[37])
{
	return harness_parse_event(harness(harness_name), line, strlen(line), id, NULL);
}

Test(events, claude_hooks_say_status_and_id)
{
	static const struct { const char *line; enum hqt_status want; } cases[] = {
		{ "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"" ID "\",\"source\":\"startup\"}",
		  HQT_STATUS_WAITING },
		{ "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"" ID "\",\"source\":\"compact\"}",
		  HQT_STATUS_UNKNOWN },
		{ "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID "\",\"prompt\":\"hi\"}",
		  HQT_STATUS_WORKING },
		{ "{\"hook_event_name\":\"PreToolUse\",\"session_id\":\"" ID "\",\"tool_name\":\"Bash\"}",
		  HQT_STATUS_WORKING },
		{ "{\"hook_event_name\":\"PostToolUse\",\"session_id\":\"" ID "\"}", HQT_STATUS_WORKING },
		{ "{\"hook_event_name\":\"PermissionRequest\",\"session_id\":\"" ID "\"}",
		  HQT_STATUS_NEEDS_INPUT },
		{ "{\"hook_event_name\":\"Notification\",\"session_id\":\"" ID
		  "\",\"notification_type\":\"permission_prompt\"}", HQT_STATUS_NEEDS_INPUT },
		{ "{\"hook_event_name\":\"Notification\",\"session_id\":\"" ID
		  "\",\"notification_type\":\"idle_prompt\"}", HQT_STATUS_WAITING },
		{ "{\"hook_event_name\":\"Notification\",\"session_id\":\"" ID
		  "\",\"notification_type\":\"auth_success\"}", HQT_STATUS_UNKNOWN },
		{ "{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\",\"stop_hook_active\":false}",
		  HQT_STATUS_WAITING },
		{ "{\"hook_event_name\":\"SessionEnd\",\"session_id\":\"" ID "\"}", HQT_STATUS_UNKNOWN },
	};
	char id[37];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_expect_eq(parse("claude", cases[i].line, id), cases[i].want, "%s", cases[i].line);
		cr_expect_str_eq(id, ID, "%s", cases[i].line);
	}
}

Test(events, codex_notify_says_turn_done_and_its_thread_not_the_title_thread)
{
	char id[37];

	cr_expect_eq(parse("codex", "{\"type\":\"agent-turn-complete\",\"thread-id\":\"" ID2
			   "\",\"turn-id\":\"1\",\"input-messages\":[\"e2e-slow go\"]}", id),
		     HQT_STATUS_WAITING);
	cr_expect_str_eq(id, ID2);
	cr_expect_eq(parse("codex", "{\"type\":\"agent-turn-complete\",\"thread-id\":\"" ID
			   "\",\"input-messages\":[\"Generate a concise, single-line task title "
			   "for this\"]}", id), HQT_STATUS_UNKNOWN);
	cr_expect_str_eq(id, "");
	cr_expect_eq(parse("codex", "{\"type\":\"approval-requested\",\"thread-id\":\"" ID "\"}", id),
		     HQT_STATUS_UNKNOWN);
	/* kiro and generic read no events */
	cr_expect_not(harness_has_events(harness("kiro")));
	cr_expect(harness_has_events(harness("claude")) && harness_has_events(harness("codex")));
}

/* Gemini CLI 0.61.0's hook payloads (tests/e2e), shrunk by hqt-event. */
Test(events, gemini_hooks_say_status_and_id)
{
	static const struct { const char *line; enum hqt_status want; } cases[] = {
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}",
		  HQT_STATUS_WAITING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"BeforeAgent\",\"prompt\":\"hi\"}",
		  HQT_STATUS_WORKING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"BeforeTool\"}", HQT_STATUS_WORKING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"Notification\","
		  "\"notification_type\":\"ToolPermission\"}", HQT_STATUS_NEEDS_INPUT },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"AfterTool\"}", HQT_STATUS_WORKING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"AfterAgent\","
		  "\"stop_hook_active\":false}", HQT_STATUS_WAITING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"SessionEnd\"}", HQT_STATUS_UNKNOWN },
	};
	char id[37];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_expect_eq(parse("gemini", cases[i].line, id), cases[i].want, "%s", cases[i].line);
		cr_expect_str_eq(id, ID, "%s", cases[i].line);
	}
	cr_expect_eq(parse("gemini", "{\"hook_event_name\":\"AfterAgent\",\"session_id\":\"x y\"}",
			   id), HQT_STATUS_WAITING);
	cr_expect_str_eq(id, "");
}

/* Qwen Code 0.24.4's hook payloads (Claude Code's schema; tests/e2e). */
Test(events, qwen_hooks_say_status_and_id)
{
	static const struct { const char *line; enum hqt_status want; } cases[] = {
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"SessionStart\",\"source\":\"startup\"}",
		  HQT_STATUS_WAITING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"UserPromptSubmit\"}", HQT_STATUS_WORKING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"PermissionRequest\","
		  "\"tool_name\":\"run_shell_command\"}", HQT_STATUS_NEEDS_INPUT },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"Notification\","
		  "\"notification_type\":\"permission_prompt\"}", HQT_STATUS_NEEDS_INPUT },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"PostToolUse\"}", HQT_STATUS_WORKING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"Stop\"}", HQT_STATUS_WAITING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"Notification\","
		  "\"notification_type\":\"idle_prompt\"}", HQT_STATUS_WAITING },
		{ "{\"session_id\":\"" ID "\",\"hook_event_name\":\"SessionEnd\"}", HQT_STATUS_UNKNOWN },
	};
	char id[37];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_expect_eq(parse("qwen", cases[i].line, id), cases[i].want, "%s", cases[i].line);
		cr_expect_str_eq(id, ID, "%s", cases[i].line);
	}
}

/* Copilot CLI 1.0.102's PascalCase hooks give Claude Code's payloads;
 * permissionRequest (camelCase) fires even under --yolo. */
Test(events, copilot_hooks_say_status_and_id)
{
	static const struct { const char *line; enum hqt_status want; } cases[] = {
		{ "{\"hook_event_name\":\"SessionStart\",\"session_id\":\"" ID "\",\"source\":\"new\"}",
		  HQT_STATUS_WORKING },
		{ "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID "\"}", HQT_STATUS_WORKING },
		{ "{\"hook_event_name\":\"Notification\",\"session_id\":\"" ID "\","
		  "\"notification_type\":\"permission_prompt\"}", HQT_STATUS_NEEDS_INPUT },
		{ "{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}", HQT_STATUS_WAITING },
	};
	char id[37];

	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		cr_expect_eq(parse("copilot", cases[i].line, id), cases[i].want, "%s", cases[i].line);
		cr_expect_str_eq(id, ID, "%s", cases[i].line);
	}
	cr_expect_eq(parse("copilot", "{\"hookName\":\"permissionRequest\",\"sessionId\":\"" ID
			   "\",\"toolName\":\"bash\"}", id), HQT_STATUS_UNKNOWN);
}

/* opencode 1.18.33's bus events, as hqt's bridge flattens them. */
Test(events, opencode_bridge_says_status)
{
	char id[37];

	cr_expect_eq(parse("opencode", "{\"type\":\"session.status\",\"session_id\":\"ses_a\","
			   "\"status\":\"busy\"}", id), HQT_STATUS_WORKING);
	cr_expect_str_eq(id, "");
	cr_expect_eq(parse("opencode", "{\"type\":\"permission.asked\",\"session_id\":\"ses_a\"}", id),
		     HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(parse("opencode", "{\"type\":\"session.idle\",\"session_id\":\"ses_a\"}", id),
		     HQT_STATUS_WAITING);
	cr_expect_eq(parse("opencode", "{\"type\":\"session.status\",\"status\":\"idle\"}", id),
		     HQT_STATUS_WAITING);
	cr_expect_eq(parse("opencode", "{\"type\":\"session.created\",\"session_id\":\"ses_a\"}", id),
		     HQT_STATUS_UNKNOWN);
}

Test(events, hostile_lines_say_nothing)
{
	static const char *const lines[] = {
		"",
		"{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"",      /* truncated */
		"{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}}",    /* trailing junk */
		"[\"hook_event_name\",\"Stop\"]",                               /* not an object */
		"{\"hook_event_name\":\"Sto\xff\",\"session_id\":\"" ID "\"}",  /* bad UTF-8 */
		"{\"hook_event_name\":\"\xc0\xaf\",\"session_id\":\"" ID "\"}", /* overlong */
		"{\"hook_event_name\":[\"Stop\"],\"session_id\":\"" ID "\"}",   /* wrong type */
		"{\"hook_event_name\":7}",
		"{\"hook_event_name\":\"Stop\",\"hook_event_name\":\"UserPromptSubmit\"}", /* dup */
		"{\"hook_event_name\":\"St\\u0000op\"}",
		"\"Stop\"",
		"null",
	};
	char id[37];

	for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
		cr_expect_eq(parse("claude", lines[i], id), HQT_STATUS_UNKNOWN, "%s", lines[i]);
		cr_expect_str_eq(id, "", "%s", lines[i]);
	}
	/* A NUL inside the line, which strlen would hide. */
	{
		static const char nul[] = "{\"hook_event_name\":\"Stop\"}\0junk";
		cr_expect_eq(harness_parse_event(harness("claude"), nul, sizeof nul - 1, id, NULL),
			     HQT_STATUS_UNKNOWN);
	}
	/* Huge: refused before any parse. */
	{
		size_t n = HARNESS_EVENT_MAX + 100;
		char *big = xmalloc(n + 1);

		memset(big, ' ', n);
		memcpy(big, "{\"hook_event_name\":\"Stop\",\"x\":\"", 31);
		memcpy(big + n - 2, "\"}", 2);
		big[n] = '\0';
		cr_expect_eq(parse("claude", big, id), HQT_STATUS_UNKNOWN);
		free(big);
	}
	/* Ids that are not UUID-like are never handed back (status still read). */
	{
		static const char *const bad[] = {
			"../../etc/passwd", ID "0", "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6", "--resume",
			"0b0e6a3c_9f0e_4c1a_8d5e_2f1c3b4a5d6e", "0b0e6a3c-9f0e-4c1a-8d5e-2f1c3b4a5d6g",
		};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			char *line = fmt("{\"hook_event_name\":\"Stop\",\"session_id\":\"%s\"}", bad[i]);
			cr_expect_eq(parse("claude", line, id), HQT_STATUS_WAITING, "%s", line);
			cr_expect_str_eq(id, "", "%s", line);
			free(line);
			line = fmt("{\"type\":\"agent-turn-complete\",\"thread-id\":\"%s\"}", bad[i]);
			(void)parse("codex", line, id);
			cr_expect_str_eq(id, "", "%s", line);
			free(line);
		}
		cr_expect_eq(parse("claude", "{\"hook_event_name\":\"Stop\",\"session_id\":42}", id),
			     HQT_STATUS_WAITING);
		cr_expect_str_eq(id, "");
	}
}

static char *
write_events(const char *text, size_t len)
{
	char *path = fmt("%s/events", root);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
	return path;
}

Test(events, the_newest_whole_line_decides_after_any_junk)
{
	struct events_seen ev;
	char *path;
	size_t junk = (size_t)3 << 20, off = 0;
	char *text = xmalloc(junk + 4096);
	static const char tail[] =
		"{\"hqt_at\":1000,\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID "\"}\n"
		"garbage \xff\xfe not json\n"
		"{\"hqt_at\":2000,\"hook_event_name\":\"Stop\",\"session_id\":\"" ID2 "\"}\n"
		"{\"hook_event_name\":\"UserPromptSu";   /* a writer not done: ignored */

	/* 3 MiB of one unterminated junk line, then events. */
	memset(text, 'x', junk);
	off = junk;
	text[off++] = '\n';
	memcpy(text + off, tail, sizeof tail - 1);
	off += sizeof tail - 1;
	path = write_events(text, off);
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_WAITING);
	cr_expect_str_eq(ev.id, ID2);
	cr_expect_eq(ev.at_ms, 2000);
	/* written before what the caller has already: not read */
	cr_assert_eq(events_latest(harness("claude"), path, time(NULL) + 100, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_UNKNOWN);
	cr_expect_str_eq(ev.id, "");
	free(path);

	/* Newer lines that say nothing (junk, an event without a time, a
	 * SessionEnd) are passed over: the newest line with a status and its
	 * own time decides; the id is the newest named. */
	{
		static const char t2[] =
			"{\"hqt_at\":1500,\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"" ID "\"}\n"
			"{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}\n"
			"{\"hqt_at\":1700,\"hook_event_name\":\"SessionEnd\",\"session_id\":\"" ID2 "\"}\n"
			"{\"hook_event_name\":1}\n"
			"{\"hqt_at\":\"9999\",\"hook_event_name\":\"Stop\"}\n";
		path = write_events(t2, sizeof t2 - 1);
		cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
		cr_expect_eq(ev.status, HQT_STATUS_WORKING);
		cr_expect_eq(ev.at_ms, 1500);
		cr_expect_str_eq(ev.id, ID2);
		free(path);
	}
	/* codex's own title thread notifies after the turn: the turn decides */
	{
		static const char t3[] =
			"{\"hqt_at\":3000,\"type\":\"agent-turn-complete\",\"thread-id\":\"" ID2 "\","
			"\"input-messages\":[\"e2e\"]}\n"
			"{\"hqt_at\":3050,\"type\":\"agent-turn-complete\",\"thread-id\":\"" ID "\","
			"\"input-messages\":[\"Generate a concise, single-line task title\"]}\n";
		path = write_events(t3, sizeof t3 - 1);
		cr_assert_eq(events_latest(harness("codex"), path, 0, &ev), 0);
		cr_expect_eq(ev.status, HQT_STATUS_WAITING);
		cr_expect_eq(ev.at_ms, 3000);
		cr_expect_str_eq(ev.id, ID2);
		free(path);
	}
	/* A file of nothing but one huge line. */
	memset(text, '{', junk);
	path = write_events(text, junk);
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_UNKNOWN);
	cr_expect_str_eq(ev.id, "");
	free(path);
	/* No file, a directory, a symlink (not followed). */
	path = fmt("%s/none", root);
	cr_expect_eq(events_latest(harness("claude"), path, 0, &ev), -1);
	free(path);
	cr_expect_eq(events_latest(harness("claude"), root, 0, &ev), -1);
	path = fmt("%s/link", root);
	cr_assert(symlink("/etc/passwd", path) == 0);
	cr_expect_eq(events_latest(harness("claude"), path, 0, &ev), -1);
	free(path);
	free(text);
}

Test(events, an_event_decides_while_newer_than_the_screen)
{
	const long long t = 1000;

	/* newer or in the same second as the last output: the event */
	cr_expect_eq(events_decide(HQT_STATUS_UNKNOWN, t, t, 2, HQT_STATUS_WAITING, t * 1000 + 10, 0),
		     HQT_STATUS_WAITING);
	cr_expect_eq(events_decide(HQT_STATUS_WORKING, t - 1, t, 2, HQT_STATUS_WAITING, t * 1000, 0),
		     HQT_STATUS_WAITING);
	cr_expect_eq(events_decide(HQT_STATUS_WAITING, t, t, 2, HQT_STATUS_NEEDS_INPUT, t * 1000 + 999,
				   0), HQT_STATUS_NEEDS_INPUT);
	/* the screen moved on since (claude's Esc fires no hook) */
	cr_expect_eq(events_decide(HQT_STATUS_WAITING, t, t, 2, HQT_STATUS_WORKING, (t - 1) * 1000, 0),
		     HQT_STATUS_WAITING);
	/* an unknown screen that moved on: recent output decides */
	cr_expect_eq(events_decide(HQT_STATUS_UNKNOWN, t, t, 2, HQT_STATUS_WAITING, (t - 3) * 1000, 0),
		     HQT_STATUS_WORKING);
	cr_expect_eq(events_decide(HQT_STATUS_UNKNOWN, t - 5, t, 2, HQT_STATUS_UNKNOWN, 0, 0),
		     HQT_STATUS_WAITING);
	/* an event from before this launch says nothing */
	cr_expect_eq(events_decide(HQT_STATUS_WORKING, t - 10, t, 2, HQT_STATUS_WAITING, (t - 5) * 1000,
				   t - 2), HQT_STATUS_WORKING);
}

/* The events directory of the database file db: <rt>/hqt/events/<dev>-<ino>. */
static char *
dir_of(const char *rt, const char *db)
{
	struct stat st;

	cr_assert(stat(db, &st) == 0, "%s", db);
	return fmt("%s/hqt/events/%llx-%llx", rt, (unsigned long long)st.st_dev,
		   (unsigned long long)st.st_ino);
}

Test(events, the_file_is_private_in_the_runtime_dir)
{
	char *rt = fmt("%s/run", root), *db = fmt("%s/hqt.db", root), *path, *want, *dir;
	struct stat st;

	cr_assert(mkdir(rt, 0700) == 0);
	setenv("XDG_RUNTIME_DIR", rt, 1);
	write_file(db, "", 0600);
	dir = dir_of(rt, db);
	path = events_path(db, 7, true);
	want = fmt("%s/7", dir);
	cr_assert_not_null(path);
	cr_expect_str_eq(path, want);
	cr_assert(stat(path, &st) == 0);
	cr_expect_eq(st.st_mode & 0777, 0600);
	cr_expect(S_ISREG(st.st_mode));
	free(want);
	want = fmt("%s/hqt/events", rt);
	cr_assert(stat(want, &st) == 0);
	cr_expect_eq(st.st_mode & 0777, 0700);
	cr_assert(stat(dir, &st) == 0);
	cr_expect_eq(st.st_mode & 0777, 0700);
	free(want);
	/* not emptied by a second make; emptied by a reset; gone after remove */
	write_file(path, "x\n", 0600);
	free(events_path(db, 7, true));
	cr_assert(stat(path, &st) == 0);
	cr_expect_eq(st.st_size, 2);
	events_reset(path);
	cr_assert(stat(path, &st) == 0);
	cr_expect_eq(st.st_size, 0);
	events_remove(db, 7);
	cr_expect_neq(access(path, F_OK), 0);
	free(path);
	/* a symlink planted at the file's name is not followed */
	{
		char *link = fmt("%s/8", dir), *target = fmt("%s/target", root);

		cr_assert(symlink(target, link) == 0);
		cr_expect_null(events_path(db, 8, true));
		cr_expect_neq(access(target, F_OK), 0);
		free(link);
		free(target);
	}
	/* a database that is no file has no events: the screen alone */
	cr_expect_null(events_path(":memory:", 7, true));
	cr_expect_null(events_path(NULL, 7, true));
	cr_expect_null(events_dir(rt, true));
	/* a runtime dir others can write is not ours: /tmp/hqt-<uid> then */
	chmod(rt, 0777);
	path = events_path(db, 9, false);
	want = fmt("/tmp/hqt-%u/events/%s/9", (unsigned)getuid(), strrchr(dir, '/') + 1);
	if (path != NULL)
		cr_expect_str_eq(path, want);
	free(path);
	free(want);
	unsetenv("XDG_RUNTIME_DIR");
	free(dir);
	free(db);
	free(rt);
}

/*
 * Two hqt instances of one user (another --db, another tmux server) both
 * have a session 1: their files differ, so one's events never reach the
 * other (issue 20 item 4).  One database reached by another name (a
 * symlink) is the same instance, and keeps its files when moved.
 */
Test(events, each_database_has_its_own_files)
{
	char *rt = fmt("%s/run", root), *a = fmt("%s/a.db", root), *b = fmt("%s/b.db", root);
	char *link = fmt("%s/link.db", root), *moved = fmt("%s/moved.db", root);
	char *pa, *pb, *pl, *pm;

	cr_assert(mkdir(rt, 0700) == 0);
	setenv("XDG_RUNTIME_DIR", rt, 1);
	write_file(a, "", 0600);
	write_file(b, "", 0600);
	cr_assert(symlink(a, link) == 0);
	pa = events_path(a, 1, true);
	pb = events_path(b, 1, true);
	cr_assert_not_null(pa);
	cr_assert_not_null(pb);
	cr_expect_str_neq(pa, pb);
	/* what A's session 1 is told does not reach B's */
	write_file(pa, "{\"hqt_at\":1,\"hook_event_name\":\"Stop\"}\n", 0600);
	{
		char *tb = slurp(pb);
		cr_expect_str_empty(tb, "B's file: %s", tb);
		free(tb);
	}
	pl = events_path(link, 1, false);
	cr_expect_str_eq(pl, pa);
	cr_assert(rename(a, moved) == 0);
	pm = events_path(moved, 1, false);
	cr_expect_str_eq(pm, pa);
	/* B's rm leaves A's file */
	events_remove(b, 1);
	cr_expect_neq(access(pb, F_OK), 0);
	cr_expect_eq(access(pa, F_OK), 0);
	unsetenv("XDG_RUNTIME_DIR");
	free(pa);
	free(pb);
	free(pl);
	free(pm);
	free(rt);
	free(a);
	free(b);
	free(link);
	free(moved);
}

/* Run hqt-event with argv and stdin; its stdout in *out. */
static int
helper(const char *file, const char *arg, const char *in, size_t in_len, char **out)
{
	char *exe = fmt("%s/bin/hqt-event", build_dir()), *outp = fmt("%s/stdout", root);
	int pin[2], status;
	pid_t pid;

	cr_assert(pipe(pin) == 0);
	pid = fork();
	cr_assert(pid >= 0);
	if (pid == 0) {
		int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(pin[0], 0);
		dup2(fd, 1);
		close(pin[1]);
		if (file != NULL)
			setenv(HQT_EVENT_FILE_ENV, file, 1);
		else
			unsetenv(HQT_EVENT_FILE_ENV);
		execl(exe, "hqt-event", arg, (char *)NULL);
		_exit(127);
	}
	close(pin[0]);
	if (in != NULL)
		for (size_t done = 0; done < in_len;) {
			ssize_t w = write(pin[1], in + done, in_len - done);
			if (w <= 0)
				break;
			done += (size_t)w;
		}
	close(pin[1]);
	cr_assert(waitpid(pid, &status, 0) == pid);
	*out = slurp(outp);
	free(exe);
	free(outp);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

Test(events, the_helper_appends_one_short_line_and_says_nothing)
{
	char *file = write_events("", 0), *out, *got;
	size_t big = (size_t)2 << 20;
	char *in = xmalloc(big + 256);
	int n;

	/* claude: a hook's payload with a 2 MiB prompt, on stdin */
	n = snprintf(in, 256, "{\"hook_event_name\":\"UserPromptSubmit\",\"session_id\":\"%s\","
		     "\"nested\":{\"a\":{\"b\":{\"c\":1}}},\"prompt\":\"", ID);
	memset(in + n, 'p', big);
	memcpy(in + n + big, "\"}", 3);
	cr_expect_eq(helper(file, NULL, in, strlen(in), &out), 0);
	cr_expect_str_eq(out, "");
	free(out);
	got = slurp(file);
	cr_assert_not_null(got);
	cr_expect_lt(strlen(got), 1024);
	cr_expect_eq(strchr(got, '\n'), got + strlen(got) - 1, "one line: %s", got);
	cr_expect_not_null(strstr(got, "\"hook_event_name\":\"UserPromptSubmit\""));
	cr_expect_not_null(strstr(got, "\"session_id\":\"" ID "\""));
	cr_expect_eq(strncmp(got, "{\"hqt_at\":", 10), 0, "not dated first: %s", got);
	free(got);

	/* codex: notify's JSON as the last argument */
	cr_expect_eq(helper(file, "{\"type\":\"agent-turn-complete\",\"thread-id\":\"" ID2 "\"}",
			    NULL, 0, &out), 0);
	free(out);
	{
		struct events_seen ev;
		cr_assert_eq(events_latest(harness("codex"), file, 0, &ev), 0);
		cr_expect_eq(ev.status, HQT_STATUS_WAITING);
		cr_expect_str_eq(ev.id, ID2);
	}
	/* not JSON, not an object, bad UTF-8: nothing written, still 0 */
	got = slurp(file);
	size_t before = strlen(got);
	free(got);
	static const char *const bad[] = { "{\"a\":", "[1,2]", "{\"a\":\"\xff\"}", "" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		cr_expect_eq(helper(file, NULL, bad[i], strlen(bad[i]), &out), 0);
		free(out);
	}
	got = slurp(file);
	cr_expect_eq(strlen(got), before);
	free(got);
	/* after a line someone left unfinished, its line is still its own */
	{
		FILE *f = fopen(file, "a");
		fputs("{\"hook_event_name\":\"UserPromptSu", f);
		fclose(f);
		cr_expect_eq(helper(file, NULL, "{\"hook_event_name\":\"Stop\"}", 26, &out), 0);
		free(out);
		struct events_seen ev;
		cr_assert_eq(events_latest(harness("claude"), file, 0, &ev), 0);
		cr_expect_eq(ev.status, HQT_STATUS_WAITING);
	}
	/* no variable, or a missing file: nothing created */
	cr_expect_eq(helper(NULL, NULL, "{}", 2, &out), 0);
	free(out);
	{
		char *missing = fmt("%s/missing", root);
		cr_expect_eq(helper(missing, NULL, "{}", 2, &out), 0);
		free(out);
		cr_expect_neq(access(missing, F_OK), 0);
		free(missing);
	}
	free(in);
	free(file);
}

/*
 * hqt-event never grows the file past its bound (1 MiB): the line that
 * would pass it starts the file again with the whole lines of its last
 * 64 KiB (what the reader reads), so the status and id read before are
 * read after, even when the new line says neither.  A file the session
 * grew itself (it can write the file directly) is brought back the same
 * way at the next event.
 */
#define HELPER_FILE_MAX ((size_t)1 << 20)

Test(events, the_helper_keeps_the_file_under_its_bound)
{
	static const char filler[] =
		"{\"hqt_at\":1000,\"hook_event_name\":\"PreToolUse\",\"session_id\":\"" ID "\"}\n";
	static const char newest[] =
		"{\"hqt_at\":2000,\"hook_event_name\":\"PermissionRequest\",\"session_id\":\"" ID2 "\"}\n";
	static const char quiet[] = "{\"hook_event_name\":\"SessionEnd\"}";
	size_t cap = HELPER_FILE_MAX + 4096, n = 0;
	char *text = xmalloc(cap), *out, *path;
	struct events_seen ev;
	struct stat st;

	/* Just under the bound: events written as the helper writes them,
	 * the newest a permission prompt under a new id. */
	while (n + sizeof filler - 1 + sizeof newest - 1 < HELPER_FILE_MAX - 40) {
		memcpy(text + n, filler, sizeof filler - 1);
		n += sizeof filler - 1;
	}
	memcpy(text + n, newest, sizeof newest - 1);
	n += sizeof newest - 1;
	path = write_events(text, n);
	/* far from the bound: appended as it is */
	cr_expect_eq(helper(path, quiet, NULL, 0, &out), 0);
	free(out);
	cr_assert(stat(path, &st) == 0);
	cr_expect_gt((size_t)st.st_size, n, "not appended");
	cr_expect_leq((size_t)st.st_size, HELPER_FILE_MAX);
	/* at the bound: never past it, whatever comes */
	for (int i = 0; i < 3; i++) {
		cr_expect_eq(helper(path, quiet, NULL, 0, &out), 0);
		free(out);
		cr_assert(stat(path, &st) == 0);
		cr_expect_leq((size_t)st.st_size, HELPER_FILE_MAX, "%lld bytes after call %d",
			      (long long)st.st_size, i);
	}
	cr_expect_leq((size_t)st.st_size, (size_t)EVENTS_TAIL + 1024, "not started again: %lld",
		      (long long)st.st_size);
	/* what the reader read before: the prompt decides, the id is kept */
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_NEEDS_INPUT);
	cr_expect_eq(ev.at_ms, 2000);
	cr_expect_str_eq(ev.id, ID2);
	{
		char *got = slurp(path);
		cr_expect_eq(strncmp(got, filler, sizeof filler - 1), 0, "not whole lines: %.80s", got);
		cr_expect_eq(got[strlen(got) - 1], '\n');
		free(got);
	}
	free(path);

	/* 8 MiB of one unfinished line, written straight into the file: the
	 * next event starts it again with that event alone. */
	memset(text, 'x', HELPER_FILE_MAX);
	path = write_events(text, HELPER_FILE_MAX);
	for (int i = 1; i < 8; i++) {
		int fd = open(path, O_WRONLY | O_APPEND);
		cr_assert_eq(write(fd, text, HELPER_FILE_MAX), (ssize_t)HELPER_FILE_MAX);
		close(fd);
	}
	cr_expect_eq(helper(path, NULL, "{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}",
			    strlen("{\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}"),
			    &out), 0);
	free(out);
	cr_assert(stat(path, &st) == 0);
	cr_expect_lt(st.st_size, 1024, "%lld bytes", (long long)st.st_size);
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_WAITING);
	cr_expect_str_eq(ev.id, ID);
	free(path);
	free(text);
}

/* The reader reads the tail, whatever the size: a 16 GiB file (sparse)
 * costs it what a small one does. */
Test(events, the_reader_reads_only_the_tail_of_a_huge_file)
{
	static const char line[] =
		"\n{\"hqt_at\":3000,\"hook_event_name\":\"Stop\",\"session_id\":\"" ID "\"}\n";
	char *path = fmt("%s/huge", root);
	off_t size = (off_t)16 << 30;
	struct events_seen ev;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert(fd >= 0);
	if (ftruncate(fd, size) != 0) {
		close(fd);
		free(path);
		cr_skip_test("no sparse file of 16 GiB here");
	}
	cr_assert_eq(pwrite(fd, line, sizeof line - 1, size), (ssize_t)(sizeof line - 1));
	close(fd);
	long long t0 = now_ms();
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_WAITING);
	cr_expect_str_eq(ev.id, ID);
	cr_expect_lt(now_ms() - t0, 1000, "%lld ms", now_ms() - t0);
	/* only zeros at its end: nothing, quickly */
	fd = open(path, O_WRONLY);
	cr_assert(fd >= 0);
	cr_assert(ftruncate(fd, size) == 0);
	close(fd);
	cr_assert_eq(events_latest(harness("claude"), path, 0, &ev), 0);
	cr_expect_eq(ev.status, HQT_STATUS_UNKNOWN);
	unlink(path);
	free(path);
}
